"""The HTTP listener both open ports use (Slack's events, health and dashboard).

aiohttp's defaults keep an idle or slowly sent connection open for an hour and
accept any number of them; on a port the internet can reach that is memory and
descriptors anyone can take without signing in. Here every connection has
deadlines and each port a cap:

- the idle keep-alive timeout (aiohttp closes a connection whose next
  request's headers have not all arrived by then, so it is also the deadline
  for sending headers, counted from the connection's start or last response);
- a deadline for the whole of one request, its handler included;
- `read_body`, for handlers that read one: a size limit enforced while
  reading and a deadline for the body;
- at most `connections` open at once: a new one closes the oldest connection
  not in a request (it is waiting for headers or idle), or is itself closed
  when all are busy;
- a `Server` header without a version.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from aiohttp import web
from aiohttp.web_protocol import RequestHandler

log = logging.getLogger(__name__)

SERVER_NAME = "quizmaster"


@dataclass(frozen=True)
class Limits:
    idle: float = 5.0  # keep-alive idle, and the time allowed to send a request's headers
    request: float = 30.0  # one whole request, its handler included
    body: float = 10.0  # reading a request body (read_body)
    linger: float = 1.0  # draining a body the handler did not read, before closing
    connections: int = 256  # open at once on one port


DEFAULT_LIMITS = Limits()
_BUSY = web.AppKey("serving.busy", set)  # the RequestHandlers inside a request


class BodyTooLarge(Exception):
    """A request body over the limit (its Content-Length, or the bytes sent)."""


async def read_body(request: web.Request, limit: int, deadline: float) -> bytes:
    """The body, refused once it passes `limit` bytes (never buffering more than
    one chunk past it) or if it is not all sent within `deadline` seconds
    (TimeoutError)."""
    if (request.content_length or 0) > limit:
        raise BodyTooLarge
    chunks: list[bytes] = []
    size = 0
    async with asyncio.timeout(deadline):
        while True:
            chunk = await request.content.readany()
            if not chunk:
                break
            size += len(chunk)
            if size > limit:
                raise BodyTooLarge
            chunks.append(chunk)
    return b"".join(chunks)


def bounded(app: web.Application, limits: Limits = DEFAULT_LIMITS) -> web.Application:
    """`app` with the whole-request deadline and the plain `Server` header."""
    busy: set[RequestHandler] = set()
    app[_BUSY] = busy

    @web.middleware
    async def deadline(
        request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
    ) -> web.StreamResponse:
        protocol = request.protocol
        busy.add(protocol)
        try:
            async with asyncio.timeout(limits.request):
                return await handler(request)
        finally:
            busy.discard(protocol)

    async def plain_server(_request: web.Request, response: web.StreamResponse) -> None:
        response.headers["Server"] = SERVER_NAME

    app.middlewares.append(deadline)
    app.on_response_prepare.append(plain_server)
    return app


class _CappedServer(web.Server):
    """aiohttp's connection manager, refusing to keep more than `cap` open."""

    def __init__(self, *args: Any, cap: int, busy: set[RequestHandler], **kwargs: Any):
        super().__init__(*args, **kwargs)
        self._cap = cap
        self._busy = busy
        self._open: dict[RequestHandler, asyncio.Transport] = {}  # oldest first
        self.evicted = 0

    def connection_made(self, handler: RequestHandler, transport: asyncio.Transport) -> None:
        super().connection_made(handler, transport)
        self._open[handler] = transport
        if len(self._open) <= self._cap:
            return
        self.evicted += 1
        for other, other_transport in self._open.items():
            if other is not handler and other not in self._busy:
                other_transport.close()  # the oldest waiting for headers, or idle
                del self._open[other]
                return
        transport.close()  # every other connection is inside a request
        del self._open[handler]

    def connection_lost(self, handler: RequestHandler, exc: BaseException | None = None) -> None:
        self._open.pop(handler, None)
        super().connection_lost(handler, exc)


class BoundedRunner(web.AppRunner):
    """An AppRunner whose connections follow `limits` (see the module's doc)."""

    def __init__(
        self, app: web.Application, limits: Limits = DEFAULT_LIMITS, **kwargs: Any
    ) -> None:
        bounded(app, limits)
        kwargs.setdefault("access_log", None)
        super().__init__(app, keepalive_timeout=limits.idle, lingering_time=limits.linger, **kwargs)
        self._limits = limits

    @property
    def evicted(self) -> int:
        """Connections closed because the port was full."""
        server = self.server
        return server.evicted if isinstance(server, _CappedServer) else 0

    async def _make_server(self) -> web.Server:
        # AppRunner's own, with the capped manager in place of aiohttp's Server.
        app = self.app
        loop = asyncio.get_running_loop()
        app._set_loop(loop)
        app.on_startup.freeze()
        await app.startup()
        app.freeze()
        return _CappedServer(
            app._handle,
            request_factory=app._make_request,
            loop=loop,
            cap=self._limits.connections,
            busy=app[_BUSY],
            **self._kwargs,
        )
