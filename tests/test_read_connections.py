"""Reads and writes do not wait for each other: a leaderboard answers while a
write transaction is open, and a click is stored while a long read is open.

On SQLite this is the read-only connections beside the one write connection;
on PostgreSQL the pool's connections. Each test holds one side open for the
whole of the other; if they still shared one connection the other side could
not finish, and `unstalled` would fail the test instead of letting it hang."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from pathlib import Path
from typing import TypeVar

import pytest
from sqlalchemy import delete, func, select
from sqlalchemy.exc import OperationalError

from bot.storage.db import Database, open_database, upgrade
from bot.storage.models import Answer, CommunityScore
from tests.conftest import Host

T = TypeVar("T")

# Far longer than any of these steps takes; reached only if one waits for the other.
STALLED_AFTER_S = 30


async def unstalled(step: Awaitable[T]) -> T:
    async with asyncio.timeout(STALLED_AFTER_S):
        return await step


async def test_a_leaderboard_answers_while_a_write_transaction_is_open(
    host: Host, database: Database
) -> None:
    await host.start(questions=1, seconds=10)
    await host.answer("alice", correct=True)
    await host.close_current()
    assert await host.leaderboard(scope="server") == [("alice", 15)]

    async with database.writer.connect() as writing:
        held = await writing.begin()
        # Not committed: the leaderboard shows what was committed before it.
        await writing.execute(delete(CommunityScore))
        assert await unstalled(host.leaderboard(scope="server")) == [("alice", 15)]
        await held.rollback()


async def test_a_click_is_stored_while_a_long_read_is_open(host: Host, database: Database) -> None:
    await host.start(questions=1, seconds=60)
    letter = host.correct_letter()

    async with database.reader.connect() as reading, reading.begin():
        # A read in progress, as a leaderboard over many rows would be.
        counted = await reading.execute(select(func.count()).select_from(Answer))
        assert counted.scalar_one() == 0
        reply = await unstalled(host.click("bob", letter))
        assert reply.text.startswith("Locked in"), reply.text
        # The answer is committed: a second click is told the first one counts.
        again = await unstalled(host.click("bob", host.wrong_letter()))
        assert again.text.startswith(f"You already answered {letter}"), again.text


async def test_a_sqlite_file_is_read_through_read_only_connections(tmp_path: Path) -> None:
    """A write sent to the read side by mistake fails at once rather than
    competing with the write connection for SQLite's lock."""
    database = open_database(f"sqlite+aiosqlite:///{tmp_path / 'quiz.db'}")
    try:
        await upgrade(database.writer)
        assert database.reader is not database.writer
        async with database.reader.connect() as reading:
            mode = await reading.exec_driver_sql("PRAGMA journal_mode")
            assert mode.scalar_one() == "wal"
            with pytest.raises(OperationalError, match="readonly"):
                await reading.execute(delete(CommunityScore))
    finally:
        await database.dispose()
