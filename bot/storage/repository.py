"""The stores of every area, built over one shared session factory.

`Repository` only holds them: each query lives in the store of its area
(channels, quizzes, posts, answers, schedules, scores)."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncEngine

from bot.storage.answers import AnswerStore
from bot.storage.channels import ChannelStore
from bot.storage.db import session_factory
from bot.storage.posts import PostStore
from bot.storage.quizzes import QuizStore
from bot.storage.schedules import ScheduleStore
from bot.storage.scores import ScoreStore


class Repository:
    def __init__(self, engine: AsyncEngine) -> None:
        self.engine = engine
        sessions, dialect = session_factory(engine), engine.dialect.name
        self.channels = ChannelStore(sessions, dialect)
        self.quizzes = QuizStore(sessions, dialect)
        self.posts = PostStore(sessions, dialect)
        self.answers = AnswerStore(sessions, dialect)
        self.schedules = ScheduleStore(sessions, dialect)
        self.scores = ScoreStore(sessions, dialect)
