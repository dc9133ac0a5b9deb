"""The Alembic migrations build exactly the schema the models describe."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import JSON, Connection, MetaData, inspect, text
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.chat import Target
from bot.storage.db import Database, create_engine, upgrade
from bot.storage.models import Base
from bot.storage.repository import Repository
from tests.conftest import POSTGRES_URL, SKIP_POSTGRES, _drop_schemas, _new_schema
from tests.fakes.clock import FakeClock


def _differences(connection: Connection) -> list[Any]:
    context = MigrationContext.configure(connection, opts={"compare_type": True})
    return list(compare_metadata(context, Base.metadata))


async def differences(engine: AsyncEngine) -> list[Any]:
    async with engine.connect() as connection:
        return await connection.run_sync(_differences)


async def test_migrated_schema_matches_the_models(fresh_engine: AsyncEngine) -> None:
    # The fixture already ran `upgrade`.
    assert await differences(fresh_engine) == []


async def test_the_comparison_notices_a_drifted_schema(fresh_engine: AsyncEngine) -> None:
    """A guard on the test above: a real difference is reported."""
    async with fresh_engine.begin() as connection:
        await connection.execute(text("DROP INDEX ix_answers_user"))
    found = await differences(fresh_engine)
    assert any("ix_answers_user" in repr(difference) for difference in found), found


async def test_upgrading_twice_is_harmless_and_keeps_data(fresh_engine: AsyncEngine) -> None:
    repository = Repository(Database(fresh_engine, fresh_engine))
    clock = FakeClock()
    target = Target("test", "guild-1", "chan-1")
    before = await repository.channels.channel(target, clock.now())

    await upgrade(fresh_engine)
    await upgrade(fresh_engine)

    assert await differences(fresh_engine) == []
    after = await repository.channels.channel(target, clock.now())
    assert after.id == before.id
    async with fresh_engine.connect() as connection:
        versions = (await connection.execute(text("SELECT version_num FROM alembic_version"))).all()
        tables = await connection.run_sync(lambda sync: set(inspect(sync).get_table_names()))
    assert len(versions) == 1
    assert set(Base.metadata.tables) <= tables


# -- upgrading a database that holds a community's history ------------------------

_HISTORY = ("channels", "quizzes", "posts", "answers")


def _a_value(column: Any) -> Any:
    """A value of the column's type for a row of its own (foreign keys point at
    the first row of the table they name, inserted before)."""
    if column.foreign_keys:
        return 1
    if isinstance(column.type, JSON):
        return [0, 1]
    python = column.type.python_type
    if python is bool:
        return True
    if python is int:
        return 1
    if python is str:
        return "x"
    if python is datetime:
        return datetime(2026, 1, 5, 9, tzinfo=UTC)
    raise AssertionError(f"no sample for {column!r}")


def _fill_history(connection: Connection) -> dict[str, int]:
    """A channel, a quiz, a post and an answer, in whatever shape the schema has."""
    tables = MetaData()
    tables.reflect(connection, only=list(_HISTORY))
    for name in _HISTORY:
        table = tables.tables[name]
        row = {c.name: _a_value(c) for c in table.columns if not (c.primary_key and c.name == "id")}
        connection.execute(table.insert().values(**row))
    return _counts(connection)


def _counts(connection: Connection) -> dict[str, int]:
    return {
        name: int(connection.execute(text(f"SELECT count(*) FROM {name}")).scalar_one())
        for name in _HISTORY
    }


@pytest.fixture(params=["sqlite", "postgresql"])
async def old_database(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[str]:
    """Where a database of an older release lives: a SQLite URL or a PostgreSQL schema."""
    if request.param == "sqlite":
        yield f"sqlite+aiosqlite:///{tmp_path / 'old.db'}"
        return
    if not POSTGRES_URL:
        pytest.skip(SKIP_POSTGRES)
    schema = await _new_schema()
    try:
        yield schema
    finally:
        await _drop_schemas([schema])


@pytest.mark.parametrize("release", ["0001", "0002", "0004", "0007", "0013"])
async def test_upgrading_from_an_older_release_keeps_every_quiz_post_and_answer(
    old_database: str, release: str
) -> None:
    # Rebuilding `channels` on SQLite (0003) used to cascade into the tables
    # that point at it and delete every quiz, post and answer.
    if old_database.startswith("sqlite"):
        engine = create_engine(old_database)
    else:
        assert POSTGRES_URL
        engine = create_engine(POSTGRES_URL, search_path=old_database)
    try:
        await upgrade(engine, release)
        async with engine.begin() as connection:
            before = await connection.run_sync(_fill_history)
        assert before == dict.fromkeys(_HISTORY, 1)

        await upgrade(engine)

        async with engine.connect() as connection:
            assert await connection.run_sync(_counts) == before
        assert await differences(engine) == []
    finally:
        await engine.dispose()
