"""A Bolt listener whose HTTP response goes out the moment it acknowledges.

Bolt's default (`process_before_response=False`) runs each listener in a task
of its own and then polls, every 10 ms, whether it has called `ack()` yet
(slack_bolt/listener/asyncio_runner.py). A click is acknowledged only once its
answer is stored, so each click's 200 waited up to 10 ms more, and every
request in flight woke the event loop a hundred times a second: during a
burst of 1,000 clicks about seven wake-ups and timers per click, each a
push into the loop's timer heap (bench/slack_clicks.py --profile).

With `process_before_response=True` Bolt awaits the listener instead and
sends what it returns. `early_ack` makes that the moment of `ack()`: the
listener runs in a task of its own, counted as work in flight, and the rest
of its work (the private reply, a form's outcome) goes on after the response.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from bot.adapters.in_flight import InFlight

log = logging.getLogger(__name__)


def early_ack(
    handler: Callable[..., Awaitable[None]], in_flight: InFlight
) -> Callable[..., Awaitable[Any]]:
    """`handler` as a listener that returns once it has acknowledged (with
    the response its `ack()` made, for Bolt to send) or has ended."""

    # Bolt passes each listener the arguments its signature names, read
    # through functools.wraps from `handler`.
    @functools.wraps(handler)
    async def listener(*args: Any, **kwargs: Any) -> Any:
        given = kwargs["ack"]  # every listener here names it, so Bolt passes it
        acked: asyncio.Future[Any] = asyncio.get_running_loop().create_future()

        async def ack(*ack_args: Any, **ack_kwargs: Any) -> Any:
            response = await given(*ack_args, **ack_kwargs)
            if not acked.done():
                acked.set_result(response)
            return response

        work = asyncio.ensure_future(handler(*args, **{**kwargs, "ack": ack}))
        in_flight.add(work)
        await asyncio.wait({work, acked}, return_when=asyncio.FIRST_COMPLETED)
        if acked.done():
            if work.done():
                _report(work)
            else:
                work.add_done_callback(_report)
            return acked.result()
        work.result()  # failed before acknowledging: Bolt's error handler answers
        return None

    return listener


def _report(work: asyncio.Future[None]) -> None:
    """A listener that failed after its acknowledgement went out."""
    if not work.cancelled() and work.exception() is not None:
        log.error("a Slack listener failed after acknowledging", exc_info=work.exception())
