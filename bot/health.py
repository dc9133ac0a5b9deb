"""`GET /healthz`: 200 when the database and every platform are up, else 503."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping

from aiohttp import web

from bot.chat import Adapter


def health_app(
    adapters: Mapping[str, Adapter], database_ok: Callable[[], Awaitable[bool]]
) -> web.Application:
    async def healthz(_request: web.Request) -> web.Response:
        platforms = {
            name: "connected" if adapter.connected else "disconnected"
            for name, adapter in adapters.items()
        }
        database = "ok" if await database_ok() else "unreachable"
        healthy = database == "ok" and all(v == "connected" for v in platforms.values())
        body = {
            "status": "ok" if healthy else "degraded",
            "platforms": platforms,
            "database": database,
        }
        return web.json_response(body, status=200 if healthy else 503)

    app = web.Application()
    app.router.add_get("/healthz", healthz)
    return app


async def start_health_server(
    adapters: Mapping[str, Adapter],
    database_ok: Callable[[], Awaitable[bool]],
    port: int,
    host: str = "0.0.0.0",
) -> web.AppRunner:
    runner = web.AppRunner(health_app(adapters, database_ok), access_log=None)
    await runner.setup()
    await web.TCPSite(runner, host, port).start()
    return runner
