"""A local fake Discord: REST and the gateway websocket in one aiohttp app.

The real discord.py client logs in against it, syncs commands, receives READY
and GUILD_CREATE, heartbeats and resumes; tests inject INTERACTION_CREATE
payloads (slash commands, button clicks, autocomplete, modal submits) and read
back every REST call the bot made, including modals opened (callback type 9)
and direct messages (a DM channel from POST /users/@me/channels). Errors (429,
403, 404) can be injected per route.

Sharded as Discord is: `GET /gateway/bot` recommends `shards` and says
`max_concurrency`; each identify names its shard `[id, count]`, READY lists and
GUILD_CREATE sends only that shard's servers, `(guild_id >> 22) % count`, and
each server's interactions go to the socket of its shard.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from aiohttp import WSMsgType, web

from tests.fakes.listening import listen
from tests.fakes.waiting import wait_until

APP_ID = "900000000000000001"
BOT_ID = APP_ID
JSON = "application/json"
MANAGE_GUILD = 1 << 5
SEND_MESSAGES = 1 << 11
VIEW_CHANNEL = 1 << 10
EMBED_LINKS = 1 << 14
READ_HISTORY = 1 << 16
MEMBER_PERMISSIONS = VIEW_CHANNEL | SEND_MESSAGES | READ_HISTORY
BOT_PERMISSIONS = MEMBER_PERMISSIONS | EMBED_LINKS
EPHEMERAL = 1 << 6


BODY = web.RequestKey("body", object)
# Where a multipart request's files land in its recorded body: name → bytes.
UPLOADS = "uploads"


def _json(data: Any, *, status: int = 200, headers: dict[str, str] | None = None) -> web.Response:
    # discord.py parses a body only when Content-Type is exactly application/json
    # (aiohttp's json_response appends a charset).
    return web.Response(
        body=json.dumps(data).encode(),
        status=status,
        headers={"Content-Type": JSON, **(headers or {})},
    )


@dataclass
class Call:
    """One REST request the bot made."""

    method: str
    path: str  # without the /api/v10 prefix
    query: dict[str, str]
    body: Any
    status: int
    at: float = field(default_factory=time.monotonic)  # when it was answered


@dataclass
class Failure:
    method: str
    pattern: re.Pattern[str]
    status: int
    times: int
    retry_after: float = 0.0
    # True: the request is carried out, and only then answered with `status`
    # (the reply was lost after Discord did the work).
    after_work: bool = False


@dataclass
class Stall:
    """Requests that hang until released, then get a 503 with nothing done (the
    sender died while Discord had not carried the request out yet)."""

    method: str
    pattern: re.Pattern[str]
    times: int
    entered: asyncio.Event = field(default_factory=asyncio.Event)
    released: asyncio.Event = field(default_factory=asyncio.Event)


@dataclass
class Member:
    id: str
    name: str
    roles: list[str] = field(default_factory=list)
    permissions: int = MEMBER_PERMISSIONS

    def user(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "username": self.name.lower(),
            "global_name": self.name,
            "discriminator": "0",
            "avatar": None,
        }

    def payload(self, *, with_permissions: bool = True) -> dict[str, Any]:
        data: dict[str, Any] = {
            "user": self.user(),
            "nick": None,
            "avatar": None,
            "roles": list(self.roles),
            "joined_at": "2026-01-01T00:00:00+00:00",
            "deaf": False,
            "mute": False,
            "flags": 0,
            "pending": False,
        }
        if with_permissions:
            data["permissions"] = str(self.permissions)
        return data


@dataclass
class Guild:
    id: str
    channels: list[str]
    roles: dict[str, str] = field(default_factory=dict)  # role id → name
    members: dict[str, Member] = field(default_factory=dict)

    def channel(self, channel_id: str) -> dict[str, Any]:
        return {
            "id": channel_id,
            "type": 0,
            "guild_id": self.id,
            "name": f"quiz-{channel_id[-3:]}",
            "position": self.channels.index(channel_id) if channel_id in self.channels else 0,
            "permission_overwrites": [],
            "nsfw": False,
            "parent_id": None,
            "topic": None,
            "last_message_id": None,
            "rate_limit_per_user": 0,
            "flags": 0,
        }

    def payload(self) -> dict[str, Any]:
        roles = [
            {
                "id": role_id,
                "name": name,
                "color": 0,
                "colors": {"primary_color": 0},
                "hoist": False,
                "position": position,
                "permissions": str(MEMBER_PERMISSIONS if role_id == self.id else 0),
                "managed": False,
                "mentionable": True,
                "flags": 0,
            }
            for position, (role_id, name) in enumerate({self.id: "@everyone", **self.roles}.items())
        ]
        return {
            "id": self.id,
            "name": f"Study group {self.id[-3:]}",
            "icon": None,
            "owner_id": "1",
            "unavailable": False,
            "member_count": len(self.members) + 1,
            "large": False,
            "features": [],
            "roles": roles,
            "emojis": [],
            "stickers": [],
            "channels": [self.channel(channel_id) for channel_id in self.channels],
            "threads": [],
            "members": [],
            "voice_states": [],
            "presences": [],
            "stage_instances": [],
            "guild_scheduled_events": [],
            "soundboard_sounds": [],
            "premium_tier": 0,
            "preferred_locale": "en-US",
            "joined_at": "2026-01-01T00:00:00+00:00",
            "verification_level": 0,
            "default_message_notifications": 0,
            "explicit_content_filter": 0,
            "mfa_level": 0,
            "nsfw_level": 0,
            "afk_timeout": 300,
            "system_channel_flags": 0,
        }


@dataclass
class GatewaySession:
    """One websocket of the bot: the shard it identified as, its own sequence."""

    socket: web.WebSocketResponse
    shard: tuple[int, int] = (0, 1)
    seq: int = 0

    def serves(self, guild_id: str) -> bool:
        shard_id, count = self.shard
        return (int(guild_id) >> 22) % count == shard_id


@dataclass
class Reply:
    """What the bot answered to one injected interaction."""

    callback_type: int | None = None
    callback: dict[str, Any] | None = None
    followups: list[dict[str, Any]] = field(default_factory=list)
    original_edits: list[dict[str, Any]] = field(default_factory=list)

    @property
    def final(self) -> dict[str, Any] | None:
        """The message the person finally sees (after a defer: the followup or edit)."""
        if self.callback_type in (4, 7) and self.callback is not None:
            return dict(self.callback.get("data") or {})
        if self.followups:
            return self.followups[-1]
        if self.original_edits:
            return self.original_edits[-1]
        return None

    @property
    def uploads(self) -> dict[str, bytes]:
        """Files sent with the answer (multipart), by file name."""
        found: dict[str, bytes] = dict((self.callback or {}).get(UPLOADS) or {})
        for followup in self.followups:
            found.update(followup.get(UPLOADS) or {})
        return found

    @property
    def modal(self) -> dict[str, Any] | None:
        """The modal the bot opened in answer (callback type 9), if it did."""
        if self.callback_type == 9 and self.callback is not None:
            return dict(self.callback.get("data") or {})
        return None

    @property
    def ephemeral(self) -> bool:
        data = (self.callback or {}).get("data") or {}
        flags = int(data.get("flags") or 0)
        if self.callback_type == 5:
            return bool(flags & EPHEMERAL)
        return bool(flags & EPHEMERAL)


def text_of(message: dict[str, Any]) -> str:
    """Everything readable in a message payload: content, embeds and fields."""
    parts = [message.get("content") or ""]
    for embed in message.get("embeds") or []:
        parts += [embed.get("title") or "", embed.get("description") or ""]
        for item in embed.get("fields") or []:
            parts += [item["name"], item["value"]]
        parts.append((embed.get("footer") or {}).get("text") or "")
    return "\n".join(part for part in parts if part)


def buttons_of(message: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        component
        for row in message.get("components") or []
        for component in row.get("components") or []
        if component.get("type") == 2
    ]


class FakeDiscord:
    def __init__(
        self, token: str = "fake-bot-token", *, shards: int = 1, max_concurrency: int = 1
    ) -> None:
        self.token = token
        self.recommended_shards = shards
        self.max_concurrency = max_concurrency
        self.reject_token = False
        self.calls: list[Call] = []
        self.messages: dict[str, dict[str, Any]] = {}  # message id → current payload
        # The same messages by channel, oldest first: a busy run reads a channel's
        # messages per click, and walking every message made the fake its bottleneck.
        self._in_channel: dict[str, list[dict[str, Any]]] = {}
        self.guilds: dict[str, Guild] = {}
        self.commands: dict[str, list[dict[str, Any]]] = {}  # "global" or guild id → commands
        # Each member's client language, sent with their interactions (default en-US).
        self.member_locales: dict[str, str] = {}
        self.replies: dict[str, Reply] = {}  # interaction token → reply
        self.dm_channels: dict[str, str] = {}  # user id → their DM channel with the bot
        self.failures: list[Failure] = []
        self.stalls: list[Stall] = []
        self.identifies: list[dict[str, Any]] = []
        # (shard id, loop time) of each identify, for the pace between them.
        self.identified_at: list[tuple[int, float]] = []
        self.resumes: list[dict[str, Any]] = []
        self.heartbeats = 0
        self.refused_gateways = 0  # websocket upgrades still to refuse (an outage)
        self._ids = itertools.count(1_300_000_000_000_000_000)
        self.sessions: list[GatewaySession] = []
        self._changed = asyncio.Event()
        self._runner: web.AppRunner | None = None
        self.port = 0

    # -- lifecycle -----------------------------------------------------------------

    async def start(self) -> None:
        app = web.Application(middlewares=[self._record])
        api = "/api/v10"
        app.router.add_get("/gateway/", self._gateway)
        app.router.add_get(f"{api}/users/@me", self._me)
        app.router.add_get(f"{api}/oauth2/applications/@me", self._application)
        app.router.add_get(f"{api}/gateway/bot", self._gateway_bot)
        app.router.add_get(f"{api}/gateway", self._gateway_bot)
        app.router.add_put(f"{api}/applications/{{app}}/commands", self._put_commands)
        app.router.add_put(
            f"{api}/applications/{{app}}/guilds/{{guild}}/commands", self._put_commands
        )
        app.router.add_post(f"{api}/channels/{{channel}}/messages", self._post_message)
        app.router.add_post(f"{api}/users/@me/channels", self._open_dm)
        app.router.add_patch(
            f"{api}/channels/{{channel}}/messages/{{message}}", self._patch_message
        )
        app.router.add_get(f"{api}/channels/{{channel}}/messages/{{message}}", self._get_message)
        app.router.add_post(f"{api}/interactions/{{id}}/{{token}}/callback", self._callback)
        app.router.add_post(f"{api}/webhooks/{{app}}/{{token}}", self._followup)
        app.router.add_patch(
            f"{api}/webhooks/{{app}}/{{token}}/messages/@original", self._edit_original
        )
        app.router.add_delete(
            f"{api}/webhooks/{{app}}/{{token}}/messages/@original", self._delete_original
        )
        app.router.add_get(f"{api}/guilds/{{guild}}/members/{{user}}", self._get_member)
        self._runner, self.port = await listen(app)

    async def close(self) -> None:
        for stall in self.stalls:
            stall.released.set()
        for session in list(self.sessions):
            await session.socket.close()
        if self._runner is not None:
            await self._runner.cleanup()

    @property
    def api_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/api/v10"

    @property
    def gateway_url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/gateway/"

    # -- set-up by tests -----------------------------------------------------------

    def add_guild(
        self, guild_id: str, channels: list[str], roles: dict[str, str] | None = None
    ) -> Guild:
        guild = Guild(guild_id, channels, roles or {})
        self.guilds[guild_id] = guild
        return guild

    def add_member(
        self,
        guild_id: str,
        user_id: str,
        name: str | None = None,
        *,
        roles: list[str] | None = None,
        permissions: int = MEMBER_PERMISSIONS,
    ) -> Member:
        member = Member(user_id, name or f"Member{user_id[-4:]}", roles or [], permissions)
        self.guilds[guild_id].members[user_id] = member
        return member

    def fail(
        self,
        method: str,
        path: str,
        status: int,
        *,
        times: int = 1,
        retry_after: float = 0.2,
        after_work: bool = False,
    ) -> None:
        """The next `times` requests matching `method` and the path regex get
        `status`; with `after_work`, only after the request was carried out."""
        self.failures.append(
            Failure(method, re.compile(path), status, times, retry_after, after_work)
        )

    def stall(self, method: str, path: str, *, times: int = 1) -> Stall:
        """The next `times` requests matching `method` and the path regex hang
        until the stall is released (or the fake closes)."""
        made = Stall(method, re.compile(path), times)
        self.stalls.append(made)
        return made

    async def _stalled(self, method: str, path: str) -> web.Response | None:
        for stall in self.stalls:
            if stall.times > 0 and stall.method == method and stall.pattern.fullmatch(path):
                stall.times -= 1
                stall.entered.set()
                await stall.released.wait()
                return _json({"message": "Service Unavailable", "code": 0}, status=503)
        return None

    async def drop_gateway(self, shard: int | None = None) -> None:
        """Cut the websockets (of one shard, if given) as a network failure would
        (a resumable close code)."""
        for session in list(self.sessions):
            if shard is None or session.shard[0] == shard:
                await session.socket.close(code=4000, message=b"dropped by test")

    def shard_sessions(self) -> dict[int, GatewaySession]:
        """The live sockets by the shard they identified (or resumed) as."""
        return {session.shard[0]: session for session in self.sessions}

    async def outage(self, refusals: int = 1) -> None:
        """Drop the websocket and refuse the next `refusals` reconnects with a 503,
        as a passing Discord outage would."""
        self.refused_gateways = refusals
        await self.drop_gateway()

    # -- waiting and reading ---------------------------------------------------------

    async def wait_for(self, check: Callable[[], Any], within: float = 10.0) -> Any:
        return await wait_until(check, self._changed, within, str(check))

    async def reply(self, token: str, within: float = 10.0) -> tuple[Reply, dict[str, Any]]:
        """Wait until the interaction `token` got its final visible answer."""

        def done() -> dict[str, Any] | None:
            reply = self.replies.get(token)
            return reply.final if reply else None

        final = await self.wait_for(done, within)
        return self.replies[token], final

    def calls_to(self, method: str, pattern: str) -> list[Call]:
        regex = re.compile(pattern)
        return [c for c in self.calls if c.method == method and regex.fullmatch(c.path)]

    def keep(self, message: dict[str, Any]) -> None:
        """Store a message the fake made, by id and in its channel's list."""
        self.messages[message["id"]] = message
        self._in_channel.setdefault(message["channel_id"], []).append(message)

    def posted(self, channel_id: str) -> list[dict[str, Any]]:
        """Messages created in the channel (their current state), oldest first."""
        return list(self._in_channel.get(channel_id, ()))

    def questions(self, channel_id: str) -> list[dict[str, Any]]:
        return [m for m in self.posted(channel_id) if buttons_of(m)]

    # -- injecting interactions ------------------------------------------------------

    def _interaction(
        self, kind: int, guild_id: str, channel_id: str, user_id: str, data: dict[str, Any]
    ) -> tuple[str, dict[str, Any]]:
        guild = self.guilds[guild_id]
        member = guild.members[user_id]
        token = f"itoken-{next(self._ids)}"
        self.replies[token] = Reply()
        payload = {
            "id": str(next(self._ids)),
            "application_id": APP_ID,
            "type": kind,
            "data": data,
            "guild_id": guild_id,
            "guild": {"id": guild_id, "locale": "en-US", "features": []},
            "channel_id": channel_id,
            "channel": guild.channel(channel_id),
            "member": member.payload(),
            "token": token,
            "version": 1,
            "app_permissions": str(BOT_PERMISSIONS),
            "locale": self.member_locales.get(user_id, "en-US"),
            "guild_locale": "en-US",
            "entitlements": [],
            "authorizing_integration_owners": {"0": guild_id},
            "context": 0,
            "attachment_size_limit": 10 * 1024 * 1024,
        }
        return token, payload

    async def slash(
        self,
        guild_id: str,
        channel_id: str,
        user_id: str,
        path: str,
        options: dict[str, Any] | None = None,
        *,
        resolved: dict[str, Any] | None = None,
        focused: str | None = None,
    ) -> str:
        """Inject `/quiz <path> options…` (path "start" or "config set"); returns the token.

        With `focused`, it is an autocomplete request for that option instead."""
        command = self.command_payload("quiz", guild_id)
        leaf: list[dict[str, Any]] = []
        for key, value in (options or {}).items():
            option = self._option_spec(command, path, key)
            entry: dict[str, Any] = {"name": key, "type": option["type"], "value": value}
            if key == focused:
                entry["focused"] = True
            leaf.append(entry)
        names = path.split()
        nested: list[dict[str, Any]] = leaf
        for depth, name in reversed(list(enumerate(names))):
            nested = [{"name": name, "type": 2 if depth < len(names) - 1 else 1, "options": nested}]
        data: dict[str, Any] = {
            "id": command["id"],
            "name": "quiz",
            "type": 1,
            "options": nested,
        }
        if command.get("guild_id"):
            data["guild_id"] = command["guild_id"]
        if resolved:
            data["resolved"] = resolved
        token, payload = self._interaction(4 if focused else 2, guild_id, channel_id, user_id, data)
        await self.dispatch("INTERACTION_CREATE", payload)
        return token

    async def click(self, guild_id: str, user_id: str, message_id: str, custom_id: str) -> str:
        """Inject a button click on a message the bot posted; returns the token."""
        message = self.messages[message_id]
        data = {"custom_id": custom_id, "component_type": 2}
        token, payload = self._interaction(3, guild_id, message["channel_id"], user_id, data)
        payload["message"] = message
        await self.dispatch("INTERACTION_CREATE", payload)
        return token

    async def click_reply(
        self, guild_id: str, channel_id: str, user_id: str, shown: dict[str, Any], custom_id: str
    ) -> str:
        """Click a button on a private reply the bot gave (`shown`, a reply's
        final payload): such messages are ephemeral and not in the channel."""
        message = self._message(channel_id, shown, EPHEMERAL)
        data = {"custom_id": custom_id, "component_type": 2}
        token, payload = self._interaction(3, guild_id, channel_id, user_id, data)
        payload["message"] = message
        await self.dispatch("INTERACTION_CREATE", payload)
        return token

    async def submit_modal(
        self,
        guild_id: str,
        channel_id: str,
        user_id: str,
        modal: dict[str, Any],
        values: dict[str, str],
    ) -> str:
        """Submit a modal the bot opened, with `values` typed into its inputs
        (by custom_id; inputs not named keep the text the bot filled in). Sent
        as Discord sends them now: each input inside its label (type 18)."""
        components = []
        for label in modal.get("components") or []:
            inner = label.get("component") or (label.get("components") or [{}])[0]
            key = inner["custom_id"]
            value = values.get(key, inner.get("value") or "")
            components.append(
                {"type": 18, "component": {"type": 4, "custom_id": key, "value": value}}
            )
        data = {"custom_id": modal["custom_id"], "components": components}
        token, payload = self._interaction(5, guild_id, channel_id, user_id, data)
        await self.dispatch("INTERACTION_CREATE", payload)
        return token

    async def modal(self, token: str, within: float = 10.0) -> dict[str, Any]:
        """Wait until the interaction `token` was answered with a modal."""

        def opened() -> dict[str, Any] | None:
            reply = self.replies.get(token)
            return reply.modal if reply else None

        found: dict[str, Any] = await self.wait_for(opened, within)
        return found

    def direct_messages(self, user_id: str) -> list[dict[str, Any]]:
        channel = self.dm_channels.get(user_id)
        return self.posted(channel) if channel else []

    def command_payload(self, name: str, guild_id: str) -> dict[str, Any]:
        for scope in (guild_id, "global"):
            for command in self.commands.get(scope, []):
                if command["name"] == name:
                    return command
        raise AssertionError(f"/{name} was never synced")

    @staticmethod
    def _option_spec(command: dict[str, Any], path: str, key: str) -> dict[str, Any]:
        options = command.get("options", [])
        for name in path.split():
            options = next(o for o in options if o["name"] == name).get("options", [])
        for option in options:
            if option["name"] == key:
                return option
        raise AssertionError(f"/quiz {path} has no option {key}")

    async def dispatch(self, event: str, data: dict[str, Any]) -> None:
        """Send an event on the socket of the shard serving its server."""
        guild_id = data.get("guild_id")

        def session() -> GatewaySession | None:
            serving = [s for s in self.sessions if guild_id is None or s.serves(str(guild_id))]
            return serving[-1] if serving else None

        found: GatewaySession = await self.wait_for(session, 5.0)
        await self._send_event(found, event, data)

    # -- REST ------------------------------------------------------------------------

    @web.middleware
    async def _record(
        self, request: web.Request, handler: Callable[[web.Request], Any]
    ) -> web.StreamResponse:
        if request.path.startswith("/gateway"):
            response: web.StreamResponse = await handler(request)
            return response
        path = request.path.removeprefix("/api/v10")
        body: Any = None
        if request.can_read_body:
            body = await self._read_body(request)
        request[BODY] = body
        response = (
            await self._stalled(request.method, path)
            or self._injected_failure(request.method, path, before=True)
            or await handler(request)
        )
        response = self._injected_failure(request.method, path, before=False) or response
        self.calls.append(Call(request.method, path, dict(request.query), body, response.status))
        self._changed.set()
        return response

    @staticmethod
    async def _read_body(request: web.Request) -> Any:
        if request.content_type == JSON:
            return await request.json()
        if request.content_type.startswith("multipart/"):
            form = await request.post()
            body = json.loads(str(form.get("payload_json", "{}")))
            files = {
                value.filename: value.file.read()
                for value in form.values()
                if isinstance(value, web.FileField)
            }
            if files:
                body[UPLOADS] = files
            return body
        return await request.text()

    def _injected_failure(self, method: str, path: str, *, before: bool) -> web.Response | None:
        for failure in self.failures:
            if failure.after_work == before:
                continue
            if failure.times > 0 and failure.method == method and failure.pattern.fullmatch(path):
                failure.times -= 1
                if failure.status == 429:
                    return _json(
                        {
                            "message": "You are being rate limited.",
                            "retry_after": failure.retry_after,
                            "global": False,
                        },
                        status=429,
                        headers={
                            "Via": "1.1 google",
                            "Retry-After": str(max(1, round(failure.retry_after))),
                            "X-RateLimit-Limit": "5",
                            "X-RateLimit-Remaining": "0",
                            "X-RateLimit-Reset-After": str(failure.retry_after),
                            "X-RateLimit-Bucket": "fake-bucket",
                            "X-RateLimit-Scope": "user",
                        },
                    )
                words = {403: ("Missing Access", 50001), 404: ("Unknown Channel", 10003)}
                message, code = words.get(failure.status, ("Error", 0))
                return _json({"message": message, "code": code}, status=failure.status)
        return None

    def _authorized(self, request: web.Request) -> bool:
        return request.headers.get("Authorization") == f"Bot {self.token}" and not self.reject_token

    def _bot_user(self) -> dict[str, Any]:
        return {
            "id": BOT_ID,
            "username": "quizmaster",
            "global_name": "Quizmaster",
            "discriminator": "0",
            "avatar": None,
            "bot": True,
            "flags": 0,
            "mfa_enabled": False,
            "verified": True,
        }

    async def _me(self, request: web.Request) -> web.Response:
        if not self._authorized(request):
            return _json({"message": "401: Unauthorized", "code": 0}, status=401)
        return _json(self._bot_user())

    async def _application(self, _request: web.Request) -> web.Response:
        return _json(
            {
                "id": APP_ID,
                "name": "Quizmaster",
                "description": "",
                "icon": None,
                "bot_public": True,
                "bot_require_code_grant": False,
                "owner": {"id": "1", "username": "owner", "discriminator": "0", "avatar": None},
                "verify_key": "00",
                "flags": 0,
                "interactions_endpoint_url": None,
            }
        )

    async def _gateway_bot(self, _request: web.Request) -> web.Response:
        return _json(
            {
                "url": self.gateway_url.rstrip("/"),
                "shards": self.recommended_shards,
                "session_start_limit": {
                    "total": 1000,
                    "remaining": 999,
                    "reset_after": 0,
                    "max_concurrency": self.max_concurrency,
                },
            }
        )

    async def _put_commands(self, request: web.Request) -> web.Response:
        scope = request.match_info.get("guild", "global")
        synced = []
        for command in request[BODY]:
            made = {**command, "id": str(next(self._ids)), "application_id": APP_ID, "version": "1"}
            if scope != "global":
                made["guild_id"] = scope
            synced.append(made)
        self.commands[scope] = synced
        return _json(synced)

    def _message(self, channel_id: str, body: dict[str, Any], flags: int = 0) -> dict[str, Any]:
        guild_id = next((g.id for g in self.guilds.values() if channel_id in g.channels), None)
        message = {
            "id": str(next(self._ids)),
            "channel_id": channel_id,
            "author": self._bot_user(),
            "content": body.get("content") or "",
            "timestamp": datetime.now(UTC).isoformat(),
            "edited_timestamp": None,
            "tts": False,
            "mention_everyone": False,
            "mentions": [],
            "mention_roles": [],
            "attachments": [],
            "embeds": body.get("embeds") or [],
            "components": body.get("components") or [],
            "pinned": False,
            "type": 0,
            "flags": int(body.get("flags") or 0) | flags,
        }
        if guild_id:
            message["guild_id"] = guild_id
        return message

    async def _post_message(self, request: web.Request) -> web.Response:
        body = request[BODY]
        channel = request.match_info["channel"]
        nonce = body.get("nonce")
        if nonce is not None and body.get("enforce_nonce"):
            # Discord returns the message already made with this nonce instead
            # of making another (it remembers nonces for a few minutes).
            for existing in self.posted(channel):
                if existing.get("nonce") == nonce:
                    return _json(existing)
        message = self._message(channel, body)
        if nonce is not None:
            message["nonce"] = nonce
        self.keep(message)
        return _json(message)

    async def _open_dm(self, request: web.Request) -> web.Response:
        user_id = str(request[BODY]["recipient_id"])
        member = next(
            (g.members[user_id] for g in self.guilds.values() if user_id in g.members), None
        )
        if member is None:
            return _json({"message": "Unknown User", "code": 10013}, status=404)
        channel = self.dm_channels.setdefault(user_id, str(next(self._ids)))
        return _json(
            {"id": channel, "type": 1, "last_message_id": None, "recipients": [member.user()]}
        )

    async def _patch_message(self, request: web.Request) -> web.Response:
        message = self.messages.get(request.match_info["message"])
        if message is None:
            return _json({"message": "Unknown Message", "code": 10008}, status=404)
        for key in ("content", "embeds", "components", "flags"):
            if key in request[BODY]:
                message[key] = request[BODY][key]
        message["edited_timestamp"] = datetime.now(UTC).isoformat()
        return _json(message)

    async def _get_message(self, request: web.Request) -> web.Response:
        message = self.messages.get(request.match_info["message"])
        if message is None or message["channel_id"] != request.match_info["channel"]:
            return _json({"message": "Unknown Message", "code": 10008}, status=404)
        return _json(message)

    async def _callback(self, request: web.Request) -> web.Response:
        token = request.match_info["token"]
        reply = self.replies.get(token)
        if reply is None:
            return _json({"message": "Unknown interaction", "code": 10062}, status=404)
        if reply.callback_type is not None:
            return _json(
                {"message": "Interaction has already been acknowledged.", "code": 40060},
                status=400,
            )
        body = request[BODY]
        reply.callback_type = int(body["type"])
        reply.callback = body
        data = body.get("data") or {}
        flags = int(data.get("flags") or 0)
        answer: dict[str, Any] = {
            "interaction": {
                "id": request.match_info["id"],
                "type": 2,
                "response_message_loading": reply.callback_type == 5,
                "response_message_ephemeral": bool(flags & EPHEMERAL),
            }
        }
        if reply.callback_type in (4, 5):
            message = self._message("0", data if reply.callback_type == 4 else {}, flags)
            answer["interaction"]["response_message_id"] = message["id"]
            answer["resource"] = {"type": reply.callback_type, "message": message}
        return _json(answer)

    async def _followup(self, request: web.Request) -> web.Response:
        reply = self.replies.get(request.match_info["token"])
        if reply is None:
            return _json({"message": "Unknown Webhook", "code": 10015}, status=404)
        reply.followups.append(request[BODY])
        return _json(self._message("0", request[BODY]))

    async def _edit_original(self, request: web.Request) -> web.Response:
        reply = self.replies.get(request.match_info["token"])
        if reply is None:
            return _json({"message": "Unknown Webhook", "code": 10015}, status=404)
        reply.original_edits.append(request[BODY])
        return _json(self._message("0", request[BODY]))

    async def _delete_original(self, _request: web.Request) -> web.Response:
        return web.Response(status=204)

    async def _get_member(self, request: web.Request) -> web.Response:
        guild = self.guilds.get(request.match_info["guild"])
        member = guild.members.get(request.match_info["user"]) if guild else None
        if member is None:
            return _json({"message": "Unknown Member", "code": 10007}, status=404)
        return _json(member.payload(with_permissions=False))

    # -- gateway ---------------------------------------------------------------------

    async def _gateway(self, request: web.Request) -> web.StreamResponse:
        if self.refused_gateways > 0:
            self.refused_gateways -= 1
            self._changed.set()
            return _json({"message": "Service Unavailable", "code": 0}, status=503)
        socket = web.WebSocketResponse()
        await socket.prepare(request)
        session = GatewaySession(socket)
        self.sessions.append(session)
        await socket.send_json({"op": 10, "d": {"heartbeat_interval": 41250}, "s": None, "t": None})
        try:
            async for frame in socket:
                if frame.type is not WSMsgType.TEXT:
                    continue
                await self._on_gateway(session, json.loads(frame.data))
        finally:
            if session in self.sessions:
                self.sessions.remove(session)
            self._changed.set()
        return socket

    async def _on_gateway(self, session: GatewaySession, message: dict[str, Any]) -> None:
        op = message.get("op")
        if op == 1:
            self.heartbeats += 1
            await session.socket.send_json({"op": 11, "d": None, "s": None, "t": None})
        elif op == 2:
            self.identifies.append(message["d"])
            shard_id, count = message["d"].get("shard") or (0, 1)
            session.shard, session.seq = (int(shard_id), int(count)), 0
            self.identified_at.append((session.shard[0], asyncio.get_running_loop().time()))
            own = [guild for guild in self.guilds.values() if session.serves(guild.id)]
            await self._send_event(
                session,
                "READY",
                {
                    "v": 10,
                    "user": self._bot_user(),
                    "guilds": [{"id": guild.id, "unavailable": True} for guild in own],
                    "session_id": f"fake-session-{shard_id}-{count}",
                    "resume_gateway_url": self.gateway_url,
                    "application": {"id": APP_ID, "flags": 0},
                    "private_channels": [],
                    "relationships": [],
                    "shard": list(session.shard),
                },
            )
            for guild in own:
                await self._send_event(session, "GUILD_CREATE", guild.payload())
        elif op == 6:
            self.resumes.append(message["d"])
            # The session id names the shard it was made for.
            _, _, shard_id, count = str(message["d"]["session_id"]).split("-")
            session.shard = (int(shard_id), int(count))
            session.seq = int(message["d"].get("seq") or 0)
            await self._send_event(session, "RESUMED", {})
        self._changed.set()

    async def _send_event(self, session: GatewaySession, event: str, data: Any) -> None:
        session.seq += 1
        await session.socket.send_json({"op": 0, "t": event, "s": session.seq, "d": data})
