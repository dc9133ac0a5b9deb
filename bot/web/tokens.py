"""Signed dashboard links: a token names a community (and, for a member's own
page, the member) and expires; HMAC-SHA256 with QUIZ_WEB_SECRET.

A token is `<payload>.<signature>`, both base64url without padding; the payload
is compact JSON. Nothing in it is secret, only unforgeable: a changed byte, an
expired time or a token for another community is refused the same way."""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from bot.clock import Clock

LIFETIME = timedelta(hours=24)
# Mixed into every signature, so a token signed for something else with the same
# secret can never pass as a dashboard link.
_PURPOSE = b"quizmaster-dashboard-v1\x00"
_MAX_TOKEN = 1024


@dataclass(frozen=True)
class Grant:
    """What a valid token lets its holder see."""

    platform: str
    community: str
    member: str | None
    expires: datetime


class Signer:
    def __init__(self, secret: str, clock: Clock, lifetime: timedelta = LIFETIME) -> None:
        if not secret:
            raise ValueError("the dashboard needs a secret")
        self._key = secret.encode()
        self.clock = clock
        self.lifetime = lifetime

    def sign(self, platform: str, community: str, member: str | None = None) -> str:
        expires = int((self.clock.now() + self.lifetime).timestamp())
        payload: dict[str, Any] = {"p": platform, "c": community, "e": expires}
        if member is not None:
            payload["m"] = member
        body = _b64(json.dumps(payload, separators=(",", ":"), sort_keys=True).encode())
        return f"{body}.{self._signature(body)}"

    def verify(self, token: str | None, platform: str, community: str) -> Grant | None:
        """The grant if `token` is genuine, unexpired and for this community; else None."""
        if not token or len(token) > _MAX_TOKEN or token.count(".") != 1:
            return None
        try:  # bytes, in constant time; a token that is not ASCII is simply not ours
            body, signature = token.encode("ascii").split(b".")
        except UnicodeEncodeError:
            return None
        if not hmac.compare_digest(signature, self._signature(body.decode()).encode()):
            return None
        try:
            payload = json.loads(_unb64(body.decode()))
        except (ValueError, binascii.Error):
            return None
        if not isinstance(payload, dict):
            return None
        expires, member = payload.get("e"), payload.get("m")
        if not isinstance(expires, int) or (member is not None and not isinstance(member, str)):
            return None
        if payload.get("p") != platform or payload.get("c") != community:
            return None
        now = self.clock.now()
        # Never more than one lifetime ahead, whatever the token says (we sign
        # no other); checked before it becomes a date, which 10**20 cannot.
        if not now.timestamp() < expires <= (now + self.lifetime).timestamp():
            return None
        when = datetime.fromtimestamp(expires, UTC)
        return Grant(platform, community, member, when)

    def _signature(self, body: str) -> str:
        return _b64(hmac.new(self._key, _PURPOSE + body.encode(), hashlib.sha256).digest())


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
