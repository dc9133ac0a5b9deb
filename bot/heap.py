"""Garbage collection for a long-running bot.

Start-up leaves a hundred thousand and more objects that live as long as the
process (discord.py, SQLAlchemy, Alembic, the question banks). CPython's full
collection walks every one of them: on a busy, shared machine one took
100–300 ms, and every click arriving meanwhile waited that long
(bench/discord_clicks.py). Freezing what start-up made takes it out of the
collector's walk, so a full collection only visits objects made since.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator


@contextlib.contextmanager
def start_up_frozen() -> Iterator[None]:
    """Inside the block, what exists on entry is not walked by the collector;
    objects it freed through reference counting are freed as ever."""
    gc.collect()  # what start-up left as garbage is freed, not frozen
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()
