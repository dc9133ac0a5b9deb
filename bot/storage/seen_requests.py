"""Signed requests remembered in the database for their window, shared by every
process on it (bot/adapters/slack/http.py's `Replays`)."""

from __future__ import annotations

from collections.abc import Callable

from sqlalchemy import bindparam, delete
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
        claim = (
            insert_for(engine.dialect.name, SeenRequest)
            .values(signature=bindparam("signature"), expires_at=bindparam("expires_at"))
            .on_conflict_do_nothing(index_elements=["signature"])
            .returning(SeenRequest.signature)
        )
        # Compiled once: every Slack request claims its signature before Bolt sees it.
        self._claim = str(claim.compile(dialect=engine.dialect))

    async def first_time(self, key: str, expires: float) -> bool:
        """Claim `key`: True for exactly one caller among all processes until
        it expires (a unique key and ON CONFLICT DO NOTHING; no read first)."""
        now = self._clock()
        if now >= self._next_prune:
            self._next_prune = now + PRUNE_EVERY
            async with self._engine.begin() as connection:
                await connection.execute(delete(SeenRequest).where(SeenRequest.expires_at <= now))
        if self._engine.dialect.name != "postgresql":
            async with self._engine.begin() as connection:
                claimed = await connection.exec_driver_sql(self._claim, (key, float(expires)))
                return claimed.first() is not None
        # One statement in its own transaction: one round trip, not three.
        async with self._engine.connect() as connection:
            autocommit = await connection.execution_options(isolation_level="AUTOCOMMIT")
            claimed = await autocommit.exec_driver_sql(self._claim, (key, float(expires)))
            return claimed.first() is not None
