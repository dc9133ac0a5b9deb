"""Background work of the timer loop, one task per piece of work.

Each due close, reveal, delivery or schedule runs in its own task, so a call
that hangs in one channel never holds up another channel's timers, and in the
database's background lane (bot/storage/lanes.py), behind members' clicks. A
key names the work (a quiz, a post, a schedule): while its task runs, asking
for the same key again returns that task instead of starting the work twice.

At most CONCURRENT_JOBS pieces run at once; the rest wait their turn before
they begin. Ten thousand quizzes whose questions close in one tick otherwise
each got as far as their wait for the database, holding what they had read:
about 24 KB each, 220 MB of a 335 MB peak (bench/memory.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Coroutine, Hashable
from typing import Any

from bot.storage.lanes import in_background

log = logging.getLogger(__name__)

Work = Callable[[], Coroutine[Any, Any, None]]

# Enough to keep the database's background lane and the platforms' pacing
# busy; a call that hangs holds one of them, until its deadline, not all.
CONCURRENT_JOBS = 200


class Jobs:
    def __init__(self, limit: int = CONCURRENT_JOBS) -> None:
        self._running: dict[Hashable, asyncio.Task[None]] = {}
        self._turns = asyncio.Semaphore(limit)

    def start(self, key: Hashable, work: Work) -> asyncio.Task[None]:
        running = self._running.get(key)
        if running is not None and not running.done():
            return running
        task = asyncio.create_task(self._run(key, work), name=f"job {key}")
        self._running[key] = task
        task.add_done_callback(lambda done: self._forget(key, done))
        return task

    def running(self, key: Hashable) -> bool:
        running = self._running.get(key)
        return running is not None and not running.done()

    def __len__(self) -> int:
        return sum(1 for task in self._running.values() if not task.done())

    async def drain(self, seconds: float) -> None:
        """Let running work finish (up to `seconds`), then cancel the rest."""
        tasks = [task for task in self._running.values() if not task.done()]
        if not tasks:
            return
        _, late = await asyncio.wait(tasks, timeout=seconds)
        for task in late:
            task.cancel()
        for task in late:
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def _run(self, key: Hashable, work: Work) -> None:
        try:
            # Timer work takes database connections behind members' clicks.
            async with self._turns:
                with in_background():
                    await work()
        except Exception:
            log.exception("timed work %s failed; it is tried again on a later tick", key)

    def _forget(self, key: Hashable, task: asyncio.Task[None]) -> None:
        if self._running.get(key) is task:
            del self._running[key]
