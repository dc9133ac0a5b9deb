"""The door to /slack/events in HTTP mode.

Every request is checked before any of it is parsed: first its signature
headers and the five-minute freshness of their timestamp, before a byte of
body is read; then the body, read under a 64 KB limit and a deadline
(bot/serving.py), against the signature; then that the same signed request
was not seen before by any process on the database (a replay, or one of
Slack's own retries), which is answered 200 and does nothing. Only then does
Bolt see it. Refusals are one short log line each, never a traceback.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Protocol

from aiohttp import web
from slack_sdk.signature import Clock, SignatureVerifier

from bot.serving import DEFAULT_LIMITS, BodyTooLarge, read_body

log = logging.getLogger(__name__)

MAX_BODY = 64 * 1024  # Slack's payloads are a few kB; a long form's under 20 kB
WINDOW = 5 * 60  # how old (or how far ahead) a signed request may be, as Slack says
REPLAY_LIMIT = 100_000  # signatures remembered at most; oldest forgotten first
_TIMESTAMP = re.compile(r"[0-9]{1,12}")
_SIGNATURE = re.compile(r"v0=[0-9a-f]{64}")

# Bolt's handling of a request the gate let through, given the body it read.
Handler = Callable[[web.Request, bytes], Awaitable[web.StreamResponse]]


class Replays(Protocol):
    """Where signed requests are remembered for their five minutes."""

    async def first_time(self, key: str, expires: float) -> bool:
        """True the first time `key` is claimed before `expires` (a Unix time),
        by this process or, for a shared store, any process on the database."""
        ...


class _Clock(Clock):
    def __init__(self, now: Callable[[], float]) -> None:
        self._now = now

    def now(self) -> float:
        return self._now()


class ReplayCache:
    """Signatures seen in the last five minutes, bounded in size."""

    def __init__(self, clock: Callable[[], float], limit: int = REPLAY_LIMIT) -> None:
        self._clock = clock
        self._limit = limit
        self._expiry: dict[str, float] = {}  # insertion order: oldest first
        self._next_prune = 0.0

    def __len__(self) -> int:
        return len(self._expiry)

    def seen(self, key: str, expires: float) -> bool:
        """True if `key` was seen and has not expired; otherwise remember it."""
        now = self._clock()
        self._prune(now)
        if self._expiry.get(key, 0.0) > now:
            return True
        self._expiry[key] = expires
        return False

    def _prune(self, now: float) -> None:
        if now >= self._next_prune or len(self._expiry) >= self._limit:
            self._expiry = {key: at for key, at in self._expiry.items() if at > now}
            self._next_prune = now + 10
        while len(self._expiry) >= self._limit:
            del self._expiry[next(iter(self._expiry))]


class MemoryReplays:
    """The replay store of one process (SQLite, where one process serves)."""

    def __init__(self, clock: Callable[[], float], limit: int = REPLAY_LIMIT) -> None:
        self.cache = ReplayCache(clock, limit)

    async def first_time(self, key: str, expires: float) -> bool:
        return not self.cache.seen(key, expires)


class RequestGate:
    """Decides whether a request really comes from Slack, and only once."""

    def __init__(
        self,
        signing_secret: str,
        clock: Callable[[], float] = time.time,
        window: int = WINDOW,
        replays: Replays | None = None,
    ) -> None:
        self._clock = clock
        self._window = window
        self._verifier = SignatureVerifier(signing_secret, clock=_Clock(clock))
        self.replays: Replays = replays or MemoryReplays(clock)

    def header_refusal(self, headers: Mapping[str, str]) -> str | None:
        """Why the request is refused from its headers alone, or None."""
        timestamp = headers.get("X-Slack-Request-Timestamp")
        signature = headers.get("X-Slack-Signature")
        if not timestamp or not signature:
            return "not signed"
        if not _TIMESTAMP.fullmatch(timestamp) or not _SIGNATURE.fullmatch(signature):
            return "malformed signature headers"
        if abs(self._clock() - int(timestamp)) > self._window:
            return "stale timestamp"
        return None

    def refusal(self, body: bytes, headers: Mapping[str, str]) -> str | None:
        """Why the request is refused, or None if Slack signed it in the window."""
        problem = self.header_refusal(headers)
        if problem is not None:
            return problem
        try:
            text = body.decode("utf-8")
        except UnicodeDecodeError:
            return "body is not UTF-8"
        if not self._verifier.is_valid(
            text, headers["X-Slack-Request-Timestamp"], headers["X-Slack-Signature"]
        ):
            return "bad signature"
        return None

    async def first_time(self, headers: Mapping[str, str]) -> bool:
        """For a request `refusal` passed: False if any process saw it before."""
        timestamp, signature = headers["X-Slack-Request-Timestamp"], headers["X-Slack-Signature"]
        return await self.replays.first_time(signature, int(timestamp) + self._window)


def _refuse(status: int) -> web.Response:
    """A refusal that also ends the connection: whoever was refused gets no
    keep-alive slot to hold."""
    response = web.Response(status=status)
    response.force_close()
    return response


def guarded(
    gate: RequestGate,
    inner: Handler,
    *,
    accepting: Callable[[], bool] = lambda: True,
    body_deadline: float = DEFAULT_LIMITS.body,
) -> Callable[[web.Request], Awaitable[web.StreamResponse]]:
    """`inner` (Bolt's handler) behind the gate."""

    async def handle(request: web.Request) -> web.StreamResponse:
        if not accepting():
            return web.Response(status=503, text="shutting down")
        # Unsigned or stale: refused before any of the body is read.
        problem = gate.header_refusal(request.headers)
        if problem is not None:
            log.info("refused a Slack request from %s: %s", request.remote, problem)
            return _refuse(401)
        try:
            body = await read_body(request, MAX_BODY, body_deadline)
        except BodyTooLarge:
            log.info("refused a Slack request: body over %d bytes", MAX_BODY)
            return _refuse(413)
        except TimeoutError:
            log.info("refused a Slack request from %s: body too slow", request.remote)
            return _refuse(408)
        except ConnectionError:  # closed to make room for others while it dawdled
            return _refuse(400)
        problem = gate.refusal(body, request.headers)
        if problem is not None:
            log.info("refused a Slack request from %s: %s", request.remote, problem)
            return _refuse(401)
        # Slack resends what it thinks failed; a repeat is answered and ignored.
        retry = request.headers.get("X-Slack-Retry-Num")
        if not await gate.first_time(request.headers) or retry is not None:
            log.info("ignored a repeated Slack request (retry %s)", retry or "-")
            return web.Response(status=200)
        try:
            return await inner(request, body)
        except Exception as error:
            # A signed payload Slack never sends (not JSON, a list, 50,000-deep
            # nesting): Bolt parses it once, here, and fails; a clean 400.
            log.warning("could not handle a signed Slack request (%s)", type(error).__name__)
            return web.Response(status=400)

    return handle


def events_app(
    gate: RequestGate, bolt_handler: Handler, path: str, **options: Any
) -> web.Application:
    """An aiohttp app serving only `path`, its bodies capped at MAX_BODY."""
    app = web.Application(client_max_size=MAX_BODY)
    app.router.add_post(path, guarded(gate, bolt_handler, **options))
    return app
