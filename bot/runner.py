"""`quizmaster run`: every configured platform, the timers and /healthz on one loop."""

from __future__ import annotations

import asyncio
import logging
import signal
import sys

from aiohttp import web

from bot.app import Runtime
from bot.config import SETTINGS_HELP, Settings
from bot.console import local_channel
from bot.health import start_health_server
from bot.platforms import Platform, StartError, build_platform

log = logging.getLogger(__name__)


def configured_platforms(settings: Settings) -> list[str]:
    platforms = []
    if settings.discord_token:
        platforms.append("discord")
    if settings.slack_bot_token:
        platforms.append("slack")
    return platforms


def _settings_lines() -> list[str]:
    width = max(len(name) for name, _ in SETTINGS_HELP)
    return [f"  {name:<{width}} {meaning}" for name, meaning in SETTINGS_HELP]


def _no_platform_message() -> str:
    lines = ["No platform is configured. Set one of these (environment or .env):"]
    return "\n".join(lines + _settings_lines())


def _nothing_to_serve_message() -> str:
    """No platform and no terminal (a container without a token, say): say what to do."""
    lines = [
        "Cannot start: no chat platform is configured, and without a terminal "
        "there is no local console to open.",
        "  To play in a terminal: quizmaster play "
        "(Docker: docker run -it <image> quizmaster play).",
        "  To serve a chat: set DISCORD_TOKEN, or SLACK_BOT_TOKEN with SLACK_APP_TOKEN "
        "(Socket Mode) or SLACK_SIGNING_SECRET (HTTP), in the environment or .env.",
        "All settings:",
    ]
    return "\n".join(lines + _settings_lines())


async def run_bot(settings: Settings) -> int:
    problem = settings.slack_problem()
    if problem:
        print(f"Cannot start: {problem}.", file=sys.stderr)
        return 2
    platforms = configured_platforms(settings)
    interactive = False
    if not platforms:
        if not sys.stdin.isatty():
            print(_nothing_to_serve_message(), file=sys.stderr)
            return 2
        print(_no_platform_message(), file=sys.stderr)
        interactive = True

    stopping = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stopping.set)

    async with Runtime.build(settings) as runtime:
        health: web.AppRunner | None = None
        if settings.health_port:
            health = await start_health_server(
                runtime.service.adapters, runtime.database_ok, settings.health_port
            )
            log.info("health check on :%d/healthz", settings.health_port)
        tasks = []
        if interactive:
            tasks.append(asyncio.create_task(local_channel(runtime.service, stopping)))
        started: list[Platform] = []
        try:
            for name in platforms:
                platform = build_platform(name, settings, runtime.service)
                started.append(platform)
                if not await _started_unless_stopped(platform, stopping):
                    break
                log.info("%s connected", name)
            await stopping.wait()
        except StartError as error:
            print(f"Cannot start: {error}", file=sys.stderr)
            return 2
        finally:
            for task in tasks:
                task.cancel()
            for platform in reversed(started):
                await _close_quietly(platform)
            if health is not None:
                await health.cleanup()
    log.info("stopped cleanly")
    return 0


async def _started_unless_stopped(platform: Platform, stopping: asyncio.Event) -> bool:
    """Start a platform, giving up if SIGTERM comes first (an unreachable
    platform keeps retrying, and shutting down must not wait for it)."""
    starting = asyncio.ensure_future(platform.start())
    stop = asyncio.ensure_future(stopping.wait())
    await asyncio.wait({starting, stop}, return_when=asyncio.FIRST_COMPLETED)
    stop.cancel()
    if starting.done():
        starting.result()  # raises StartError for the operator
        return True
    starting.cancel()
    return False


async def _close_quietly(platform: Platform) -> None:
    try:
        await platform.close()
    except Exception:
        log.exception("closing %s failed", platform.adapter.platform)
