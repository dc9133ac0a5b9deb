"""Shared fixtures: a database on SQLite (always) and PostgreSQL (when
QUIZ_TEST_POSTGRES_URL is set), a fake clock, a recording adapter and a service."""

from __future__ import annotations

import os
import random
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import asyncpg
import pytest
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.chat import Target
from bot.quiz.bank import Catalog, load_banks
from bot.quiz.service import QuizService
from bot.storage.db import create_engine, upgrade
from bot.storage.repository import Repository
from tests.fakes.clock import FakeClock
from tests.fakes.recording import RecordingAdapter

ROOT = Path(__file__).resolve().parent.parent
POSTGRES_URL = os.environ.get("QUIZ_TEST_POSTGRES_URL")
SKIP_POSTGRES = "QUIZ_TEST_POSTGRES_URL is not set: PostgreSQL storage tests skipped"

CHANNEL = Target("test", "guild-1", "chan-1")
OTHER_CHANNEL = Target("test", "guild-1", "chan-2")


def _asyncpg_dsn(url: str) -> str:
    return make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)


@pytest.fixture(params=["sqlite", "postgresql"])
async def engine(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[AsyncEngine]:
    """A migrated, empty database; PostgreSQL tests each get a schema of their own."""
    if request.param == "sqlite":
        made = create_engine(f"sqlite+aiosqlite:///{tmp_path / 'quiz.db'}")
        await upgrade(made)
        yield made
        await made.dispose()
        return
    if not POSTGRES_URL:
        pytest.skip(SKIP_POSTGRES)
    schema = f"t_{uuid.uuid4().hex[:12]}"
    admin = await asyncpg.connect(_asyncpg_dsn(POSTGRES_URL))
    try:
        await admin.execute(f'CREATE SCHEMA "{schema}"')
        made = create_engine(POSTGRES_URL, search_path=schema)
        try:
            await upgrade(made)
            yield made
        finally:
            await made.dispose()
    finally:
        await admin.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
        await admin.close()


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def catalog() -> Catalog:
    found, problems = load_banks([ROOT / "questions"])
    assert not problems, problems
    return found


@pytest.fixture
def adapter() -> RecordingAdapter:
    return RecordingAdapter()


@pytest.fixture
def repository(engine: AsyncEngine) -> Repository:
    return Repository(engine)


@pytest.fixture
def service(
    repository: Repository, catalog: Catalog, clock: FakeClock, adapter: RecordingAdapter
) -> QuizService:
    made = QuizService(repository, catalog, clock, rng=random.Random(7))
    made.register(adapter)
    return made
