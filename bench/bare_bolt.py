"""The bare libraries the abuse suite compares the bot with: a Bolt app in HTTP
mode (request signature checked, every click acknowledged at once) served by
aiohttp with its defaults, and a plain aiohttp `/healthz`, in one process.

    python bench/bare_bolt.py EVENTS_PORT HEALTH_PORT SIGNING_SECRET
"""

from __future__ import annotations

import asyncio
import re
import signal
import sys

from aiohttp import web
from slack_bolt.async_app import AsyncAck, AsyncApp
from slack_bolt.authorization import AuthorizeResult


async def serve(events: int, health: int, secret: str) -> None:
    async def authorize(**_: object) -> AuthorizeResult:
        # A fixed installation: Slack is never asked (no auth.test).
        return AuthorizeResult(
            enterprise_id=None, team_id="T0TEAM", bot_token="xoxb-bare", bot_user_id="U0BOT"
        )

    bolt = AsyncApp(signing_secret=secret, authorize=authorize)

    @bolt.action(re.compile(".*"))
    async def clicked(ack: AsyncAck) -> None:
        await ack()

    async def healthz(_request: web.Request) -> web.Response:
        return web.json_response({"status": "ok"})

    plain = web.Application()
    plain.router.add_get("/healthz", healthz)
    runners = [web.AppRunner(bolt.web_app(path="/slack/events")), web.AppRunner(plain)]
    for runner, port in zip(runners, (events, health), strict=True):
        await runner.setup()
        await web.TCPSite(runner, "127.0.0.1", port).start()
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    print("ready", flush=True)
    await stop.wait()
    for runner in runners:
        await runner.cleanup()


if __name__ == "__main__":
    asyncio.run(serve(int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]))
