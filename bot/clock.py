"""Time as a dependency, so that every timed rule can be tested without waiting."""

from __future__ import annotations

import asyncio
import contextlib
from datetime import UTC, datetime
from typing import Protocol


class Clock(Protocol):
    def now(self) -> datetime:
        """The current moment, timezone-aware in UTC."""
        ...

    async def wait(self, event: asyncio.Event, seconds: float | None) -> None:
        """Return when `event` is set or `seconds` have passed (None: no limit)."""
        ...


class SystemClock:
    def now(self) -> datetime:
        return datetime.now(UTC)

    async def wait(self, event: asyncio.Event, seconds: float | None) -> None:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(event.wait(), seconds)
