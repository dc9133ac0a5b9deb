"""Work an adapter has taken on from the platform and must finish before it
closes: handlers still running, and answer writes that outlived their handler.

Shared by the Slack and Discord adapters, so that SIGTERM drains both the same
way: stop taking new requests, then wait (bounded) for these to finish.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Iterator
from typing import Any

log = logging.getLogger(__name__)


class InFlight:
    def __init__(self, platform: str) -> None:
        self.platform = platform
        self._work: set[asyncio.Future[Any]] = set()

    def __len__(self) -> int:
        return len(self._work)

    def add(self, work: asyncio.Future[Any]) -> None:
        """Count `work` until it is done."""
        self._work.add(work)
        work.add_done_callback(self._work.discard)

    @contextlib.contextmanager
    def current(self) -> Iterator[None]:
        """Count the running task while inside the block (a handler may run on a
        long-lived task, such as a socket's reader, so the block is the measure)."""
        task = asyncio.current_task()
        if task is not None:
            self._work.add(task)
        try:
            yield
        finally:
            if task is not None:
                self._work.discard(task)

    async def wait(self, deadline: float) -> None:
        """Wait until nothing is in flight or the loop's clock reaches `deadline`."""
        loop = asyncio.get_running_loop()
        while self._work and (left := deadline - loop.time()) > 0:
            await asyncio.wait(set(self._work), timeout=left)
        if self._work:
            log.warning("%s: closing with %d request(s) unfinished", self.platform, len(self))
