"""One PostgreSQL statement on asyncpg's own connection, outside SQLAlchemy.

A statement that needs no transaction around it (an INSERT … ON CONFLICT …
RETURNING that checks what it needs itself) is committed by the server on
its own. SQLAlchemy's Connection around it (the isolation level set and
reset, the execution context, the result) cost more CPU than the statement:
on the answer path about a third of a click (bench/click_cpu.py, and
bench/discord_clicks.py --instructions). asyncpg prepares each statement once
per connection and keeps it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy.ext.asyncio import AsyncEngine
from sqlalchemy.util import greenlet_spawn


async def fetch(engine: AsyncEngine, sql: str, *arguments: Any) -> Sequence[Sequence[Any]]:
    """The rows `sql` ($1, $2… for `arguments`) returns, run on a connection of
    `engine`'s pool (so it queues with the rest of the process's work)."""
    raw = await engine.raw_connection()
    driver: Any = raw.driver_connection
    try:
        rows: Sequence[Sequence[Any]] = await driver.fetch(sql, *arguments)
    except BaseException as error:
        # It may have lost the server or stopped half-way: not back to the
        # pool. Lost: so, likely, did the pool's other connections, which are
        # renewed as they are next taken, as SQLAlchemy does on a disconnect
        # (tests/test_answer_faults.py).
        if driver.is_closed():
            await greenlet_spawn(engine.sync_engine.pool._invalidate, raw, error)
        else:
            await greenlet_spawn(raw.invalidate, error)
        raise
    raw.close()  # no transaction was begun: nothing to roll back
    return rows
