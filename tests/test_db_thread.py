"""Write transactions run in one hand-off to SQLite's write thread
(`write_in_one_hop`; an ordinary transaction on PostgreSQL): all or nothing,
and taking turns with the async session's writes."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlalchemy import Connection, func, insert, select
from sqlalchemy.ext.asyncio import AsyncEngine
from sqlalchemy.orm import Session

from bot.storage.db import SQLITE_READERS, open_database, session_factory, upgrade
from bot.storage.db_thread import read_in_one_hop, write_in_one_hop
from bot.storage.models import Channel


def _channel(name: str) -> dict[str, object]:
    return {
        "platform": "test",
        "community": "guild-9",
        "channel": name,
        "created_at": datetime(2026, 3, 2, tzinfo=UTC),
    }


async def _channels(engine: AsyncEngine) -> list[str]:
    async with engine.connect() as connection:
        found = await connection.execute(
            select(Channel.channel).where(Channel.community == "guild-9").order_by(Channel.channel)
        )
        return list(found.scalars())


async def test_a_failing_one_hop_write_leaves_nothing_and_the_next_one_commits(
    engine: AsyncEngine,
) -> None:
    sessions = session_factory(engine)

    def half_done(session: Session) -> None:
        session.execute(insert(Channel).values(_channel("half")))
        raise RuntimeError("the work failed after its first statement")

    with pytest.raises(RuntimeError):
        await write_in_one_hop(sessions, half_done)

    def whole(session: Session) -> int:
        session.execute(insert(Channel).values(_channel("whole")))
        return int(session.execute(select(func.count()).select_from(Channel)).scalar_one())

    assert await write_in_one_hop(sessions, whole) >= 1
    assert await _channels(engine) == ["whole"]


async def test_one_hop_writes_and_session_writes_at_once_all_commit(engine: AsyncEngine) -> None:
    sessions = session_factory(engine)

    def one_hop(name: str) -> Callable[[Session], None]:
        def work(session: Session) -> None:
            session.execute(insert(Channel).values(_channel(name)))

        return work

    async def in_a_session(name: str) -> None:
        async with sessions.begin() as session:
            await session.execute(insert(Channel).values(_channel(name)))

    await asyncio.gather(
        *(write_in_one_hop(sessions, one_hop(f"hop-{n:02}")) for n in range(20)),
        *(in_a_session(f"session-{n:02}") for n in range(20)),
    )
    names = await _channels(engine)
    assert len(names) == 40
    assert names[:20] == [f"hop-{n:02}" for n in range(20)]


async def test_a_read_connection_returned_inside_a_transaction_serves_the_next_reads(
    tmp_path: Path,
) -> None:
    """Read connections skip the pool's ROLLBACK on return (a hand-off per
    read); one that comes back still inside a transaction, as after a read
    cancelled half-way, still serves every later read."""
    database = open_database(f"sqlite+aiosqlite:///{tmp_path / 'quiz.db'}")
    try:
        await upgrade(database.writer)

        def channels(connection: Connection) -> int:
            return int(connection.execute(select(func.count(Channel.id))).scalar_one())

        assert await read_in_one_hop(database.reader, channels) == 0
        async with database.reader.connect() as connection:
            raw = await connection.get_raw_connection()
            await raw.driver_connection.execute("BEGIN")  # left open on purpose
        for _ in range(2 * SQLITE_READERS):
            assert (
                await read_in_one_hop(
                    database.reader,
                    lambda c: c.execute(select(func.count(Channel.id))).scalar_one(),
                )
                == 0
            )
            async with database.reader.connect() as connection:
                assert (await connection.execute(select(func.count(Channel.id)))).scalar_one() == 0
    finally:
        await database.dispose()
