"""How hard the bot tries to deliver a post, and how long any platform call may take.

Pure policy: no I/O. The service applies it; the numbers live here so the
README, the tests and the fault benchmark all read the same ones.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable
from datetime import timedelta
from typing import TypeVar

from bot.chat import DeliveryError

T = TypeVar("T")

# No single platform call (post, edit, name look-up) may hold up its channel
# longer than this; a call that takes longer counts as a passing failure.
PLATFORM_CALL_SECONDS = 10.0
# A post being sent is held by its sender this long; if the sender crashed,
# whoever sees the lease expire (the next start, another process) sends it.
PUBLISH_LEASE = timedelta(seconds=60)
# A reveal being edited is held this long before another caller may take it over.
REVEAL_LEASE = timedelta(seconds=60)
# With several processes on one database, each closes, reveals and follows up
# the posts it made; another's it takes over only this long after their time,
# so one process does each (its maker, unless that one died or lags far behind).
HANDOVER = timedelta(seconds=3)
# The next question of a live quiz is tried for about a minute, then the quiz ends.
LIVE_PUBLISH_WINDOW = timedelta(seconds=60)
LIVE_RETRY = (2.0, 15.0)  # first delay, longest delay (seconds)
# A daily question is tried until its schedule's grace window ends.
DAILY_RETRY = (5.0, 300.0)


def retry_delay(attempt: int, first: float, longest: float, rng: random.Random) -> timedelta:
    """Delay before try number `attempt + 1` (attempt ≥ 1 tries have failed):
    doubling from `first` up to `longest`, with jitter so that channels which
    failed together (one platform-wide 429) do not all come back together."""
    base = min(longest, first * 2 ** max(0, attempt - 1))
    return timedelta(seconds=base / 2 + rng.uniform(0, base / 2))


async def within_deadline(call: Awaitable[T], seconds: float | None = None) -> T:
    """Run a platform call; past the deadline (PLATFORM_CALL_SECONDS unless
    given) it is abandoned as a passing failure."""
    seconds = PLATFORM_CALL_SECONDS if seconds is None else seconds
    try:
        async with asyncio.timeout(seconds):
            return await call
    except TimeoutError:
        raise DeliveryError(f"no answer from the platform within {seconds:g} s") from None
