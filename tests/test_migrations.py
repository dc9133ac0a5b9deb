"""The Alembic migrations build exactly the schema the models describe."""

from __future__ import annotations

from typing import Any

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import Connection, inspect, text
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.chat import Target
from bot.storage.db import Database, upgrade
from bot.storage.models import Base
from bot.storage.repository import Repository
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
