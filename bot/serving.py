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
- while a port is full, `PacedSite` stops accepting: newcomers wait in the
  kernel's backlog, at no cost to the event loop, and are taken only as
  slots free or, at most `EVICTIONS` a second, to replace a stranger. An
  attacker refused at once would be back a moment later, again and again,
  and the loop would pay for every round;
- a `Server` header without a version.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import resource
import socket
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, cast

from aiohttp import web
from aiohttp.web_protocol import RequestHandler

log = logging.getLogger(__name__)

SERVER_NAME = "quizmaster"
GRACE = 0.5  # a keep-alive connection idle this long may make room for a new one
# While a port is full, at most this many newcomers a second replace a
# stranger (a burst of as many at once); the rest wait in the backlog.
EVICTIONS = 100.0
ACCEPT_BACKOFF = 0.5  # after accept() fails (out of descriptors), wait this long


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
        self._freed = asyncio.Event()
        self._tokens, self._filled = EVICTIONS, self._now()
        self.evicted = 0

    def _victim(self, now: float, newcomer: RequestHandler | None) -> RequestHandler | None:
        """The oldest stranger, else the keep-alive connection idle longest
        (over GRACE), else None: every other one is busy or just served."""
        busy, served = self._traffic.busy, self._traffic.served
        idle = None
        longest = GRACE
        for other in self._open:
            if other is newcomer or other in busy:
                continue
            last = served.get(other)
            if last is None:
                return other  # the oldest: it has had the longest to send a request
            if now - last > longest:
                idle, longest = other, now - last
        return idle

    async def room(self) -> None:
        """Returns once one more connection may be accepted: a slot is free, or
        one can be freed within the eviction budget (EVICTIONS a second)."""
        while True:
            if len(self._open) < self._cap:
                return
            now = self._now()
            self._tokens = min(EVICTIONS, self._tokens + (now - self._filled) * EVICTIONS)
            self._filled = now
            if self._tokens >= 1 and self._victim(now, None) is not None:
                self._tokens -= 1
                return
            self._freed.clear()
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(1 / EVICTIONS):
                    await self._freed.wait()

    def connection_made(self, handler: RequestHandler, transport: asyncio.Transport) -> None:
        super().connection_made(handler, transport)
        now = self._now()
        self._open[handler] = (transport, now)
        if len(self._open) <= self._cap:
            return
        self.evicted += 1
        # A stranger, else the longest idle keep-alive, else the newcomer.
        victim = self._victim(now, handler) or handler
        # Closed on the next turn of the loop: the newcomer's own handling task
        # must start before its connection is lost (aiohttp expects that order).
        asyncio.get_running_loop().call_soon(self._open.pop(victim)[0].close)

    def connection_lost(self, handler: RequestHandler, exc: BaseException | None = None) -> None:
        self._open.pop(handler, None)
        self._traffic.served.pop(handler, None)
        self._freed.set()
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


class _Listening:
    """The listening socket and its accept loop, as a site's `_server` (aiohttp
    reads `sockets` for the runner's addresses and calls `close` to stop)."""

    def __init__(self, sock: socket.socket, accepting: asyncio.Task[None]) -> None:
        self.sockets = [sock]
        self._accepting = accepting

    def close(self) -> None:
        # The socket is closed once the loop has let go of it: a pending accept
        # unregisters its descriptor as it is cancelled, on the next turn.
        self._accepting.cancel()
        self._accepting.add_done_callback(self._close_sockets)

    def _close_sockets(self, _accepting: asyncio.Task[None]) -> None:
        for sock in self.sockets:
            sock.close()

    async def wait_closed(self) -> None:
        with contextlib.suppress(asyncio.CancelledError):
            await self._accepting


class PacedSite(web.BaseSite):
    """A TCP site for a BoundedRunner that accepts connections itself, only
    while its port has room (see the module's doc)."""

    __slots__ = ("_host", "_port")

    def __init__(self, runner: BoundedRunner, host: str, port: int, *, backlog: int = 128):
        super().__init__(runner, backlog=backlog)
        self._host, self._port = host, port

    @property
    def name(self) -> str:
        return f"http://{self._host}:{self._port}"

    async def start(self) -> None:
        await super().start()
        family = socket.AF_INET6 if ":" in self._host else socket.AF_INET
        sock = socket.create_server((self._host, self._port), family=family, backlog=self._backlog)
        sock.setblocking(False)
        server = self._runner.server
        assert isinstance(server, _CappedServer)
        accepting = asyncio.create_task(self._accept(sock, server))
        self._server = cast(asyncio.AbstractServer, _Listening(sock, accepting))

    async def _accept(self, sock: socket.socket, server: _CappedServer) -> None:
        loop = asyncio.get_running_loop()
        while True:
            await server.room()
            try:
                conn, _ = await loop.sock_accept(sock)
            except OSError as error:  # out of descriptors: the backlog keeps them
                log.warning("could not accept a connection: %s", error)
                await asyncio.sleep(ACCEPT_BACKOFF)
                continue
            try:
                await loop.connect_accepted_socket(server, conn)
            except OSError:
                conn.close()
