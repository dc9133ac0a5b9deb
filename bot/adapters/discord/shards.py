"""Discord sharding: which shards this process runs, and the pace of identifying.

Discord splits a bot's servers over shards by `(guild_id >> 22) % shard_count`;
one process may hold some of them (`QUIZ_DISCORD_SHARD_IDS`) while others hold
the rest. Imports no discord.py: the settings check reads it."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass

AUTO = "auto"
# Discord allows one identify per rate-limit bucket every 5 seconds; a bot has
# `max_concurrency` buckets, and shard i identifies in bucket i % max_concurrency.
IDENTIFY_INTERVAL = 5.0


def parse_shard_count(text: str) -> int | None:
    """`auto` (None: ask the gateway) or a whole number of shards, at least 1."""
    cleaned = text.strip().lower()
    if cleaned in ("", AUTO):
        return None
    if not cleaned.isdigit() or int(cleaned) < 1:
        raise ValueError("must be a whole number of shards (1 or more) or 'auto'")
    return int(cleaned)


def parse_shard_ids(text: str) -> list[int] | None:
    """`0-3`, `4,5` or `0-1,6`: this process's shards, sorted; empty means all."""
    chosen: set[int] = set()
    for part in (piece.strip() for piece in text.split(",")):
        if not part:
            continue
        low, dash, high = part.partition("-")
        if not low.strip().isdigit() or (dash and not high.strip().isdigit()):
            raise ValueError(f"'{part}' is not a shard number or range such as 0-3")
        first, last = int(low), int(high) if dash else int(low)
        if last < first:
            raise ValueError(f"'{part}' is a range that runs backwards")
        chosen.update(range(first, last + 1))
    return sorted(chosen) or None


@dataclass(frozen=True)
class ShardPlan:
    """The shards of the whole bot (`count`, None until the gateway says) and
    those this process runs (`ids`, None for all of them)."""

    count: int | None = None
    ids: list[int] | None = None

    @property
    def registers_commands(self) -> bool:
        """One process syncs `/quiz`: the one holding shard 0 (every process
        syncing would race and spend the command rate limit N times)."""
        return self.ids is None or 0 in self.ids

    def problem(self) -> str | None:
        """Why these settings cannot work, once the count is known."""
        if self.count is not None and self.ids and self.ids[-1] >= self.count:
            return (
                f"QUIZ_DISCORD_SHARD_IDS names shard {self.ids[-1]}, but there are only "
                f"{self.count} shards (0-{self.count - 1}; QUIZ_DISCORD_SHARD_COUNT)"
            )
        return None


def shard_of(guild_id: int, count: int) -> int:
    return (guild_id >> 22) % count


class IdentifyPacer:
    """Waits before each shard identifies so that no rate-limit bucket
    identifies twice within `interval` (Discord closes the socket otherwise)."""

    def __init__(
        self,
        max_concurrency: int = 1,
        interval: float = IDENTIFY_INTERVAL,
        clock: Callable[[], float] | None = None,
    ) -> None:
        self.max_concurrency = max(1, max_concurrency)
        self.interval = interval
        self._clock = clock
        self._last: dict[int, float] = {}  # bucket → when it last identified
        self._locks: dict[int, asyncio.Lock] = {}

    def _now(self) -> float:
        return self._clock() if self._clock else asyncio.get_running_loop().time()

    async def wait(self, shard_id: int) -> None:
        bucket = shard_id % self.max_concurrency
        async with self._locks.setdefault(bucket, asyncio.Lock()):
            last = self._last.get(bucket)
            if last is not None:
                delay = last + self.interval - self._now()
                if delay > 0:
                    await asyncio.sleep(delay)
            self._last[bucket] = self._now()


# One process running every shard, as many as the gateway recommends.
ALL_SHARDS = ShardPlan()
