"""The stores of every area, built over the database's two session factories.

`Repository` only holds them: each query lives in the store of its area
(channels, quizzes, posts, answers, schedules, scores, cards, submissions)."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncEngine

from bot.storage.answers import AnswerStore
from bot.storage.cards import CardStore
from bot.storage.channels import ChannelStore
from bot.storage.dashboard import DashboardStore
from bot.storage.db import Database, session_factory
from bot.storage.posts import PostStore
from bot.storage.quizzes import QuizStore
from bot.storage.reports import ReportStore
from bot.storage.schedules import ScheduleStore
from bot.storage.scores import ScoreStore
from bot.storage.submissions import SubmissionStore
from bot.storage.teams import TeamStore


class Repository:
    def __init__(self, database: Database) -> None:
        self.database = database
        writes, reads = session_factory(database.writer), session_factory(database.reader)
        dialect = database.dialect
        self.channels = ChannelStore(writes, reads, dialect)
        self.quizzes = QuizStore(writes, reads, dialect)
        self.posts = PostStore(writes, reads, dialect)
        self.answers = AnswerStore(writes, reads, dialect)
        self.schedules = ScheduleStore(writes, reads, dialect)
        self.scores = ScoreStore(writes, reads, dialect)
        self.cards = CardStore(writes, reads, dialect)
        self.submissions = SubmissionStore(writes, reads, dialect)
        self.dashboard = DashboardStore(writes, reads, dialect)
        self.teams = TeamStore(writes, reads, dialect)
        self.reports = ReportStore(writes, reads, dialect)

    async def forget_member(self, platform: str, user_id: str) -> int:
        """forget-me and `quizmaster forget-user`: the member's answers (their
        stats go with them), review cards and submissions (accepted questions
        stay, credited to nobody) and reports. Returns how many answers were deleted."""
        forgotten = await self.answers.forget_user(platform, user_id)
        await self.cards.forget(platform, user_id)
        await self.submissions.forget_author(platform, user_id)
        await self.reports.forget_reporter(platform, user_id)
        return forgotten

    @property
    def shared(self) -> bool:
        """Whether other processes may serve from this database too (PostgreSQL;
        a SQLite file serves one process)."""
        return self.database.dialect != "sqlite"

    @property
    def engine(self) -> AsyncEngine:
        """The write engine (migrations, checks and tests that run their own SQL)."""
        return self.database.writer
