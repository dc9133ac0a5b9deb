"""forget-me is complete and atomic: no column anywhere names the member after
it, and a failure part-way leaves the member as they were."""

from __future__ import annotations

import pytest
from sqlalchemy import String, select, text
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.storage.models import Base
from tests.conftest import Host

LEAVER = "leaver-7"


async def _rows_naming(engine: AsyncEngine, user_id: str) -> dict[str, int]:
    """How many rows of each table have `user_id` in some text column."""
    found: dict[str, int] = {}
    async with engine.connect() as connection:
        for table in Base.metadata.sorted_tables:
            for column in table.columns:
                if not isinstance(column.type, String):
                    continue
                count = len(
                    (await connection.execute(select(column).where(column == user_id))).all()
                )
                if count:
                    found[f"{table.name}.{column.name}"] = count
    return found


async def _history(host: Host) -> None:
    """The leaver starts a quiz (as a moderator), answers it, and schedules a daily."""
    await host.command("start", user=LEAVER, questions=1, seconds=10)
    await host.click(LEAVER, host.correct_letter())
    await host.command("stop", user=LEAVER)
    reply = await host.command("schedule", user=LEAVER, action="daily", time="10:00")
    assert "daily" in reply.text.lower(), reply.text


async def test_forget_me_leaves_no_column_naming_the_member(host: Host) -> None:
    await _history(host)
    engine = host.service.repository.engine
    before = await _rows_naming(engine, LEAVER)
    assert {"quizzes.started_by", "schedules.created_by", "answers.user_id"} <= set(before)
    await host.command("forget-me", user=LEAVER, moderator=False)
    assert await _rows_naming(engine, LEAVER) == {}
    # What they set up keeps running, credited to nobody.
    assert (await host.command("schedule", action="show")).text.count("10:00") >= 1


async def test_a_failure_part_way_through_forget_me_leaves_the_member_whole(
    host: Host,
) -> None:
    await _history(host)
    engine = host.service.repository.engine
    before = await _rows_naming(engine, LEAVER)
    dialect = engine.dialect.name
    async with engine.begin() as connection:  # the last step fails, as a full disk would
        if dialect == "sqlite":
            await connection.execute(
                text(
                    "CREATE TRIGGER refuse BEFORE UPDATE ON schedules "
                    "BEGIN SELECT RAISE(ABORT, 'disk full'); END"
                )
            )
        else:
            await connection.execute(
                text(
                    "CREATE FUNCTION refuse() RETURNS trigger AS $$ BEGIN "
                    "RAISE EXCEPTION 'disk full'; END $$ LANGUAGE plpgsql"
                )
            )
            await connection.execute(
                text("CREATE TRIGGER refuse BEFORE UPDATE ON schedules EXECUTE FUNCTION refuse()")
            )
    try:
        with pytest.raises(Exception, match="disk full"):
            await host.service.repository.forget_member("test", LEAVER)
        assert await _rows_naming(engine, LEAVER) == before
    finally:  # the PostgreSQL schema is shared by the tests that follow
        async with engine.begin() as connection:
            drop = "DROP TRIGGER refuse" + ("" if dialect == "sqlite" else " ON schedules")
            await connection.execute(text(drop))
            if dialect != "sqlite":
                await connection.execute(text("DROP FUNCTION refuse()"))
