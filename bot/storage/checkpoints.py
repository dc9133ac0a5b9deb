"""SQLite's WAL checkpoints, moved out of the write path (docs/architecture.md, Storage).

By default SQLite checkpoints inside the commit that takes the WAL past 1,000
pages: that commit copies the WAL into the database file and fsyncs it while
it still holds the write lock, so whichever click or close commits then waits
for the disk, and so does every write queued behind it (a stall of 100 ms or
more). Here the write connection never checkpoints (`wal_autocheckpoint=0`),
and a connection of its own, in a thread of its own, runs a PASSIVE
checkpoint every `every` seconds: PASSIVE takes no lock that the writer or
the readers wait for, copying what no reader still needs while writes go on.
Once the whole WAL is copied, the next write starts it again from the top,
so it stays small.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sqlite3
from typing import Any

from sqlalchemy import event
from sqlalchemy.ext.asyncio import AsyncEngine

log = logging.getLogger(__name__)

CHECKPOINT_SECONDS = 1.0


class Checkpoints:
    """The background checkpoint task of one SQLite database file."""

    def __init__(self, path: str, every: float = CHECKPOINT_SECONDS) -> None:
        self.path = path
        self.every = every
        self.checkpoints = 0  # how many ran (for tests and benchmarks)
        self._task: asyncio.Task[None] | None = None
        self._stop = asyncio.Event()
        self._connection: sqlite3.Connection | None = None

    async def start(self, writer: AsyncEngine) -> None:
        """Stop the write connection's own checkpoints and start ours."""
        await _no_autocheckpoint(writer)
        self._connection = await asyncio.to_thread(self._open)
        self._task = asyncio.create_task(self._run(), name="sqlite-checkpoints")

    def _open(self) -> sqlite3.Connection:
        connection = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        connection.execute("PRAGMA busy_timeout=1000")
        return connection

    async def _run(self) -> None:
        while not self._stop.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stop.wait(), self.every)
            await self.checkpoint()

    async def checkpoint(self) -> None:
        """One PASSIVE checkpoint, in a worker thread (never the writer's)."""
        connection = self._connection
        if connection is None:
            return
        try:
            await asyncio.to_thread(connection.execute, "PRAGMA wal_checkpoint(PASSIVE)")
            self.checkpoints += 1
        except sqlite3.Error as error:  # a locked or busy file: the next one catches up
            log.warning("WAL checkpoint failed: %s", error)

    async def stop(self) -> None:
        """Stop the task after one last checkpoint."""
        self._stop.set()
        if self._task is not None:
            await self._task
        if self._connection is not None:
            await asyncio.to_thread(self._connection.close)
            self._connection = None


async def _no_autocheckpoint(writer: AsyncEngine) -> None:
    """Every write connection, the one open now and any the pool opens later,
    leaves checkpoints to the task."""

    @event.listens_for(writer.sync_engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        cursor = dbapi_connection.cursor()
        cursor.execute(NO_AUTOCHECKPOINT)
        cursor.close()

    async with writer.connect() as connection:
        await connection.exec_driver_sql(NO_AUTOCHECKPOINT)


NO_AUTOCHECKPOINT = "PRAGMA wal_autocheckpoint=0"
