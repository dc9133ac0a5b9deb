"""`GET /healthz`: 200 when the database and every platform are up, else 503."""

from __future__ import annotations

import errno
import socket
from collections.abc import Awaitable, Callable, Mapping, Sequence

from aiohttp import web

from bot.chat import Adapter, Parted
from bot.serving import DEFAULT_LIMITS, BoundedRunner, Limits, PacedSite

# Adds more routes to the server (the dashboard and /metrics, bot/web/pages.py).
Mount = Callable[[web.Application], None]


def health_app(
    adapters: Mapping[str, Adapter],
    database_ok: Callable[[], Awaitable[bool]],
    mounts: Sequence[Mount] = (),
) -> web.Application:
    async def healthz(_request: web.Request) -> web.Response:
        platforms = {
            name: "connected" if adapter.connected else "disconnected"
            for name, adapter in adapters.items()
        }
        # Pieces of a connection (Discord shards): one down is degraded, though
        # the platform as a whole still serves the servers of the others.
        parts = {
            name: {part: "connected" if up else "disconnected" for part, up in pieces.items()}
            for name, adapter in adapters.items()
            if isinstance(adapter, Parted) and (pieces := adapter.parts)
        }
        database = "ok" if await database_ok() else "unreachable"
        states = [*platforms.values(), *(s for each in parts.values() for s in each.values())]
        healthy = database == "ok" and all(v == "connected" for v in states)
        body: dict[str, object] = {
            "status": "ok" if healthy else "degraded",
            "platforms": platforms,
            "database": database,
        }
        if parts:
            body["parts"] = parts
        return web.json_response(body, status=200 if healthy else 503)

    app = web.Application()
    app.router.add_get("/healthz", healthz)
    for mount in mounts:
        mount(app)
    return app


async def start_health_server(
    adapters: Mapping[str, Adapter],
    database_ok: Callable[[], Awaitable[bool]],
    port: int,
    host: str = "127.0.0.1",
    mounts: Sequence[Mount] = (),
    limits: Limits = DEFAULT_LIMITS,
) -> BoundedRunner:
    runner = BoundedRunner(health_app(adapters, database_ok, mounts), limits)
    await runner.setup()
    await PacedSite(runner, host, port).start()
    return runner


def check_port_free(port: int, host: str = "127.0.0.1") -> None:
    """Bind and release `port` as the server will (SO_REUSEADDR, like aiohttp), so a
    taken port is found before the database is migrated; raises OSError."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        probe.bind((host, port))


def describe_bind_error(error: OSError, port: int) -> str:
    """One sentence for a health port we cannot listen on, saying what to do."""
    fix = "or set QUIZ_HEALTH_PORT to a free port (0 turns the health check off)"
    if error.errno == errno.EADDRINUSE:
        return (
            f"port {port} (QUIZ_HEALTH_PORT, for GET /healthz) is already in use; "
            f"stop the program using it, {fix}"
        )
    if error.errno in (errno.EACCES, errno.EPERM):
        return f"this user may not listen on port {port} (QUIZ_HEALTH_PORT); {fix}"
    return f"cannot listen on port {port} (QUIZ_HEALTH_PORT): {error.strerror or error}; {fix}"
