"""Garbage collection for a long-running bot.

Start-up leaves a hundred thousand and more objects that live as long as the
process (discord.py, SQLAlchemy, Alembic, the question banks). CPython's full
collection walks every one of them: on a busy, shared machine one took
100–300 ms, and every click arriving meanwhile waited that long
(bench/discord_clicks.py). Freezing what start-up made takes it out of the
collector's walk, so a full collection only visits objects made since.

The youngest generation is collected every YOUNG allocations, not CPython's
700: a burst of 10,000 clicks keeps 10,000 tasks alive at once, and at 700
the collector ran about 360 times in it (two of them full passes of ~38 ms
each), 110 ms in a 490 ms burst (bench/answers.py, SQLite). At 50,000 it ran
5 times, 22 ms in all, the longest pass ~5 ms. Cycles are rare once start-up
is frozen; what waits longer to be freed is a few megabytes at most.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator

YOUNG = 50_000


@contextlib.contextmanager
def start_up_frozen() -> Iterator[None]:
    """Inside the block, what exists on entry is not walked by the collector
    and the young are collected every YOUNG allocations; objects freed through
    reference counting are freed as ever."""
    gc.collect()  # what start-up left as garbage is freed, not frozen
    gc.freeze()
    thresholds = gc.get_threshold()
    gc.set_threshold(YOUNG)
    try:
        yield
    finally:
        gc.set_threshold(*thresholds)
        gc.unfreeze()
