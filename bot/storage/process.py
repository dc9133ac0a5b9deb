"""This process's name in the database: the posts it makes carry it, so each
process closes and reveals its own posts on time and leaves the others' to
their makers unless those are late (their process died or lags)."""

from __future__ import annotations

import os
import socket
import uuid
from typing import Any

from sqlalchemy import Boolean, ColumnElement, Integer, String, and_, cast, false, func, select
from sqlalchemy.dialects.postgresql import OID
from sqlalchemy.sql import column, table

# New at every start: a restarted process takes its earlier posts over like any other's.
PROCESS = f"{socket.gethostname()[:12]}:{os.getpid()}:{uuid.uuid4().hex[:8]}"[:40]


# The advisory locks' first key: this program's (the second is the process's).
LIVENESS_CLASS = 0x51554958


def process_key(owner: Any) -> Any:
    """The second key of `owner`'s liveness lock, as PostgreSQL's lock table
    shows it (an oid)."""
    return cast(func.hashtext(owner), OID)


def owner_gone(owner: Any, dialect: str) -> ColumnElement[bool]:
    """Whether the process named `owner` is gone: on PostgreSQL it no longer
    holds its liveness lock (bot/storage/liveness.py), which the server drops
    when the process dies, kill -9 included. On SQLite a post's owner is never
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
    return and_(owner.is_not(None), owner != PROCESS, process_key(owner).not_in(held))


PG_LOCKS = table(
    "pg_locks",
    column("locktype", String),
    column("classid", OID),
    column("objid", OID),
    column("objsubid", Integer),
    column("granted", Boolean),
)
