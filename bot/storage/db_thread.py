"""Running a piece of synchronous SQLite work in aiosqlite's own worker thread.

aiosqlite hands every call (cursor, execute, fetch, close, commit) to the
thread that owns the sqlite3 connection and waits for it: about a dozen such
hand-offs for one small answer transaction, each far dearer than the SQL. The
answer path runs its whole transaction as one hand-off instead. aiosqlite has
no public call for that, so this one function uses `Connection._execute`, the
queue every public call goes through (pyproject pins the versions it was
checked with; `tests/test_answers.py` runs the path on every backend).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from typing import Any, TypeVar

from sqlalchemy.ext.asyncio import AsyncConnection

T = TypeVar("T")


async def in_sqlite_thread(
    connection: AsyncConnection, work: Callable[[sqlite3.Connection], T]
) -> T:
    """Run `work(sqlite3_connection)` in the worker thread of the aiosqlite
    connection behind `connection` (checked out, so nothing else uses it)."""
    raw = await connection.get_raw_connection()
    driver: Any = raw.driver_connection
    result: T = await driver._execute(lambda: work(driver._conn))
    return result
