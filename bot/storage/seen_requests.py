"""Signed requests remembered in the database for their window, shared by every
process on it (bot/adapters/slack/http.py's `Replays`)."""

from __future__ import annotations

from collections.abc import Callable

from sqlalchemy import delete
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.storage.models import SeenRequest
from bot.storage.sql import insert_for

# Expired rows are deleted at most this often, by whichever process claims next.
PRUNE_EVERY = 60.0


class SeenRequests:
    def __init__(self, engine: AsyncEngine, clock: Callable[[], float]) -> None:
        self._engine = engine
        self._clock = clock
        self._next_prune = 0.0

    async def first_time(self, key: str, expires: float) -> bool:
        """Claim `key`: True for exactly one caller among all processes until
        it expires (a unique key and ON CONFLICT DO NOTHING; no read first)."""
        now = self._clock()
        claim = (
            insert_for(self._engine.dialect.name, SeenRequest)
            .values(signature=key, expires_at=expires)
            .on_conflict_do_nothing(index_elements=["signature"])
        )
        async with self._engine.begin() as connection:
            if now >= self._next_prune:
                self._next_prune = now + PRUNE_EVERY
                await connection.execute(delete(SeenRequest).where(SeenRequest.expires_at <= now))
            claimed = (await connection.execute(claim)).rowcount == 1
        return claimed
