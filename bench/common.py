"""Pieces the benchmarks share: an adapter with no network, and a throwaway
PostgreSQL schema to measure in."""

from __future__ import annotations

import asyncio
import sys
import threading
import time
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from sqlalchemy import text  # noqa: E402
from sqlalchemy.ext.asyncio import AsyncEngine  # noqa: E402

from bot.chat import Command, Interaction, MessageRef, OutMessage, Target  # noqa: E402
from bot.dialect import PLAIN  # noqa: E402
from bot.quiz.scheduler import DAILY  # noqa: E402
from bot.storage.checkpoints import Checkpoints  # noqa: E402
from bot.storage.db import Database  # noqa: E402
from bot.storage.repository import Repository  # noqa: E402


class NullAdapter:
    """Accepts posts without a network, so only the quiz core and database are
    timed; `latency` seconds per post stands in for a platform's round trip."""

    platform = "bench"
    dialect = PLAIN
    connected = True

    def __init__(self, latency: float = 0.0) -> None:
        self.latency = latency
        self.buttons: tuple[str, ...] = ()
        self.posts = 0

    async def send(self, target: Target, message: OutMessage) -> MessageRef:
        if self.latency:
            await asyncio.sleep(self.latency)
        if message.buttons:
            self.buttons = tuple(button.custom_id for button in message.buttons)
            self.posts += 1
        return MessageRef(target, "1")

    async def edit(self, ref: MessageRef, message: OutMessage) -> None:
        return None

    async def reply_private(self, event: Command | Interaction, message: OutMessage) -> None:
        return None

    async def display_names(self, target: Target, user_ids: list[str]) -> dict[str, str]:
        return {}


class HeldClock:
    """A clock held where the benchmark puts it (`moment`); waits return at once,
    so only the bot's own work is timed."""

    def __init__(self, moment: datetime) -> None:
        self.moment = moment

    def now(self) -> datetime:
        return self.moment

    async def wait(self, event: asyncio.Event, seconds: float | None) -> None:
        return None


async def schedule_daily(repository: Repository, channels: int, due: datetime) -> None:
    """Channels c0 … c{channels-1}, each with a daily question due at `due` (UTC)."""
    for number in range(channels):
        channel = await repository.channels.channel(Target("bench", "guild", f"c{number}"), due)
        await repository.schedules.set_schedule(
            channel.id,
            DAILY,
            at_time=due.strftime("%H:%M"),
            zone="UTC",
            days=list(range(7)),
            bank=None,
            tag=None,
            next_fire=due,
            created_by="bench",
            now=due,
        )


@asynccontextmanager
async def postgres_schema(url: str) -> AsyncIterator[str]:
    """A new, empty schema on the server at `url`, dropped afterwards."""
    import asyncpg
    from sqlalchemy.engine import make_url

    schema = f"bench_{uuid.uuid4().hex[:8]}"
    dsn = make_url(url).set(drivername="postgresql").render_as_string(False)
    admin = await asyncpg.connect(dsn)
    await admin.execute(f'CREATE SCHEMA "{schema}"')
    try:
        yield schema
    finally:
        await admin.execute(f'DROP SCHEMA "{schema}" CASCADE')
        await admin.close()


class WriterHolds:
    """Every hold of SQLite's write lock by the bot's one write connection,
    timed from its BEGIN IMMEDIATE to the end of the call to the connection's
    thread that committed or rolled it back (so the commit, and a checkpoint
    inside it, count). Seen through sqlite3's trace callback and a wrapper
    around aiosqlite's queue of calls (the queue every call goes through)."""

    def __init__(self) -> None:
        self.holds: list[float] = []
        self.cpu: list[float] = []  # the write thread's CPU time in each hold
        self.statements: list[list[str]] = []  # the statements of each hold, in order
        self._current: list[str] = []
        self._began: float | None = None
        self._began_cpu = 0.0
        self._ended = False
        self._lock = threading.Lock()
        # The aiosqlite connection watched and its own queue call, to put back.
        self._attached: tuple[Any, Any] | None = None

    async def attach(self, engine: AsyncEngine) -> None:
        async with engine.connect() as connection:
            raw = await connection.get_raw_connection()
            driver = raw.driver_connection
            driver._conn.set_trace_callback(self._trace)
            queued = driver._execute

            async def timed(fn, *args, **kwargs):  # type: ignore[no-untyped-def]
                def run():  # type: ignore[no-untyped-def]
                    try:
                        return fn(*args, **kwargs)
                    finally:
                        self._end_of_call()

                return await queued(run)

            driver._execute = timed
            self._attached = (driver, queued)

    def detach(self) -> None:
        """Stop watching (the work between two measured closes runs untraced)."""
        if self._attached is not None:
            driver, queued = self._attached
            driver._conn.set_trace_callback(None)
            driver._execute = queued
            self._attached = None

    def _trace(self, sql: str) -> None:
        if sql.startswith("BEGIN"):
            self._began = time.perf_counter()
            self._began_cpu = time.thread_time()
            self._current = []
        else:
            self._current.append(sql)
        if sql in ("COMMIT", "ROLLBACK") and self._began is not None:
            self._ended = True

    def _end_of_call(self) -> None:
        if self._ended and self._began is not None:
            with self._lock:
                self.holds.append(time.perf_counter() - self._began)
                self.cpu.append(time.thread_time() - self._began_cpu)
                self.statements.append(self._current)
            self._began, self._ended = None, False

    def take(self) -> tuple[list[float], list[float]]:
        """The holds since the last take: wall time and the thread's CPU time."""
        with self._lock:
            taken, cpu, self.holds, self.cpu = self.holds, self.cpu, [], []
            self.statements = []
        return taken, cpu

    def longest(self, count: int = 3) -> list[tuple[float, float, list[str]]]:
        """The `count` longest holds since the last take (by CPU time), with
        their wall time and statements."""
        with self._lock:
            found = zip(self.holds, self.cpu, self.statements, strict=True)
            ranked = sorted(found, key=lambda hold: hold[1], reverse=True)
        return ranked[:count]


async def bare_hold(path: str, rounds: int = 200) -> float:
    """The longest hold of SQLite's write lock by a bare aiosqlite connection
    running an empty write transaction (BEGIN IMMEDIATE, a SELECT, COMMIT,
    each awaited) `rounds` times: the floor the library sets on this machine now."""
    import aiosqlite

    longest = 0.0
    async with aiosqlite.connect(path, isolation_level=None) as bare:
        for _ in range(rounds):
            began = time.perf_counter()
            await bare.execute("BEGIN IMMEDIATE")
            await bare.execute("SELECT 1")
            await bare.execute("COMMIT")
            longest = max(longest, time.perf_counter() - began)
    return longest


def percentile(samples: list[float], share: float, empty: float = float("nan")) -> float:
    """The value below which `share` of `samples` lie (`empty` when there are none)."""
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(len(ordered) * share))] if ordered else empty


async def settle(engine: AsyncEngine) -> None:
    """What a live PostgreSQL database's autovacuum would have done long ago
    after a million rows arrived at once; otherwise it runs during the
    measurement and the figures show the bulk load, not the bot."""
    if engine.dialect.name != "postgresql":
        return
    async with engine.connect() as connection:
        autocommit = await connection.execution_options(isolation_level="AUTOCOMMIT")
        await autocommit.execute(text("VACUUM ANALYZE"))
        # And its checkpointer: the million rows' pages otherwise go to disk
        # during the timed calls (one run's stats p95 5.2 ms, 3.0 ms alone).
        await autocommit.execute(text("CHECKPOINT"))


async def run_checkpoints(database: Database) -> Checkpoints | None:
    """SQLite's WAL checkpoints in a thread of their own, as `quizmaster run`
    starts them (bot/app.py); None on PostgreSQL. Without them a benchmark
    measures a WAL that grows for the whole run: at 200 clicks/s through the
    fake Discord, one commit in about 220 then took 15-20 ms."""
    if database.sqlite_file is None:
        return None
    checkpoints = Checkpoints(database.sqlite_file)
    await checkpoints.start(database.writer)
    return checkpoints
