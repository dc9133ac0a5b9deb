"""Clocks for tests: one that only moves when a test moves it, and real time shifted."""

from __future__ import annotations

import asyncio
import contextlib
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


class ShiftedClock:
    """Real time moved forward by `offset`, so a test can put a whole minute
    (which is what schedules fire on) a moment away instead of waiting for one."""

    def __init__(self) -> None:
        self.offset = timedelta()

    def now(self) -> datetime:
        return datetime.now(UTC) + self.offset

    async def wait(self, event: asyncio.Event, seconds: float | None) -> None:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(event.wait(), seconds)

    def minute_due_in(self, seconds: float) -> datetime:
        """Jump forward (never back) to `seconds` before the next whole minute; returns it."""
        minute = (self.now() + timedelta(seconds=seconds + 60)).replace(second=0, microsecond=0)
        self.offset += minute - timedelta(seconds=seconds) - self.now()
        return minute
