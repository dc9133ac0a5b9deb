"""The stores of every area, built over the database's two session factories.

`Repository` only holds them: each query lives in the store of its area
(channels, quizzes, posts, answers, schedules, scores, cards, submissions)."""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy.ext.asyncio import AsyncEngine

from bot.storage import forgetting
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
        self._writes, self._reads = writes, reads
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

    async def forget_member(self, platform: str, user_id: str, now: datetime | None = None) -> int:
        """forget-me and `quizmaster forget-user`, in one transaction: the
        member's answers (their stats go with them), review cards and
        submissions (accepted questions stay, credited to nobody), reports, and
        their id wherever it names who started, scheduled or reviewed something. Returns
        how many answers were deleted."""
        return await forgetting.forget_member(
            self._writes, self.database.dialect, platform, user_id, now or datetime.now(UTC)
        )

    async def forgotten_since(self, platform: str, user_id: str, since: datetime) -> bool:
        """True if the member used forget-me at or after `since` (within a day)."""
        return await forgetting.forgotten_since(self._reads, platform, user_id, since)

    @property
    def shared(self) -> bool:
        """Whether other processes may serve from this database too (PostgreSQL;
        a SQLite file serves one process)."""
        return self.database.dialect != "sqlite"

    @property
    def engine(self) -> AsyncEngine:
        """The write engine (migrations, checks and tests that run their own SQL)."""
        return self.database.writer
