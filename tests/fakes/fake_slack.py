"""A local fake of the Slack platform for tests that run the real slack-bolt.

- `FakeSlack`: the Web API (`/api/<method>`) on 127.0.0.1 and a random port,
  a Socket Mode websocket (`/socket`, handed out by apps.connections.open)
  response_url endpoints (`/response/<key>`) and the file upload URLs that
  files.getUploadURLExternal hands out (`/upload/<file id>`), with the
  direct messages conversations.open opens. It records every call and
  can answer with 429s, HTTP 5xx or errors such as channel_not_found, or hold
  calls unanswered until released.
- Many workspaces: `add_workspace` makes another team (optionally of an
  Enterprise Grid organisation); `/oauth/v2/authorize` approves an install for
  the team given in `?team=` and redirects to `redirect_url` with a code that
  `oauth.v2.access` trades for that team's own bot token (rotating, with a
  refresh token, when `rotating` is set); each token speaks only for its team,
  `auth.test` says which, and `uninstall` revokes a team's tokens.
- `SignedSender`: sends signed HTTP requests to Bolt's /slack/events, as Slack does.
- `slash_payload` / `click_payload` / `view_submission_payload`: what Slack sends
  for `/quiz …`, a button click and a submitted modal (opened with views.open,
  whose views the fake keeps in `FakeSlack.views`).
"""

from __future__ import annotations

import asyncio
import base64
import html
import itertools
import json
import re
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

import aiohttp
from aiohttp import web
from slack_sdk.signature import SignatureVerifier

from tests.fakes.listening import listen
from tests.fakes.waiting import wait_until

BOT_TOKEN = "xoxb-fake-bot-token"
APP_TOKEN = "xapp-fake-app-token"
SIGNING_SECRET = "fake-signing-secret"
TEAM = "T0TEAM"
BOT_USER = "U0BOT"


CLIENT_ID = "1111.2222"
CLIENT_SECRET = "fake-client-secret"


@dataclass
class Workspace:
    team: str
    name: str
    enterprise: str | None = None


@dataclass
class Call:
    method: str
    params: dict[str, Any]
    token: str | None
    at: float = field(default_factory=time.monotonic)
    status: int = 200
    error: str | None = None
    result: dict[str, Any] = field(default_factory=dict)  # what the fake answered
    team: str | None = None  # the workspace the call's token speaks for

    @property
    def channel(self) -> str | None:
        value = self.params.get("channel")
        return str(value) if value is not None else None

    @property
    def text(self) -> str:
        return html.unescape(str(self.params.get("text", "")))

    @property
    def blocks(self) -> list[dict[str, Any]]:
        blocks = self.params.get("blocks") or []
        return json.loads(blocks) if isinstance(blocks, str) else list(blocks)

    def buttons(self) -> dict[str, str]:
        """Button label → value, from the message's actions blocks."""
        return buttons_in(self.blocks)


def buttons_in(blocks: list[dict[str, Any]]) -> dict[str, str]:
    """Button label → value in Block Kit blocks."""
    found = {}
    for block in blocks:
        if block.get("type") == "actions":
            for element in block["elements"]:
                found[element["text"]["text"]] = element["value"]
    return found


@dataclass
class SharedFile:
    """A file the bot uploaded and shared (files_upload_v2's three steps)."""

    file_id: str
    filename: str
    data: bytes
    channel: str | None = None
    initial_comment: str | None = None


@dataclass
class _Fault:
    """Something done to calls of `method` (in `channel`, if given), `remaining` times."""

    method: str
    channel: str | None
    remaining: int | None  # None: for good

    def take(self, method: str, channel: str | None) -> bool:
        """Whether this call meets the fault (using up one of its times)."""
        if self.method != method or self.remaining == 0:
            return False
        if self.channel is not None and self.channel != channel:
            return False
        if self.remaining is not None:
            self.remaining -= 1
        return True


@dataclass
class _Failure(_Fault):
    error: str = "internal_error"


@dataclass
class _ServerError(_Fault):
    status: int = 503


def _first(faults: list[Any], method: str, channel: str | None) -> Any:
    return next((fault for fault in faults if fault.take(method, channel)), None)


class FakeSlack:
    def __init__(self) -> None:
        self.calls: list[Call] = []
        self.responses: list[tuple[str, dict[str, Any]]] = []  # (response_url key, body)
        self.users: dict[str, dict[str, Any]] = {}
        self.locales: dict[str, str] = {}  # sent only when asked (include_locale)
        self.groups: dict[str, dict[str, Any]] = {}
        self.acks: dict[str, dict[str, Any]] = {}
        self.sockets: list[web.WebSocketResponse] = []
        self.socket_opened = asyncio.Event()
        self._failures: list[_Failure] = []
        self._server_errors: list[_ServerError] = []
        self._hangs: list[_Fault] = []
        self._released = asyncio.Event()
        self.hanging: list[Call] = []  # calls held unanswered right now
        self._rate_limits: dict[str, tuple[int, int]] = {}  # method → (times, retry_after)
        self._messages: dict[tuple[str, str], dict[str, Any]] = {}
        self.views: list[dict[str, Any]] = []  # modals opened with views.open, oldest first
        self._triggers: set[str] = set()
        self._ts = itertools.count(1)
        # Uploads by file id; the direct message channel opened for each user.
        self.files: dict[str, SharedFile] = {}
        self.direct_channels: dict[str, str] = {}
        self._changed = asyncio.Event()
        self._runner: web.AppRunner | None = None
        self.port = 0
        # Workspaces, and which team each live bot token speaks for.
        self.workspaces: dict[str, Workspace] = {TEAM: Workspace(TEAM, "Fake")}
        self.tokens: dict[str, str] = {BOT_TOKEN: TEAM}
        self.redirect_url = ""  # the app's OAuth redirect (its /slack/oauth_redirect)
        self.rotating = False  # installs hand out expiring tokens with refresh tokens
        self._codes: dict[str, str] = {}  # OAuth code → team
        self._refresh: dict[str, str] = {}  # refresh token → team
        self._minted = itertools.count(1)

    # -- set-up -----------------------------------------------------------------

    async def start(self) -> FakeSlack:
        app = web.Application()
        app.router.add_route("*", "/api/{method}", self._api)
        app.router.add_post("/response/{key}", self._response_url)
        app.router.add_post("/upload/{file_id}", self._upload)
        app.router.add_get("/socket", self._socket)
        app.router.add_get("/oauth/v2/authorize", self._authorize)
        self._runner, self.port = await listen(app)
        return self

    async def close(self) -> None:
        self.release()  # nothing held may outlive the test
        for socket in self.sockets:
            await socket.close()
        if self._runner is not None:
            await self._runner.cleanup()

    @property
    def api_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/api/"

    def response_url(self, key: str) -> str:
        return f"http://127.0.0.1:{self.port}/response/{key}"

    def add_workspace(self, team: str, name: str, enterprise: str | None = None) -> Workspace:
        workspace = Workspace(team, name, enterprise)
        self.workspaces[team] = workspace
        return workspace

    def uninstall(self, team: str) -> None:
        """The workspace removed the app: its tokens stop working."""
        for token, owner in list(self.tokens.items()):
            if owner == team:
                del self.tokens[token]

    def calls_in(self, team: str, method: str) -> list[Call]:
        """Successful calls of `method` made with `team`'s token."""
        return [c for c in self.calls if c.method == method and c.team == team and not c.error]

    async def _authorize(self, request: web.Request) -> web.Response:
        """The member approves the install in the workspace `?team=` names, or
        for a whole Enterprise Grid organisation with `?org=E…` (org-wide)."""
        team = request.query.get("org") or request.query.get("team", TEAM)
        organisations = {w.enterprise for w in self.workspaces.values()}
        if request.query.get("client_id") != CLIENT_ID or (
            team not in self.workspaces and team not in organisations
        ):
            return web.Response(status=400, text="bad install request")
        code = f"code-{uuid.uuid4().hex[:8]}"
        self._codes[code] = team
        state = request.query.get("state", "")
        raise web.HTTPFound(f"{self.redirect_url}?{urlencode({'code': code, 'state': state})}")

    def _mint(self, team: str) -> dict[str, Any]:
        token = f"xoxb-{team}-{next(self._minted)}"
        self.tokens[token] = team
        granted: dict[str, Any] = {"access_token": token}
        if self.rotating:
            refresh = f"xoxe-{team}-{next(self._minted)}"
            self._refresh[refresh] = team
            granted |= {"refresh_token": refresh, "expires_in": 600}
        return granted

    def _oauth_access(self, request: web.Request, params: dict[str, Any]) -> dict[str, Any]:
        auth = aiohttp.BasicAuth.decode(request.headers.get("Authorization", ""))
        if (auth.login, auth.password) != (CLIENT_ID, CLIENT_SECRET):
            return {"ok": False, "error": "invalid_client_id"}
        if params.get("grant_type") == "refresh_token":
            team = self._refresh.pop(str(params.get("refresh_token")), None)
            if team is None:
                return {"ok": False, "error": "invalid_refresh_token"}
            return {"ok": True, "token_type": "bot", **self._mint(team), "team": {"id": team}}
        team = self._codes.pop(str(params.get("code")), None)
        if team is None:
            return {"ok": False, "error": "invalid_code"}
        if team not in self.workspaces:  # an organisation: one token for all its workspaces
            return {
                "ok": True,
                **self._mint(team),
                "token_type": "bot",
                "scope": "chat:write,commands,users:read,usergroups:read,im:write,files:write",
                "bot_user_id": f"U0BOT{team}",
                "app_id": "A0QUIZ",
                "team": None,
                "enterprise": {"id": team, "name": "Org"},
                "is_enterprise_install": True,
                "authed_user": {"id": "U0INSTALLER"},
            }
        workspace = self.workspaces[team]
        enterprise = {"id": workspace.enterprise, "name": "Org"} if workspace.enterprise else None
        return {
            "ok": True,
            **self._mint(team),
            "token_type": "bot",
            "scope": "chat:write,commands,users:read,usergroups:read,im:write,files:write",
            "bot_user_id": f"U0BOT{team}",
            "app_id": "A0QUIZ",
            "team": {"id": team, "name": workspace.name},
            "enterprise": enterprise,
            "is_enterprise_install": False,
            "authed_user": {"id": "U0INSTALLER"},
        }

    def add_user(
        self,
        user_id: str,
        name: str,
        *,
        admin: bool = False,
        owner: bool = False,
        locale: str = "en-US",
    ) -> None:
        self.locales[user_id] = locale
        self.users[user_id] = {
            "id": user_id,
            "team_id": TEAM,
            "name": name.lower(),
            "real_name": name,
            "is_admin": admin,
            "is_owner": owner,
            "profile": {"display_name": name, "real_name": name},
        }

    def _users_page(self, params: dict[str, Any]) -> dict[str, Any]:
        """users.list as Slack pages it: `limit` members from the opaque
        `cursor` on, and the next cursor ("" on the last page)."""
        limit = max(1, min(int(params.get("limit") or 100), 1000))
        cursor = str(params.get("cursor") or "")
        start = int(base64.b64decode(cursor).decode().removeprefix("user:")) if cursor else 0
        ids = list(self.users)
        locale = str(params.get("include_locale", "")).lower() in ("1", "true")
        members = [self.users[user_id] for user_id in ids[start : start + limit]]
        if locale:
            members = [
                {**user, "locale": self.locales.get(user["id"], "en-US")} for user in members
            ]
        after = start + limit
        following = base64.b64encode(f"user:{after}".encode()).decode() if after < len(ids) else ""
        return {"ok": True, "members": members, "response_metadata": {"next_cursor": following}}

    def add_group(self, group_id: str, handle: str, members: list[str]) -> None:
        self.groups[group_id] = {"id": group_id, "handle": handle, "users": list(members)}

    def fail(
        self, method: str, error: str, *, channel: str | None = None, times: int | None = None
    ) -> None:
        """Answer `method` (in `channel`, if given) with `error`, `times` times or for good."""
        self._failures.append(_Failure(method, channel, times, error))

    def server_error(
        self, method: str, status: int = 503, *, channel: str | None = None, times: int = 1
    ) -> None:
        """Answer the next `times` calls of `method` (in `channel`) with HTTP `status`
        and an HTML body, as Slack's load balancers do."""
        self._server_errors.append(_ServerError(method, channel, times, status))

    def hang(self, method: str, channel: str | None = None, times: int | None = None) -> None:
        """Leave calls of `method` (in `channel`; `times` of them or all) unanswered
        until `release()`. A held call whose caller gave up meanwhile is recorded
        as abandoned and changes nothing; one still awaited is then answered."""
        self._hangs.append(_Fault(method, channel, times))

    def release(self) -> None:
        """Answer every held call and hold no more."""
        self._hangs.clear()
        self._released.set()
        self._released = asyncio.Event()

    def rate_limit(self, method: str, *, times: int = 1, retry_after: int = 1) -> None:
        """Answer the next `times` calls of `method` with HTTP 429 and Retry-After."""
        self._rate_limits[method] = (times, retry_after)

    # -- reading what happened ------------------------------------------------------

    def calls_to(self, method: str, channel: str | None = None, *, ok: bool = True) -> list[Call]:
        return [
            call
            for call in self.calls
            if call.method == method
            and (channel is None or call.channel == channel)
            and (not ok or (call.status == 200 and call.error is None))
        ]

    def posts(self, channel: str | None = None) -> list[Call]:
        return self.calls_to("chat.postMessage", channel)

    def questions(self, channel: str | None = None) -> list[Call]:
        return [call for call in self.posts(channel) if call.buttons()]

    def ephemerals(self, user: str | None = None) -> list[Call]:
        return [
            call
            for call in self.calls_to("chat.postEphemeral")
            if user is None or call.params.get("user") == user
        ]

    def shared_files(self, channel: str | None = None) -> list[SharedFile]:
        """Files uploaded and shared (completed), in `channel` if given."""
        return [
            shared
            for shared in self.files.values()
            if shared.channel is not None and (channel is None or shared.channel == channel)
        ]

    def direct_messages(self, user: str) -> list[Call]:
        """Messages to a member's direct conversation with the app (channel = user id)."""
        return self.posts(user)

    def responses_to(self, key: str) -> list[dict[str, Any]]:
        return [body for found, body in self.responses if found == key]

    async def wait_for(
        self, check: Callable[[], Any], within: float = 10.0, what: str = "a call"
    ) -> Any:
        """Wait until `check()` returns something truthy, and return it."""
        return await wait_until(check, self._changed, within, what)

    def _record(self, call: Call) -> None:
        self.calls.append(call)
        self._changed.set()

    # -- Socket Mode ------------------------------------------------------------------

    async def send_envelope(self, kind: str, payload: dict[str, Any], *, retry: int = 0) -> str:
        """Push an envelope (slash_commands, interactive) to the connected app."""
        await asyncio.wait_for(self.socket_opened.wait(), 10)
        envelope_id = str(uuid.uuid4())
        envelope = {
            "envelope_id": envelope_id,
            "type": kind,
            "accepts_response_payload": kind == "slash_commands"
            or payload.get("type") == "view_submission",
            "retry_attempt": retry,
            "retry_reason": "timeout" if retry else "",
            "payload": payload,
        }
        await self.sockets[-1].send_str(json.dumps(envelope))
        return envelope_id

    async def _socket(self, request: web.Request) -> web.WebSocketResponse:
        socket = web.WebSocketResponse()
        await socket.prepare(request)
        self.sockets.append(socket)
        await socket.send_str(
            json.dumps(
                {
                    "type": "hello",
                    "num_connections": len(self.sockets),
                    "connection_info": {"app_id": "A0QUIZ"},
                    "debug_info": {"host": "fake"},
                }
            )
        )
        self.socket_opened.set()
        async for message in socket:
            if message.type == aiohttp.WSMsgType.TEXT:
                data = json.loads(message.data)
                if "envelope_id" in data:
                    self.acks[data["envelope_id"]] = data.get("payload") or {}
                    self._changed.set()
        return socket

    # -- response_url -------------------------------------------------------------------

    async def _response_url(self, request: web.Request) -> web.Response:
        self.responses.append((request.match_info["key"], await request.json()))
        self._changed.set()
        return web.Response(text="ok")

    # -- file uploads ---------------------------------------------------------------------

    async def _upload(self, request: web.Request) -> web.Response:
        shared = self.files.get(request.match_info["file_id"])
        if shared is None:
            return web.Response(status=404, text="unknown upload")
        shared.data = await request.read()
        self._changed.set()
        return web.Response(text="OK - 200")

    def _complete_upload(self, params: dict[str, Any]) -> dict[str, Any]:
        listed = params.get("files") or "[]"
        entries = json.loads(listed) if isinstance(listed, str) else list(listed)
        done = []
        for entry in entries:
            shared = self.files.get(str(entry.get("id")))
            if shared is None:
                return {"ok": False, "error": "file_not_found"}
            channel = params.get("channel_id")
            if channel is not None and channel not in self.direct_channels.values():
                return {"ok": False, "error": "channel_not_found"}
            shared.channel = str(channel) if channel is not None else None
            shared.initial_comment = params.get("initial_comment")
            done.append({"id": shared.file_id, "title": entry.get("title") or shared.filename})
        return {"ok": True, "files": done}

    # -- the Web API --------------------------------------------------------------------

    async def _api(self, request: web.Request) -> web.Response:
        method = request.match_info["method"]
        params: dict[str, Any] = dict(request.query)
        if request.method == "POST" and request.can_read_body:
            if request.content_type == "application/json":
                params.update(await request.json())
            else:
                params.update(dict(await request.post()))
        if method == "oauth.v2.access":
            answer = self._oauth_access(request, params)
            self._record(Call(method, params, None, error=answer.get("error")))
            return web.json_response(answer)
        auth = request.headers.get("Authorization", "")
        token = auth.removeprefix("Bearer ") if auth.startswith("Bearer ") else None
        token = token or params.pop("token", None)
        call = Call(method, params, token, team=self.tokens.get(token or ""))

        held = _first(self._hangs, method, call.channel) is not None
        if held and not await self._held(call, request):
            return web.Response(status=499)  # nobody reads it
        server_error = _first(self._server_errors, method, call.channel)
        if server_error is not None:
            call.status = server_error.status
            self._record(call)
            return web.Response(
                status=server_error.status,
                text="<html><body>Service Unavailable</body></html>",
                content_type="text/html",
            )
        limited = self._rate_limits.get(method)
        if limited and limited[0] > 0:
            self._rate_limits[method] = (limited[0] - 1, limited[1])
            call.status = 429
            self._record(call)
            return web.json_response(
                {"ok": False, "error": "ratelimited"},
                status=429,
                headers={"Retry-After": str(limited[1])},
            )
        error = self._injected_error(method, call.channel)
        if error is None:
            if method == "apps.connections.open":
                if token != APP_TOKEN:
                    error = "invalid_auth"
            elif call.team is None:
                error = "invalid_auth"
        if error is not None:
            call.error = error
            self._record(call)
            return web.json_response({"ok": False, "error": error})
        body = self._answer(method, params, call.team or TEAM)
        call.result = body
        if not body.get("ok"):
            call.error = str(body.get("error"))
        self._record(call)
        return web.json_response(body)

    async def _held(self, call: Call, request: web.Request) -> bool:
        """Hold `call` until released; whether its caller is still waiting."""
        self.hanging.append(call)
        self._changed.set()
        try:
            await self._released.wait()
        finally:
            self.hanging.remove(call)
        transport = request.transport
        if transport is None or transport.is_closing():
            call.status, call.error = 499, "abandoned"
            self._record(call)
            return False
        return True

    def _injected_error(self, method: str, channel: str | None) -> str | None:
        failure = _first(self._failures, method, channel)
        return failure.error if failure is not None else None

    def _answer(self, method: str, params: dict[str, Any], team: str) -> dict[str, Any]:
        if method == "auth.test" and team not in self.workspaces:  # an org-wide token
            return {
                "ok": True,
                "team_id": None,
                "enterprise_id": team,
                "is_enterprise_install": True,
                "user_id": f"U0BOT{team}",
                "user": "quizmaster",
                "bot_id": f"B0BOT{team}",
                "url": "https://org.enterprise.slack.com/",
            }
        if method == "auth.test":
            workspace = self.workspaces[team]
            return {
                "ok": True,
                "team_id": team,
                "team": workspace.name,
                "enterprise_id": workspace.enterprise,
                "user_id": BOT_USER if team == TEAM else f"U0BOT{team}",
                "user": "quizmaster",
                "bot_id": "B0BOT" if team == TEAM else f"B0BOT{team}",
                "url": "https://fake.slack.com/",
            }
        if method == "apps.connections.open":
            return {"ok": True, "url": f"ws://127.0.0.1:{self.port}/socket"}
        if method == "chat.postMessage":
            number = next(self._ts)
            ts = f"{1_700_000_000 + number}.{number:06d}"
            self._messages[(str(params["channel"]), ts)] = params
            return {"ok": True, "channel": params["channel"], "ts": ts, "message": {"ts": ts}}
        if method == "chat.update":
            key = (str(params.get("channel")), str(params.get("ts")))
            if key not in self._messages:
                return {"ok": False, "error": "message_not_found"}
            self._messages[key] = params
            return {"ok": True, "channel": key[0], "ts": key[1]}
        if method == "chat.postEphemeral":
            return {"ok": True, "message_ts": f"{time.time():.6f}"}
        if method == "views.open":
            # A trigger id is good once, within three seconds of the command or click.
            trigger = str(params.get("trigger_id") or "")
            if not trigger.startswith("trigger-") or trigger in self._triggers:
                return {"ok": False, "error": "invalid_trigger_id"}
            self._triggers.add(trigger)
            view = params.get("view")
            view = json.loads(view) if isinstance(view, str) else dict(view or {})
            # As Slack's: the workspace that installed the app, whoever opened it.
            opened = {
                **view,
                "id": f"V{next(self._ts):08d}",
                "team_id": TEAM,
                "app_installed_team_id": TEAM,
            }
            self.views.append(opened)
            return {"ok": True, "view": opened}
        if method == "users.info":
            user_id = str(params.get("user"))
            user = self.users.get(user_id)
            if user is None:
                return {"ok": False, "error": "user_not_found"}
            if str(params.get("include_locale", "")).lower() in ("1", "true"):
                user = {**user, "locale": self.locales.get(user_id, "en-US")}
            return {"ok": True, "user": user}
        if method == "users.list":
            return self._users_page(params)
        if method == "conversations.open":
            user = str(params.get("users", ""))
            if user not in self.users:
                return {"ok": False, "error": "user_not_found"}
            channel = self.direct_channels.setdefault(user, f"D{user}")
            return {"ok": True, "channel": {"id": channel}}
        if method == "files.getUploadURLExternal":
            file_id = f"F{next(self._ts):08d}"
            self.files[file_id] = SharedFile(file_id, str(params.get("filename", "")), b"")
            return {
                "ok": True,
                "upload_url": f"http://127.0.0.1:{self.port}/upload/{file_id}",
                "file_id": file_id,
            }
        if method == "files.completeUploadExternal":
            return self._complete_upload(params)
        if method == "usergroups.list":
            groups = [{"id": g["id"], "handle": g["handle"]} for g in self.groups.values()]
            return {"ok": True, "usergroups": groups}
        if method == "usergroups.users.list":
            group = self.groups.get(str(params.get("usergroup")))
            if group is None:
                return {"ok": False, "error": "no_such_subteam"}
            return {"ok": True, "users": group["users"]}
        return {"ok": False, "error": "unknown_method"}


# -- what Slack sends to the app ------------------------------------------------------


def slash_payload(
    text: str, *, user: str, channel: str, response_url: str, team: str = TEAM
) -> dict[str, str]:
    return {
        "token": "legacy-verification-token",
        "team_id": team,
        "team_domain": "fake",
        "channel_id": channel,
        "channel_name": "quiz",
        "user_id": user,
        "user_name": user.lower(),
        "command": "/quiz",
        "text": text,
        "api_app_id": "A0QUIZ",
        "response_url": response_url,
        "trigger_id": f"trigger-{uuid.uuid4().hex[:8]}",
    }


def click_payload(
    value: str,
    label: str,
    *,
    user: str,
    channel: str,
    message_ts: str,
    response_url: str,
    team: str = TEAM,
) -> dict[str, Any]:
    return {
        "type": "block_actions",
        "team": {"id": team, "domain": "fake"},
        "user": {"id": user, "username": user.lower(), "name": user.lower(), "team_id": team},
        "api_app_id": "A0QUIZ",
        "token": "legacy-verification-token",
        "container": {
            "type": "message",
            "message_ts": message_ts,
            "channel_id": channel,
            "is_ephemeral": False,
        },
        "trigger_id": f"trigger-{uuid.uuid4().hex[:8]}",
        "channel": {"id": channel, "name": "quiz"},
        "message": {"type": "message", "ts": message_ts, "user": BOT_USER, "text": "question"},
        "response_url": response_url,
        "actions": [
            {
                "type": "button",
                "action_id": value,
                "block_id": "answers",
                "value": value,
                "text": {"type": "plain_text", "text": label},
                "action_ts": f"{time.time():.6f}",
            }
        ],
    }


def view_submission_payload(
    view: dict[str, Any], typed: dict[str, str], *, user: str, team: str = TEAM
) -> dict[str, Any]:
    """A modal the app opened, submitted with `typed` in its inputs (by block id;
    the others keep the text the app filled in)."""
    values = {}
    for block in view.get("blocks") or []:
        if block.get("type") != "input":
            continue
        element = block["element"]
        value = typed.get(block["block_id"], element.get("initial_value"))
        values[block["block_id"]] = {
            element["action_id"]: {"type": "plain_text_input", "value": value}
        }
    return {
        "type": "view_submission",
        "team": {"id": team, "domain": "fake"},
        "user": {"id": user, "username": user.lower(), "name": user.lower(), "team_id": team},
        "api_app_id": "A0QUIZ",
        "token": "legacy-verification-token",
        "trigger_id": f"trigger-{uuid.uuid4().hex[:8]}",
        "view": {**view, "state": {"values": values}, "hash": uuid.uuid4().hex},
        "response_urls": [],
        "is_enterprise_install": False,
    }


class SignedSender:
    """Posts to Bolt's /slack/events with Slack's request signature."""

    def __init__(self, url: str, secret: str = SIGNING_SECRET) -> None:
        self.url = url
        self.verifier = SignatureVerifier(secret)
        self.session = aiohttp.ClientSession()

    async def close(self) -> None:
        await self.session.close()

    async def post(
        self,
        body: str,
        *,
        timestamp: int | None = None,
        retry: int | None = None,
        signature: str | None = None,
    ) -> tuple[int, str]:
        stamp = str(int(time.time()) if timestamp is None else timestamp)
        headers = {
            "Content-Type": "application/x-www-form-urlencoded",
            "X-Slack-Request-Timestamp": stamp,
            "X-Slack-Signature": signature
            or self.verifier.generate_signature(timestamp=stamp, body=body),
        }
        if retry is not None:
            headers["X-Slack-Retry-Num"] = str(retry)
            headers["X-Slack-Retry-Reason"] = "http_timeout"
        async with self.session.post(self.url, data=body.encode(), headers=headers) as response:
            return response.status, await response.text()

    async def raw(self, body: bytes, headers: dict[str, str]) -> tuple[int, str]:
        """Posts `body` with exactly `headers`: what a forger or a broken proxy sends."""
        async with self.session.post(self.url, data=body, headers=headers) as response:
            return response.status, await response.text()

    def signed_headers(self, body: bytes, timestamp: int | None = None) -> dict[str, str]:
        stamp = str(int(time.time()) if timestamp is None else timestamp)
        signature = self.verifier.generate_signature(timestamp=stamp, body=body)
        assert signature is not None
        return {
            "Content-Type": "application/x-www-form-urlencoded",
            "X-Slack-Request-Timestamp": stamp,
            "X-Slack-Signature": signature,
        }

    async def slash(self, payload: dict[str, str], **options: Any) -> tuple[int, str]:
        return await self.post(urlencode(payload), **options)

    async def click(self, payload: dict[str, Any], **options: Any) -> tuple[int, str]:
        return await self.post(urlencode({"payload": json.dumps(payload)}), **options)


_OPTION = re.compile(r"^([A-E])\. (.+)$", re.MULTILINE)


def shown_options(call: Call) -> dict[str, str]:
    """Letter → option text, from a posted question's plain text fallback."""
    return dict(_OPTION.findall(call.text))
