"""Giving the event loop a turn from inside a transaction's Python work.

On PostgreSQL a transaction run by `write_in_one_hop` or `read_in_one_hop`
does its Python on the event loop, in SQLAlchemy's greenlet: between two of
its statements nothing else runs. Most such stretches are short, but a close
works out a slice's review cards or ranks a post's answerers in one, and every
other channel's clicks waited for it, 3-28 ms at a time (bench/answers.py).
Work that goes over many rows does it through `LoopTurns.over`: every BUDGET
of Python it lets the loop run once, the transaction still open.

On SQLite the same work runs in the database's own thread, beside the loop,
and `over` only hands out the rows. (Letting go of the GIL there every BUDGET
was tried: the close took 30 % longer and the other channel's clicks were
no faster.)
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterable, Iterator
from typing import TypeVar

from sqlalchemy.util import await_
from sqlalchemy.util.concurrency import in_greenlet

T = TypeVar("T")

# Python run between two turns. B's clicks in bench/answers.py waited up to
# this long for each step of a close; much less costs the close more turns.
BUDGET = 0.0005


class LoopTurns:
    """Made where a transaction's work begins; `over` then hands out its rows."""

    def __init__(self) -> None:
        self._on_loop = in_greenlet()
        self._due = time.perf_counter() + BUDGET

    def over(self, rows: Iterable[T]) -> Iterator[T]:
        """`rows`, one at a time, letting the loop run whenever BUDGET is spent."""
        if not self._on_loop:
            yield from rows
            return
        for row in rows:
            yield row
            if time.perf_counter() >= self._due:
                await_(asyncio.sleep(0))
                self._due = time.perf_counter() + BUDGET
