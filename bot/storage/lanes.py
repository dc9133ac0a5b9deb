"""Two lanes to the database: members first, timer work behind them.

A click must be acknowledged within 3 s; a close's counting, a reveal or a
scheduled post can be a little late. Both took connections from the same
pool in arrival order, so a big close (its slices, its review cards) or a
thousand questions closing at once queued ahead of every click in every
other channel (on SQLite, whose one write connection is the pool, B's click
waited for each slice queued before it).

Work marked `in_background()` (the timer loop's jobs, a close's counting)
now takes a connection only while no member's work is waiting for one, and
at most `background_slots` of a pool's connections at a time; everything
else goes first. The gate is in the pool, so every store method is covered
without knowing about it. A task that already holds a background
connection takes its nested ones without waiting (no deadlock). A quarter
of the slots (at least one) stay open to timer work even while clicks
wait, queued behind them, so a steady stream of clicks never starves the
closes; on SQLite's one writer that one slot means a click waits for at
most the one piece of timer work in progress, and a close's slice gives
way at once (preemption.py).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import Iterator
from contextvars import ContextVar
from typing import Any

from sqlalchemy.pool import AsyncAdaptedQueuePool, ConnectionPoolEntry
from sqlalchemy.util import await_only

from bot.storage.preemption import Preemption

_BACKGROUND: ContextVar[bool] = ContextVar("quiz_background_work", default=False)


@contextlib.contextmanager
def in_background() -> Iterator[None]:
    """Mark the work done in this block (and the tasks it starts) as timer work."""
    token = _BACKGROUND.set(True)
    try:
        yield
    finally:
        _BACKGROUND.reset(token)


def is_background() -> bool:
    return _BACKGROUND.get()


class Lanes:
    """The gate of one pool: who may take a connection next."""

    def __init__(self, background_slots: int) -> None:
        self.background_slots = background_slots
        self.reserved = max(1, background_slots // 4)
        self.foreground_waiting = 0
        self.background_active = 0
        self._queue: deque[asyncio.Future[None]] = deque()
        # Background connections out, by the task that took them.
        self._holders: dict[asyncio.Task[Any] | None, int] = {}

    def holds(self, task: asyncio.Task[Any] | None) -> bool:
        return task is not None and task in self._holders

    async def background_turn(self, task: asyncio.Task[Any] | None) -> None:
        """Wait until no member's work waits for a connection and a background
        slot is free; the slot is `task`'s until `released`."""
        if not self._queue and self._free():
            self.background_active += 1
        else:
            future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self._queue.append(future)
            try:
                await future  # the waker counted the slot as taken
            except asyncio.CancelledError:
                if future.done() and not future.cancelled():
                    self._give_back()  # woken and cancelled at once: pass the slot on
                else:
                    self._queue.remove(future)
                raise
        self._holders[task] = self._holders.get(task, 0) + 1

    def released(self, task: asyncio.Task[Any] | None) -> None:
        left = self._holders.pop(task, 1) - 1
        if left:
            self._holders[task] = left
        self._give_back()

    def foreground_enters(self) -> None:
        self.foreground_waiting += 1

    def foreground_leaves(self) -> None:
        self.foreground_waiting -= 1
        self._wake()

    def _free(self) -> bool:
        if self.background_active >= self.background_slots:
            return False
        # A few connections are timer work's even while clicks wait: under a
        # steady stream of clicks (PostgreSQL's pool can be busy for minutes)
        # questions must still close. It queues behind the waiting clicks.
        return self.foreground_waiting == 0 or self.background_active < self.reserved

    def _give_back(self) -> None:
        self.background_active -= 1
        self._wake()

    def _wake(self) -> None:
        while self._queue and self._free():
            future = self._queue.popleft()
            if future.done():
                continue
            self.background_active += 1
            future.set_result(None)


class LanePool(AsyncAdaptedQueuePool):
    """SQLAlchemy's asyncio pool with the two lanes in front of its queue."""

    background_slots = 1
    # Log as SQLAlchemy's own pool does (under `sqlalchemy`, quiet by default).
    _sqla_logger_namespace = "sqlalchemy.pool.impl.AsyncAdaptedQueuePool"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.lanes = Lanes(self.background_slots)
        # Timer work running now that gives way to a member (preemption.py).
        self.preemptible: set[Preemption] = set()
        # The background connections out: pool entry's id -> the task that took it.
        self._background: dict[int, asyncio.Task[Any] | None] = {}

    def _do_get(self) -> ConnectionPoolEntry:
        # Runs in SQLAlchemy's greenlet inside the asking task, whose context
        # (and so its lane) it shares; await_only waits on the event loop.
        lanes = self.lanes
        if not is_background():
            if self.preemptible and not self.checkedin():
                for preemption in self.preemptible:
                    preemption.request()
            lanes.foreground_enters()
            try:
                return super()._do_get()
            finally:
                lanes.foreground_leaves()
        task = asyncio.current_task()
        if lanes.holds(task):  # nested in a background connection it holds
            return super()._do_get()
        await_only(lanes.background_turn(task))
        try:
            record = super()._do_get()
        except BaseException:
            lanes.released(task)
            raise
        self._background[id(record)] = task
        return record

    def _do_return_conn(self, record: ConnectionPoolEntry) -> None:
        super()._do_return_conn(record)
        if id(record) in self._background:
            self.lanes.released(self._background.pop(id(record)))


def lane_pool(background_slots: int) -> type[LanePool]:
    """A pool class whose background lane has `background_slots` connections
    (a class, as SQLAlchemy recreates a pool from its class after a dispose)."""
    return type(f"LanePool{background_slots}", (LanePool,), {"background_slots": background_slots})
