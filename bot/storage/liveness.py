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
from typing import Any

from sqlalchemy import Boolean, ColumnElement, Integer, String, and_, cast, false, func, select
from sqlalchemy.dialects.postgresql import OID
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine
from sqlalchemy.sql import column, table

from bot.storage.process import PROCESS

log = logging.getLogger(__name__)


# The advisory locks' first key: this program's (the second is the process's).
LIVENESS_CLASS = 0x51554958


def process_key(owner: Any) -> Any:
    """The second key of `owner`'s liveness lock (an int4; PostgreSQL's lock
    table shows it as an oid)."""
    return func.hashtext(owner)


def owner_gone(owner: Any, dialect: str) -> ColumnElement[bool]:
    """Whether the process named `owner` is gone: on PostgreSQL it no longer
    holds its liveness lock, which the server drops when the process dies,
    kill -9 included. On SQLite a post's owner is never
    taken for gone: one process serves a file, and a restart waits for leases."""
    if dialect != "postgresql":
        return false()
    held = (
        select(PG_LOCKS.c.objid)
        .where(
            PG_LOCKS.c.locktype == "advisory",
            PG_LOCKS.c.classid == LIVENESS_CLASS,
            PG_LOCKS.c.objsubid == 2,
            PG_LOCKS.c.granted,
        )
        .scalar_subquery()
    )
    return and_(owner.is_not(None), owner != PROCESS, cast(process_key(owner), OID).not_in(held))


PG_LOCKS = table(
    "pg_locks",
    column("locktype", String),
    column("classid", OID),
    column("objid", OID),
    column("objsubid", Integer),
    column("granted", Boolean),
)


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
                select(func.pg_advisory_lock(LIVENESS_CLASS, process_key(PROCESS)))
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
