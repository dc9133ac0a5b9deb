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
- at most `connections` open at once: a new one closes the oldest stranger
  (a connection that has not completed a request and is not inside one: a
  real client sends its request at once, and one slowly sending a body is
  no more than a stranger), else the keep-alive connection idle longest
  (over `GRACE`), else it is itself closed;
- a `Server` header without a version.
"""

from __future__ import annotations

import asyncio
import logging
import resource
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web
from aiohttp.web_protocol import RequestHandler

log = logging.getLogger(__name__)

SERVER_NAME = "quizmaster"
GRACE = 0.5  # a keep-alive connection idle this long may make room for a new one


# At most this many open on one port (a stalled connection costs about 10 KB).
MAX_CONNECTIONS = 2048
RESERVED_DESCRIPTORS = 96  # the database, the platforms' own connections, logs


def default_connections() -> int:
    """As many a port as the descriptor limit allows, up to MAX_CONNECTIONS:
    the two ports together leave RESERVED_DESCRIPTORS for the database, the
    platforms' own connections and the log files (a full table of descriptors
    fails them all). A high cap is the cheap side: a stalled connection under
    it costs memory and nothing else, while one over it is accepted, evicts
    an older one and is opened again by its sender, a churn that costs the
    event loop (and so genuine requests) for as long as the attack lasts."""
    soft = descriptor_limit()
    if soft is None:
        return 256
    if soft == resource.RLIM_INFINITY:
        return MAX_CONNECTIONS
    return max(16, min(MAX_CONNECTIONS, (soft - RESERVED_DESCRIPTORS) // 2))


def descriptor_limit() -> int | None:
    """The process's descriptor limit, first raised (as far as its hard limit
    allows) to what both ports at MAX_CONNECTIONS need: many systems start a
    service at a soft 1,024 under a hard limit hundreds of times higher.
    None if the limit cannot be read."""
    wanted = 2 * MAX_CONNECTIONS + RESERVED_DESCRIPTORS
    try:
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        if soft != resource.RLIM_INFINITY and soft < wanted:
            raised = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
            if raised > soft:
                resource.setrlimit(resource.RLIMIT_NOFILE, (raised, hard))
                soft = raised
    except (OSError, ValueError):
        return None
    return soft


@dataclass(frozen=True)
class Limits:
    idle: float = 5.0  # keep-alive idle, and the time allowed to send a request's headers
    request: float = 30.0  # one whole request, its handler included
    body: float = 10.0  # reading a request body (read_body)
    linger: float = 1.0  # draining a body the handler did not read, before closing
    connections: int = field(default_factory=default_connections)  # open at once on one port


DEFAULT_LIMITS = Limits()


@dataclass
class _Traffic:
    busy: set[RequestHandler]  # inside a request now
    served: dict[RequestHandler, float]  # have completed a request: when the last ended


_TRAFFIC = web.AppKey("serving.traffic", _Traffic)


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
    # Until the body is in, the connection may be closed to make room (a
    # connection closed meanwhile raises ConnectionError here).
    traffic = request.app.get(_TRAFFIC)
    if traffic is not None:
        traffic.busy.discard(request.protocol)
    try:
        async with asyncio.timeout(deadline):
            while True:
                chunk = await request.content.readany()
                if not chunk:
                    break
                size += len(chunk)
                if size > limit:
                    raise BodyTooLarge
                chunks.append(chunk)
    finally:
        if traffic is not None:
            traffic.busy.add(request.protocol)
    return b"".join(chunks)


def bounded(app: web.Application, limits: Limits = DEFAULT_LIMITS) -> web.Application:
    """`app` with the whole-request deadline and the plain `Server` header."""
    traffic = _Traffic(set(), {})
    app[_TRAFFIC] = traffic

    @web.middleware
    async def deadline(
        request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
    ) -> web.StreamResponse:
        protocol = request.protocol
        traffic.busy.add(protocol)
        try:
            async with asyncio.timeout(limits.request):
                return await handler(request)
        finally:
            traffic.busy.discard(protocol)
            if protocol.transport is not None:  # still open
                traffic.served[protocol] = asyncio.get_running_loop().time()

    async def plain_server(_request: web.Request, response: web.StreamResponse) -> None:
        response.headers["Server"] = SERVER_NAME

    app.middlewares.append(deadline)
    app.on_response_prepare.append(plain_server)
    return app


class _CappedServer(web.Server):
    """aiohttp's connection manager, refusing to keep more than `cap` open."""

    def __init__(self, *args: Any, cap: int, traffic: _Traffic, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self._cap = cap
        self._traffic = traffic
        self._open: dict[RequestHandler, tuple[asyncio.Transport, float]] = {}  # oldest first
        self._now = asyncio.get_running_loop().time
        self.evicted = 0

    def connection_made(self, handler: RequestHandler, transport: asyncio.Transport) -> None:
        super().connection_made(handler, transport)
        now = self._now()
        self._open[handler] = (transport, now)
        if len(self._open) <= self._cap:
            return
        self.evicted += 1
        busy, served = self._traffic.busy, self._traffic.served
        stranger = idle = None
        longest = GRACE
        for other in self._open:
            if other is handler or other in busy:
                continue
            last = served.get(other)
            if last is None:
                stranger = other  # the oldest: it has had the longest to send a request
                break
            if now - last > longest:
                idle, longest = other, now - last
        # A stranger, else the longest idle keep-alive, else (every other busy or
        # just served) the newcomer.
        victim = stranger or idle or handler
        # Closed on the next turn of the loop: the newcomer's own handling task
        # must start before its connection is lost (aiohttp expects that order).
        asyncio.get_running_loop().call_soon(self._open.pop(victim)[0].close)

    def connection_lost(self, handler: RequestHandler, exc: BaseException | None = None) -> None:
        self._open.pop(handler, None)
        self._traffic.served.pop(handler, None)
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
            traffic=app[_TRAFFIC],
            **self._kwargs,
        )
