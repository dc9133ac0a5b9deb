"""This process's liveness lock on PostgreSQL.

A post being sent is held by its sender for a lease (a minute), so that a slow
sender is not doubled; but when the sender was killed mid-send, its channel
waited out the whole lease for its next question. Each process therefore holds
a session-level advisory lock named after it (`bot.storage.process`) on a
connection of its own, for its whole life. The server drops the lock the
moment the process's connection closes, kill -9 included, so the other
processes see at once that the posts it was sending are theirs to send
(`owner_gone`), and take them over on their next tick instead of a minute later.
If the lock's connection itself is lost (the database restarted), the lock is
not taken again: the others may then send a post this process is still
sending (Discord's nonce makes that harmless; on Slack it could show twice).
"""

from __future__ import annotations

import logging

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from bot.storage.process import LIVENESS_CLASS, PROCESS

log = logging.getLogger(__name__)


class Liveness:
    def __init__(self) -> None:
        self._connection: AsyncConnection | None = None

    async def start(self, engine: AsyncEngine) -> None:
        """Take this process's lock (PostgreSQL only; a SQLite file serves one process)."""
        if engine.dialect.name != "postgresql":
            return
        connection = await engine.connect()
        try:
            await connection.execute(
                select(func.pg_advisory_lock(LIVENESS_CLASS, func.hashtext(PROCESS)))
            )
            await connection.commit()  # the lock is the session's: it outlives the transaction
        except BaseException:
            await connection.close()
            raise
        self._connection = connection

    async def stop(self) -> None:
        """Let the lock go with its connection (a process that stops cleanly
        has finished its sends)."""
        connection, self._connection = self._connection, None
        if connection is None:
            return
        try:
            # The pool keeps the connection: the lock must not stay on it.
            await connection.execute(select(func.pg_advisory_unlock_all()))
            await connection.commit()
        except Exception as error:  # the server is gone: so is the lock
            log.debug("liveness lock not released: %s", error)
        await connection.close()
