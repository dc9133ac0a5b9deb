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

import asyncio
import contextlib
import sqlite3
import weakref
from collections.abc import Callable
from typing import Any, TypeVar

from sqlalchemy import Connection, Engine, create_engine, event
from sqlalchemy.exc import OperationalError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, AsyncSession, async_sessionmaker
from sqlalchemy.orm import Session
from sqlalchemy.pool import StaticPool
from sqlalchemy.util import greenlet_spawn

from bot.storage.lanes import LanePool, is_background
from bot.storage.preemption import MAX_YIELDS, PAUSE, Preempted, Preemption, checkpoint

T = TypeVar("T")

# One synchronous engine per aiosqlite connection, made on its first use. Weakly
# keyed by the aiosqlite object: the engine holds only the sqlite3 connection,
# so when the pool drops the aiosqlite connection its engine goes too.
_SYNC_ENGINES: weakref.WeakKeyDictionary[Any, Engine] = weakref.WeakKeyDictionary()


async def in_sqlite_thread(
    connection: AsyncConnection, work: Callable[[sqlite3.Connection], T]
) -> T:
    """Run `work(sqlite3_connection)` in the worker thread of the aiosqlite
    connection behind `connection` (checked out, so nothing else uses it)."""
    return await _in_thread(connection, lambda driver: work(driver._conn))


async def on_pooled_connection(engine: AsyncEngine, work: Callable[[sqlite3.Connection], T]) -> T:
    """Run `work(sqlite3_connection)` as one hand-off on a connection of
    `engine`'s pool, with no SQLAlchemy Connection around it: on the answer
    path that wrapper (made, then closed in a greenlet) cost as much as the
    hand-off. `work` must end any transaction it begins.

    A member's work that finds the connection taken by timer work is handed
    to that work's thread to run next (preemption.py)."""
    handed = _hand_over(engine, work)
    if handed is not None:
        return await handed
    raw = await engine.raw_connection()
    driver: Any = raw.driver_connection
    try:
        result: T = await driver._execute(lambda: work(driver._conn))
    except BaseException:
        # Cancelled, the work may still be running in the thread: the pool's
        # reset, from a greenlet, queues its ROLLBACK behind it.
        await greenlet_spawn(raw.close)
        raise
    raw.close()  # the work ended its transaction: nothing to reset
    return result


def _hand_over(
    engine: AsyncEngine, work: Callable[[sqlite3.Connection], T]
) -> asyncio.Future[T] | None:
    pool: Any = engine.sync_engine.pool
    if is_background() or not isinstance(pool, LanePool) or pool.checkedin():
        return None
    for preemption in list(pool.preemptible):
        handed = preemption.hand_over(work)
        if handed is not None:
            return handed
    return None


async def _in_thread(connection: AsyncConnection, work: Callable[[Any], T]) -> T:
    """Run `work(aiosqlite_connection)` as one hand-off to its worker thread."""
    raw = await connection.get_raw_connection()
    driver: Any = raw.driver_connection
    result: T = await driver._execute(lambda: work(driver))
    return result


async def read_in_one_hop(engine: AsyncEngine, work: Callable[[Connection], T]) -> T:
    """Run `work(connection)` in one read-only transaction (one snapshot) and
    return what it returns: on SQLite as one hand-off to a read connection's
    thread, on PostgreSQL on an ordinary connection (`run_sync`)."""
    async with engine.connect() as connection:
        if engine.dialect.name != "sqlite":
            return await connection.run_sync(work)

        def transaction(driver: Any) -> T:
            with _sync_engine(driver, "BEGIN").connect() as sync, sync.begin():
                return work(sync)

        return await _in_thread(connection, transaction)


async def write_in_one_hop(
    sessions: async_sessionmaker[AsyncSession],
    work: Callable[[Session], T],
    *,
    preemptible: bool = False,
) -> T:
    """Run `work(session)` in one write transaction and return what it returns.

    On SQLite the whole transaction (BEGIN IMMEDIATE, the statements, COMMIT)
    runs in the write connection's worker thread, on a synchronous session
    over the same sqlite3 connection: one hand-off, whatever the statements.
    On PostgreSQL it is an ordinary transaction (`AsyncSession.run_sync`).

    `preemptible` timer work on SQLite rolls back and runs again when a
    member's work waits for the writer (preemption.py); `work` must then be
    a transaction that can simply be run again."""
    engine = sessions.kw["bind"]
    if engine.dialect.name != "sqlite":
        async with sessions.begin() as session:
            return await session.run_sync(work)
    yields = 0
    while True:
        preemption = Preemption(stoppable=yields < MAX_YIELDS) if preemptible else None
        try:
            return await _write_in_thread(engine, work, preemption)
        except Preempted as stopped:
            stopped.let_go()
            yields += 1
            await asyncio.sleep(PAUSE)


async def _write_in_thread(
    engine: AsyncEngine, work: Callable[[Session], T], preemption: Preemption | None
) -> T:
    pool: Any = engine.sync_engine.pool  # a LanePool (lanes.py)
    async with engine.connect() as connection:

        def transaction(driver: Any) -> T:
            sync = _sync_engine(driver, "BEGIN IMMEDIATE")
            watching = preemption.watching(driver._conn) if preemption else contextlib.nullcontext()
            try:
                with watching, Session(sync, expire_on_commit=False) as session, session.begin():
                    done = work(session)
                    if preemption is not None:
                        preemption.committing()
                    return done
            finally:
                if preemption is not None:
                    preemption.serve(driver._conn)  # members' work handed over meanwhile

        if preemption is None:
            return await _in_thread(connection, transaction)
        pool.preemptible.add(preemption)
        try:
            return await _in_thread(connection, transaction)
        finally:
            pool.preemptible.discard(preemption)
            # Work handed over that the thread will now never run (the
            # connection closed under it, or this task was cancelled before
            # the thread began): its members fail and store their own way.
            preemption.abandon()


def _sync_engine(driver: Any, begin: str) -> Engine:
    """A synchronous engine over the aiosqlite connection's own sqlite3
    connection, beginning its transactions with `begin`: "BEGIN IMMEDIATE"
    on the write connection, as the async write engine does (the write lock
    from the first statement, so a read-then-write cannot fail half-way),
    and a deferred "BEGIN" on a read connection (one snapshot, no lock)."""
    engine = _SYNC_ENGINES.get(driver)
    if engine is None:
        conn: sqlite3.Connection = driver._conn
        engine = create_engine("sqlite://", creator=lambda: conn, poolclass=StaticPool)

        @event.listens_for(engine, "begin")
        def _begin(connection: Connection) -> None:
            begin_sqlite(connection, begin)

        @event.listens_for(engine, "before_cursor_execute")
        def _before(*_: Any) -> None:
            checkpoint()  # a slice asked to give way stops before its next statement

        _SYNC_ENGINES[driver] = engine
    return engine


def begin_sqlite(connection: Connection, begin: str) -> None:
    """Issue `begin`; on a connection that came back to its pool still inside
    a transaction (a read cancelled half-way: read connections skip the pool's
    ROLLBACK on return, a hand-off per read), end that one first."""
    try:
        connection.exec_driver_sql(begin)
    except OperationalError as error:
        if "within a transaction" not in str(error):
            raise
        # SQLAlchemy may have rolled the failed statement's connection back itself.
        with contextlib.suppress(OperationalError):
            connection.exec_driver_sql("ROLLBACK")
        connection.exec_driver_sql(begin)
