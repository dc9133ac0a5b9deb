"""Write transactions run in one hand-off to SQLite's write thread
(`write_in_one_hop`; an ordinary transaction on PostgreSQL): all or nothing,
and taking turns with the async session's writes."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlalchemy import Connection, bindparam, func, insert, select
from sqlalchemy.ext.asyncio import AsyncEngine
from sqlalchemy.orm import Session

from bot.storage.db import SQLITE_READERS, open_database, session_factory, upgrade
from bot.storage.db_thread import in_sqlite_thread, read_in_one_hop, write_in_one_hop
from bot.storage.models import Channel
from bot.storage.prepared import PreparedRead


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


async def test_a_write_connection_returned_inside_a_transaction_is_rolled_back(
    tmp_path: Path,
) -> None:
    """The write pool skips its ROLLBACK on return when the transaction has
    ended (a hand-off per write); one left open still holds nothing: its rows
    are gone and the next write commits."""
    database = open_database(f"sqlite+aiosqlite:///{tmp_path / 'quiz.db'}")
    try:
        await upgrade(database.writer)
        async with database.writer.connect() as connection:

            def left_open(db: sqlite3.Connection) -> None:
                db.execute("BEGIN IMMEDIATE")
                db.execute(
                    "INSERT INTO channels (platform, community, channel, created_at)"
                    " VALUES ('test', 'guild-9', 'left-open', '2026-03-02 00:00:00')"
                )

            await in_sqlite_thread(connection, left_open)
        # Another process writes at once: no lock is left behind.
        other = sqlite3.connect(tmp_path / "quiz.db", timeout=0)
        with other:
            other.execute(
                "INSERT INTO channels (platform, community, channel, created_at)"
                " VALUES ('test', 'guild-9', 'other', '2026-03-02 00:00:00')"
            )
        other.close()
        sessions = session_factory(database.writer)
        await write_in_one_hop(
            sessions, lambda session: session.execute(insert(Channel).values(_channel("next")))
        )
        assert await _channels(database.reader) == ["next", "other"]
    finally:
        await database.dispose()


async def test_a_prepared_read_sees_the_latest_commit_on_a_connection_left_in_a_snapshot(
    tmp_path: Path,
) -> None:
    database = open_database(f"sqlite+aiosqlite:///{tmp_path / 'quiz.db'}")
    count = PreparedRead(
        select(func.count(Channel.id)).where(
            Channel.community == bindparam("community", type_=Channel.community.type)
        ),
        ["community"],
    )
    try:
        await upgrade(database.writer)
        async with database.reader.connect() as connection:
            raw = await connection.get_raw_connection()
            await raw.driver_connection.execute("BEGIN")  # an old snapshot, left open
            read = await raw.driver_connection.execute("SELECT count(*) FROM channels")
            assert await read.fetchall() == [(0,)]
        sessions = session_factory(database.writer)
        await write_in_one_hop(
            sessions, lambda session: session.execute(insert(Channel).values(_channel("new")))
        )
        for _ in range(2 * SQLITE_READERS):
            assert await count.rows(database.reader, {"community": "guild-9"}) == [(1,)]
    finally:
        await database.dispose()
