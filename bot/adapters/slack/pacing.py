"""Pace posts per channel: Slack allows about one message per second per channel,
with short bursts. Different channels never wait for each other."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable

# Buckets kept before idle ones are dropped: a bucket that has filled up again
# is the same as a new one, so forgetting it changes no pace.
PRUNE_AFTER = 1000


class _Bucket:
    def __init__(self, burst: int, now: float) -> None:
        self.tokens = float(burst)
        self.updated = now
        self.lock = asyncio.Lock()


class ChannelPacer:
    """A token bucket per channel: `burst` posts at once, then `rate` per second."""

    def __init__(
        self,
        rate: float = 1.0,
        burst: int = 3,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self.rate = rate
        self.burst = burst
        self.clock = clock
        self.sleep = sleep
        self._buckets: dict[str, _Bucket] = {}
        self._prune_at = PRUNE_AFTER

    async def wait(self, channel: str) -> None:
        bucket = self._buckets.get(channel)
        if bucket is None:
            if len(self._buckets) >= self._prune_at:
                self._forget_idle()
            bucket = self._buckets[channel] = _Bucket(self.burst, self.clock())
        # The lock keeps one channel's posts in the order they asked.
        async with bucket.lock:
            while True:
                now = self.clock()
                bucket.tokens = min(
                    float(self.burst), bucket.tokens + (now - bucket.updated) * self.rate
                )
                bucket.updated = now
                if bucket.tokens >= 1.0:
                    bucket.tokens -= 1.0
                    return
                await self.sleep((1.0 - bucket.tokens) / self.rate)

    def __len__(self) -> int:
        return len(self._buckets)

    def _forget_idle(self) -> None:
        """Drop the buckets of channels that are full again and not in use."""
        now = self.clock()
        self._buckets = {
            channel: bucket
            for channel, bucket in self._buckets.items()
            if bucket.lock.locked()
            or bucket.tokens + (now - bucket.updated) * self.rate < self.burst
        }
        # Prune again only once as many new channels came: amortised O(1) per post.
        self._prune_at = max(PRUNE_AFTER, 2 * len(self._buckets))
