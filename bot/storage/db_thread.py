"""Running a piece of synchronous SQLite work in aiosqlite's own worker thread.

aiosqlite hands every call (cursor, execute, fetch, close, commit) to the
thread that owns the sqlite3 connection and waits for it, and each result
then waits its turn on the event loop. A transaction of a few statements
makes a dozen or more such round trips while it holds SQLite's only write
lock: on a busy loop (a fan-out of thousands of daily posts) each costs about
a millisecond, and the lock is held twenty times longer than the SQL needs.
The hot write paths run their whole transaction as one hand-off instead.
aiosqlite has no public call for that, so this module uses
`Connection._execute`, the queue every public call goes through (pyproject
pins the versions it was checked with; the tests run these paths on SQLite
and PostgreSQL alike).
"""

from __future__ import annotations

import sqlite3
import weakref
from collections.abc import Callable
from typing import Any, TypeVar

from sqlalchemy import Connection, Engine, create_engine, event
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession, async_sessionmaker
from sqlalchemy.orm import Session
from sqlalchemy.pool import StaticPool

T = TypeVar("T")

# One synchronous engine per aiosqlite connection, made on its first use and
# gone with it (keyed by the aiosqlite object, which outlives nothing here).
_SYNC_ENGINES: weakref.WeakKeyDictionary[Any, Engine] = weakref.WeakKeyDictionary()


async def in_sqlite_thread(
    connection: AsyncConnection, work: Callable[[sqlite3.Connection], T]
) -> T:
    """Run `work(sqlite3_connection)` in the worker thread of the aiosqlite
    connection behind `connection` (checked out, so nothing else uses it)."""
    raw = await connection.get_raw_connection()
    driver: Any = raw.driver_connection
    result: T = await driver._execute(lambda: work(driver._conn))
    return result


async def write_in_one_hop(
    sessions: async_sessionmaker[AsyncSession], work: Callable[[Session], T]
) -> T:
    """Run `work(session)` in one write transaction and return what it returns.

    On SQLite the whole transaction (BEGIN IMMEDIATE, the statements, COMMIT)
    runs in the write connection's worker thread, on a synchronous session
    over the same sqlite3 connection: one hand-off, whatever the statements.
    On PostgreSQL it is an ordinary transaction (`AsyncSession.run_sync`)."""
    engine = sessions.kw["bind"]
    if engine.dialect.name != "sqlite":
        async with sessions.begin() as session:
            return await session.run_sync(work)
    async with engine.connect() as connection:
        raw = await connection.get_raw_connection()
        driver: Any = raw.driver_connection

        def transaction() -> T:
            engine = _sync_engine(driver)
            with Session(engine, expire_on_commit=False) as session, session.begin():
                return work(session)

        result: T = await driver._execute(transaction)
        return result


def _sync_engine(driver: Any) -> Engine:
    engine = _SYNC_ENGINES.get(driver)
    if engine is None:
        conn: sqlite3.Connection = driver._conn
        engine = create_engine("sqlite://", creator=lambda: conn, poolclass=StaticPool)

        @event.listens_for(engine, "begin")
        def _take_the_write_lock(connection: Connection) -> None:
            # As the async write engine does (bot/storage/db.py): the write lock
            # from the first statement, so a read-then-write cannot fail half-way.
            connection.exec_driver_sql("BEGIN IMMEDIATE")

        _SYNC_ENGINES[driver] = engine
    return engine
