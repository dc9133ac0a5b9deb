"""Waiting in tests for something a fake server records."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable
from typing import Any


async def wait_until(
    check: Callable[[], Any], changed: asyncio.Event, within: float, what: str
) -> Any:
    """Return `check()` once it is truthy, looking again whenever `changed` is
    set (the fake records something) and at least every 0.1 s."""
    deadline = time.monotonic() + within
    while True:
        result = check()
        if result:
            return result
        left = deadline - time.monotonic()
        if left <= 0:
            raise AssertionError(f"timed out after {within}s waiting for {what}")
        changed.clear()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(changed.wait(), min(left, 0.1))
