"""`quizmaster run`: every configured platform, the timers and /healthz on one loop."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import sys
from collections.abc import AsyncIterator

from aiohttp import web

from bot.adapters.console.frontends import local_channel
from bot.adapters.console.program import program
from bot.app import Runtime
from bot.config import SETTINGS_HELP, Settings
from bot.health import check_port_free, describe_bind_error, start_health_server
from bot.heap import start_up_frozen
from bot.one_server import serving_alone
from bot.platforms import (
    Platform,
    StartError,
    build_platform,
    configured_platforms,
    settings_problem,
)
from bot.storage.db import describe_database_error
from bot.web.pages import web_mounts
from bot.web.views import due_reviews

log = logging.getLogger(__name__)


def _settings_lines() -> list[str]:
    width = max(len(name) for name, _ in SETTINGS_HELP)
    return [f"  {name:<{width}} {meaning}" for name, meaning in SETTINGS_HELP]


def _no_platform_message() -> str:
    """Two lines, not the settings list: the console channel opens right after."""
    return (
        "No chat platform is configured, so this is a local console channel. "
        "To serve Discord or Slack, set DISCORD_TOKEN or SLACK_BOT_TOKEN "
        f"(docs/settings.md); to just play: {program()} play (or make play)."
    )


def _nothing_to_serve_message() -> str:
    """No platform and no terminal (a container without a token, say): say what to do."""
    lines = [
        "Cannot start: no chat platform is configured, and without a terminal "
        "there is no local console to open.",
        f"  To play in a terminal: {program()} play "
        "(Docker: docker run -it <image> quizmaster play).",
        "  To serve a chat: set DISCORD_TOKEN, or SLACK_BOT_TOKEN with SLACK_APP_TOKEN "
        "(Socket Mode) or SLACK_SIGNING_SECRET (HTTP), in the environment or .env.",
        "All settings:",
    ]
    return "\n".join(lines + _settings_lines())


@contextlib.asynccontextmanager
async def open_runtime(settings: Settings) -> AsyncIterator[Runtime]:
    """`Runtime.build(settings)`, entered; a database that cannot be reached or
    written raises StartError with one sentence for the operator."""
    async with contextlib.AsyncExitStack() as stack:
        try:
            runtime = Runtime.build(settings)  # may fail creating the SQLite folder
            stack.push_async_callback(runtime.database.dispose)  # also when entering fails
            await stack.enter_async_context(runtime)
        except Exception as error:
            problem = describe_database_error(error, settings.resolved_database_url)
            if problem is None:
                raise
            raise StartError(problem) from None
        yield runtime


async def run_bot(settings: Settings) -> int:
    """`quizmaster run`; its exit code. Every start-up problem is one line, exit 2."""
    try:
        return await _run(settings)
    except StartError as error:
        print(f"Cannot start: {error}", file=sys.stderr)
        return 2


async def _run(settings: Settings) -> int:
    problem = settings_problem(settings)
    if problem:
        raise StartError(f"{problem}.")
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

    # Before the database, which takes longer.
    _check_health_port(settings.health_port, settings.health_host)
    async with open_runtime(settings) as runtime:
        # Before the first post, the second process on a SQLite file stops here.
        with serving_alone(settings.resolved_database_url):
            log.info("%s", runtime.start_line())
            health: web.AppRunner | None = None
            if settings.health_port:
                try:
                    health = await start_health_server(
                        runtime.service.adapters,
                        runtime.database_ok,
                        settings.health_port,
                        host=settings.health_host,
                        mounts=web_mounts(
                            runtime.service, runtime.links, due_reviews(runtime.service)
                        ),
                    )
                except OSError as error:  # taken since the check
                    raise StartError(describe_bind_error(error, settings.health_port)) from None
                log.info(
                    "health check on %s:%d/healthz, metrics on /metrics",
                    settings.health_host,
                    settings.health_port,
                )
                if runtime.links is not None:
                    log.info("dashboard on %s/dashboard/…", runtime.links.public_url)
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
                with start_up_frozen():
                    await stopping.wait()
            finally:
                for task in tasks:
                    task.cancel()
                for platform in reversed(started):
                    await _close_quietly(platform)
                if health is not None:
                    await health.cleanup()
    log.info("stopped cleanly")
    return 0


def _check_health_port(port: int, host: str) -> None:
    if not port:
        return
    try:
        check_port_free(port, host)
    except OSError as error:
        raise StartError(describe_bind_error(error, port)) from None


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
