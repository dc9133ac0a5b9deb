"""Signed requests remembered in the database for their window, shared by every
process on it (bot/adapters/slack/http.py's `Replays`).

Every Slack request claims its signature before Bolt sees it. Claims that
arrive while one is in flight share the next statement, as answers do
(answer_writer.py): a burst of a thousand clicks then needs one connection
and a handful of round trips, not a thousand transactions that empty the
pool and make it open (and close) connections of its own."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from sqlalchemy import delete
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.storage import autocommit
from bot.storage.models import SeenRequest
from bot.storage.sql import insert_for

# Expired rows are deleted at most this often, by whichever process claims next.
PRUNE_EVERY = 60.0

_CLAIM_ALL = """
INSERT INTO seen_requests (signature, expires_at)
SELECT * FROM unnest($1::varchar[], $2::float8[])
ON CONFLICT (signature) DO NOTHING
RETURNING signature
"""

Claim = tuple[str, float, "asyncio.Future[bool]"]


class SeenRequests:
    def __init__(self, engine: AsyncEngine, clock: Callable[[], float]) -> None:
        self._engine = engine
        self._clock = clock
        self._next_prune = 0.0
        self._pending: list[Claim] = []
        self._flusher: asyncio.Task[None] | None = None

    async def first_time(self, key: str, expires: float) -> bool:
        """Claim `key`: True for exactly one caller among all processes until
        it expires (a unique key and ON CONFLICT DO NOTHING; no read first)."""
        future: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        self._pending.append((key, expires, future))
        if self._flusher is None or self._flusher.done():
            self._flusher = asyncio.create_task(self._flush(), name="replay-claims")
        return await future

    async def _flush(self) -> None:
        while self._pending:
            batch, self._pending = self._pending, []
            try:
                claimed = await self._claim(batch)
            except Exception as error:
                for _, _, future in batch:
                    if not future.done():
                        future.set_exception(error)
                continue
            given: set[str] = set()
            for key, _, future in batch:
                # The same request twice in one batch: only the first acts.
                first = key in claimed and key not in given
                given.add(key)
                if not future.done():
                    future.set_result(first)

    async def _claim(self, batch: list[Claim]) -> set[str]:
        """The keys of `batch` no process had claimed, now claimed."""
        now = self._clock()
        if now >= self._next_prune:
            self._next_prune = now + PRUNE_EVERY
            async with self._engine.begin() as connection:
                await connection.execute(delete(SeenRequest).where(SeenRequest.expires_at <= now))
        if self._engine.dialect.name == "postgresql":
            # One statement, one round trip, no transaction around it.
            keys = [key for key, _, _ in batch]
            expiries = [float(expires) for _, expires, _ in batch]
            return {
                key for (key,) in await autocommit.fetch(self._engine, _CLAIM_ALL, keys, expiries)
            }
        claimed: set[str] = set()
        async with self._engine.begin() as connection:
            for key, expires, _ in batch:
                claim = (
                    insert_for(self._engine.dialect.name, SeenRequest)
                    .values(signature=key, expires_at=expires)
                    .on_conflict_do_nothing(index_elements=["signature"])
                )
                if (await connection.execute(claim)).rowcount == 1:
                    claimed.add(key)
        return claimed
