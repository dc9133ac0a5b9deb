"""Where a fake platform server listens: an aiohttp app on 127.0.0.1."""

from __future__ import annotations

from aiohttp import web

# The real APIs drop no connection attempt; at aiohttp's default listen
# queue of 128 a burst's new connections overflowed it, and each dropped one
# waited a second for its SYN to be sent again.
BACKLOG = 1024


async def listen(app: web.Application) -> tuple[web.AppRunner, int]:
    """`app` served on a free local port; its runner (to clean up) and the port."""
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0, backlog=BACKLOG).start()
    return runner, runner.addresses[0][1]
