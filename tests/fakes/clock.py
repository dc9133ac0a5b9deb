"""A clock that only moves when a test moves it."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta


class FakeClock:
    def __init__(self, start: datetime | None = None) -> None:
        self._now = start or datetime(2026, 3, 2, 9, 0, tzinfo=UTC)  # a Monday
        self._moved = asyncio.Event()

    def now(self) -> datetime:
        return self._now

    def set(self, moment: datetime) -> None:
        self._now = moment.astimezone(UTC)
        self._moved.set()

    def advance(self, seconds: float) -> None:
        self.set(self._now + timedelta(seconds=seconds))

    async def wait(self, event: asyncio.Event, seconds: float | None) -> None:
        deadline = None if seconds is None else self._now + timedelta(seconds=seconds)
        while not event.is_set() and (deadline is None or self._now < deadline):
            self._moved.clear()
            waiters = {
                asyncio.ensure_future(event.wait()),
                asyncio.ensure_future(self._moved.wait()),
            }
            _, pending = await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED)
            for task in pending:
                task.cancel()
