"""The Slack platform for `quizmaster run`: a Bolt `AsyncApp` on the bot's loop,
connected by Socket Mode (SLACK_APP_TOKEN) or served over HTTP at /slack/events.

Bolt acks and routes; in HTTP mode `slack_http` verifies each request before
Bolt parses it. This module turns `/quiz` and the answer buttons into neutral
commands and clicks and delivers the replies. A click is acknowledged only once
its answer is stored, and closing waits for the work in flight.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import re
import time
from collections.abc import Awaitable, Callable
from typing import Any, ParamSpec

import aiohttp
from aiohttp import web
from slack_bolt.adapter.aiohttp import to_aiohttp_response
from slack_bolt.adapter.socket_mode.async_handler import AsyncSocketModeHandler
from slack_bolt.async_app import AsyncAck, AsyncApp, AsyncBoltContext, AsyncRespond
from slack_bolt.request.async_request import AsyncBoltRequest
from slack_sdk.errors import SlackApiError
from slack_sdk.http_retry.builtin_async_handlers import (
    AsyncConnectionErrorRetryHandler,
    AsyncRateLimitErrorRetryHandler,
    AsyncServerErrorRetryHandler,
)
from slack_sdk.oauth.installation_store.models.installation import Installation
from slack_sdk.oauth.token_rotation.async_rotator import AsyncTokenRotator
from slack_sdk.web.async_client import AsyncWebClient

from bot.adapters.in_flight import InFlight
from bot.adapters.slack import texts as slack_texts
from bot.adapters.slack.adapter import CALL_ERRORS, PLATFORM, SlackAdapter
from bot.adapters.slack.blocks import blocks, fallback_text, view_values
from bot.adapters.slack.early_ack import early_ack
from bot.adapters.slack.http import MemoryReplays, Replays, RequestGate, events_app
from bot.adapters.slack.ids import bad_ids
from bot.adapters.slack.moderators import SlackDirectory
from bot.adapters.slack.oauth import (
    INSTALL_PATH,
    InstallFlow,
    add_install_routes,
    install_flow,
    installation_store,
)
from bot.adapters.slack.pacing import ChannelPacer
from bot.adapters.slack.workspaces import InstalledWorkspaces, OneWorkspace, Workspaces
from bot.chat import (
    Command,
    DeliveryError,
    FormSubmission,
    Interaction,
    OutMessage,
    StartError,
    Target,
)
from bot.config import Settings
from bot.i18n import speaking
from bot.quiz import texts
from bot.quiz.service import QuizService
from bot.quiz.surface.grammar import UsageError, parse
from bot.serving import BoundedRunner, Limits, PacedSite
from bot.storage.seen_requests import SeenRequests

log = logging.getLogger(__name__)
P = ParamSpec("P")

EVENTS_PATH = "/slack/events"
DEFAULT_API_URL = "https://slack.com/api/"
SOCKET_CONNECT_TIMEOUT = 30.0
# Slack shows the member an error if a click is not acked within 3 s; the
# answer's write gets this long, then the ack says it could not be confirmed.
ACK_WITHIN = 2.5
# How long closing waits for requests and listeners still running.
DRAIN_SECONDS = 10.0
# `/quiz config set moderator-group @quiz-hosts` arrives escaped as
# <!subteam^S123|@quiz-hosts>; keep the readable handle (or the id).
_SUBTEAM = re.compile(r"<!subteam\^([A-Z0-9]+)(?:\|@?([^>]*))?>")


class _SameTokenWarning(logging.Filter):
    """Bolt reads SLACK_BOT_TOKEN from the environment on its own and then warns
    that our client (built from that same token) wins; the warning misleads."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "`token` will be unused" not in record.getMessage()


logging.getLogger("slack_bolt.AsyncApp").addFilter(_SameTokenWarning())


def unescape_groups(text: str) -> str:
    return _SUBTEAM.sub(lambda found: found.group(2) or found.group(1), text)


def web_client(settings: Settings, token: str | None = None) -> AsyncWebClient:
    """A Web API client with `token` (SLACK_BOT_TOKEN when not given; none in
    OAuth mode, where each workspace's token is given per call)."""
    if token is None and settings.slack_bot_token is not None:
        token = settings.slack_bot_token.get_secret_value()
    return AsyncWebClient(
        token=token,
        base_url=settings.slack_api_url or DEFAULT_API_URL,
        retry_handlers=[
            AsyncConnectionErrorRetryHandler(max_retry_count=2),
            # Without this a 429 is an error; it waits the Retry-After and tries again.
            AsyncRateLimitErrorRetryHandler(max_retry_count=3),
            AsyncServerErrorRetryHandler(max_retry_count=1),
        ],
    )


class SlackPlatform:
    def __init__(
        self,
        settings: Settings,
        service: QuizService,
        pacer: ChannelPacer | None = None,
        clock: Callable[[], float] = time.time,
        limits: Limits | None = None,
    ) -> None:
        self.settings = settings
        self.service = service
        self.client = web_client(settings)
        secret = (
            settings.slack_signing_secret.get_secret_value()
            if settings.slack_signing_secret
            else ""
        )
        self.installed: InstalledWorkspaces | None = None
        self.flow: InstallFlow | None = None
        workspaces: Workspaces = OneWorkspace(self.client)
        if settings.slack_oauth:
            self.installed, self.flow = self._installations(settings)
            workspaces = self.installed
        self.directory = SlackDirectory(workspaces, settings.slack_moderators)
        self.adapter = SlackAdapter(workspaces, self.directory, pacer, self._is_connected)
        self._in_flight = InFlight(PLATFORM)
        self.app = AsyncApp(
            client=self.client,
            signing_secret=secret,
            name="quizmaster",
            oauth_flow=self.flow,
            user_facing_authorize_error_message=slack_texts.not_installed(),
            # Every HTTP request reaches Bolt through the gate (http.py), which
            # checked its signature already; Socket Mode requests are unsigned.
            request_verification_enabled=False,
            # Bolt sends a listener's response when it returns, without polling
            # for its ack() every 10 ms; listeners return at ack (early_ack.py).
            process_before_response=True,
        )
        if self.installed is not None:
            self.app.use(self._remember_workspace)
            for event in ("app_uninstalled", "tokens_revoked"):
                self.app.event(event)(early_ack(self._on_uninstalled, self._in_flight))
        self.app.command("/quiz")(early_ack(self._on_command, self._in_flight))
        # Every button and form the quiz surface declares; the service routes each.
        surface = service.surface
        self.app.action(surface.action_pattern())(early_ack(self._on_click, self._in_flight))
        self.app.view(surface.form_pattern())(early_ack(self._on_form, self._in_flight))
        # Only HTTP mode has a signing secret (Socket Mode needs none).
        self.gate = RequestGate(secret, clock, replays=self._replays(clock)) if secret else None
        self.limits = limits or Limits()
        self.ack_within = ACK_WITHIN
        self._socket: AsyncSocketModeHandler | None = None
        self._runner: BoundedRunner | None = None
        self._serving = False
        self._session: aiohttp.ClientSession | None = None

    def _pooled(self, client: AsyncWebClient) -> AsyncWebClient:
        """`client` on the platform's one HTTP session once started: without
        it slack-sdk opens a session, and a TCP connection, for every call
        (each click's private reply), which cost more CPU than the click."""
        client.session = self._session
        return client

    def _installations(self, settings: Settings) -> tuple[InstalledWorkspaces, InstallFlow]:
        """OAuth mode: installations in the database, shared by every process."""
        assert settings.slack_client_id and settings.slack_client_secret
        client_id = settings.slack_client_id
        client_secret = settings.slack_client_secret.get_secret_value()
        engine = self.service.repository.engine
        store = installation_store(engine, client_id)
        installed = InstalledWorkspaces(
            store,
            engine,
            lambda token: self._pooled(web_client(settings, token)),
            AsyncTokenRotator(client_id=client_id, client_secret=client_secret, client=self.client),
        )
        flow = install_flow(
            client_id=client_id,
            client_secret=client_secret,
            engine=engine,
            store=store,
            client=self.client,
            api_url=settings.slack_api_url or DEFAULT_API_URL,
            installed=self._on_installed,
        )
        return installed, flow

    async def _on_installed(self, installation: Installation) -> None:
        assert self.installed is not None
        if installation.team_id:
            await self.installed.seen(
                installation.team_id,
                installation.enterprise_id,
                bool(installation.is_enterprise_install),
            )
            await self.service.community_back(PLATFORM, installation.team_id)
        log.info("Slack: installed in %s", installation.team_name or installation.enterprise_name)

    async def _remember_workspace(
        self, context: AsyncBoltContext, next: Callable[[], Awaitable[None]]
    ) -> None:
        """Each request names its workspace and organisation: remembered, so
        timed posts there (with no request to read them from) find the token."""
        assert self.installed is not None
        if context.team_id:
            await self.installed.seen(
                context.team_id, context.enterprise_id, bool(context.is_enterprise_install)
            )
        await next()

    async def _on_uninstalled(
        self, ack: AsyncAck, body: dict[str, Any], context: AsyncBoltContext
    ) -> None:
        """app_uninstalled, or tokens_revoked naming bot tokens: forget the
        workspace's installation and post nothing more there."""
        await ack()  # an event is acknowledged at once; the work follows
        assert self.installed is not None
        event = body.get("event") or {}
        if event.get("type") == "tokens_revoked" and not (event.get("tokens") or {}).get("bot"):
            return  # only user tokens: the bot still works there
        team = str(context.team_id or body.get("team_id") or "")
        if not team:
            return
        await self.installed.removed(team, context.enterprise_id)
        await self.service.community_left(PLATFORM, team)

    def _replays(self, clock: Callable[[], float]) -> Replays:
        """Requests seen, shared through PostgreSQL by every process on it;
        on SQLite (one serving process) kept in memory."""
        engine = self.service.repository.engine
        if engine.dialect.name == "postgresql":
            return SeenRequests(engine, clock)
        return MemoryReplays(clock)

    @property
    def socket_mode(self) -> bool:
        return self.settings.slack_app_token is not None

    @property
    def port(self) -> int | None:
        """The HTTP port actually bound (useful when QUIZ_SLACK_PORT is 0)."""
        if self._runner is None:
            return None
        for address in self._runner.addresses:
            if isinstance(address, tuple):
                return int(address[1])
        return None

    def _is_connected(self) -> bool:
        if self._socket is not None:
            session = self._socket.client.current_session
            return not self._socket.client.closed and session is not None and not session.closed
        return self._serving

    # -- lifecycle ------------------------------------------------------------------

    async def start(self) -> None:
        # Kept-alive connections to the Web API, with the client's own time limit per call.
        if self._session is None:
            self._session = aiohttp.ClientSession(
                timeout=aiohttp.ClientTimeout(total=self.client.timeout)
            )
            self._pooled(self.client)
        if self.flow is None:  # OAuth mode has no token until a workspace installs
            await self._check_bot_token()
        if self.socket_mode:
            await self._connect_socket()
        else:
            await self._serve_http()

    async def _check_bot_token(self) -> None:
        try:
            identity = await self.client.auth_test()
        except SlackApiError as error:
            raise StartError(
                f"Slack rejected SLACK_BOT_TOKEN ({error.response.get('error')})"
            ) from error
        except CALL_ERRORS as error:
            raise StartError(f"cannot reach the Slack Web API at {self.client.base_url}") from error
        log.info(
            "Slack: signed in as %s in workspace %s", identity.get("user"), identity.get("team")
        )

    async def _connect_socket(self) -> None:
        token = self.settings.slack_app_token
        assert token is not None
        try:
            # Checked here so a bad token stops start-up instead of retrying forever.
            opened = await self.client.apps_connections_open(app_token=token.get_secret_value())
        except SlackApiError as error:
            raise StartError(
                f"Slack rejected SLACK_APP_TOKEN ({error.response.get('error')}); it needs "
                "the connections:write scope"
            ) from error
        except CALL_ERRORS as error:
            raise StartError(f"cannot reach the Slack Web API at {self.client.base_url}") from error
        self._socket = AsyncSocketModeHandler(self.app, token.get_secret_value())
        self._socket.client.wss_uri = str(opened["url"])  # use the URL just issued
        # Each envelope, up to the ack sent back on the socket, is work in flight.
        self._socket.client.socket_mode_request_listeners = [
            self._tracked(self._socket.handle)  # type: ignore[arg-type]
        ]
        try:
            await asyncio.wait_for(
                self._socket.connect_async(),  # type: ignore[no-untyped-call]
                SOCKET_CONNECT_TIMEOUT,
            )
        except TimeoutError as error:
            await self.close()
            raise StartError("could not open the Slack Socket Mode connection") from error
        log.info("Slack: Socket Mode connected")

    async def _serve_http(self) -> None:
        if self.gate is None:
            raise StartError("HTTP mode needs SLACK_SIGNING_SECRET to verify Slack's requests")
        app = events_app(
            self.gate,
            self._bolt,
            EVENTS_PATH,
            accepting=lambda: self._serving,
            body_deadline=self.limits.body,
        )
        if self.flow is not None:
            add_install_routes(app, self.flow)
        # Closing stops listening, then waits this long for requests in flight.
        runner = BoundedRunner(app, self.limits, shutdown_timeout=DRAIN_SECONDS)
        await runner.setup()
        host, port = self.settings.slack_host, self.settings.slack_port
        try:
            await PacedSite(runner, host, port).start()
        except OSError as error:
            await runner.cleanup()
            raise StartError(
                f"cannot listen on {host}:{port} for Slack events ({error.strerror}); "
                "set QUIZ_SLACK_PORT or QUIZ_SLACK_HOST"
            ) from error
        self._runner = runner
        self._serving = True
        log.info("Slack: HTTP mode, events at http://%s:%s%s", host, self.port, EVENTS_PATH)
        if self.flow is not None:
            log.info("Slack: installs at http://%s:%s%s", host, self.port, INSTALL_PATH)

    async def _bolt(self, request: web.Request, body: bytes) -> web.StreamResponse:
        """Bolt's own handling of a request the gate let through (and read)."""
        bolt_request = AsyncBoltRequest(
            body=body.decode("utf-8"),
            query=request.query_string,
            headers=dict(request.headers),
        )
        response = await self.app.async_dispatch(bolt_request)
        return await to_aiohttp_response(response)

    async def close(self) -> None:
        """Stop taking requests, finish those in flight (their answers stored,
        their replies sent), then disconnect; all within DRAIN_SECONDS."""
        deadline = asyncio.get_running_loop().time() + DRAIN_SECONDS
        self._serving = False
        runner, self._runner = self._runner, None
        if runner is not None:
            await runner.cleanup()  # stops listening; waits for requests in flight
        # Socket Mode stays connected meanwhile, so the acks can still go out.
        await self._in_flight.wait(deadline)
        await self.directory.close()
        socket, self._socket = self._socket, None
        if socket is not None:
            await socket.close_async()  # type: ignore[no-untyped-call]
        session, self._session = self._session, None
        if session is not None:
            self.client.session = None
            await session.close()

    def _tracked(self, handler: Callable[P, Awaitable[None]]) -> Callable[P, Awaitable[None]]:
        """`handler` counted as work in flight while it runs (Bolt runs listeners
        in tasks of their own that outlive the HTTP response)."""

        @functools.wraps(handler)
        async def run(*args: P.args, **kwargs: P.kwargs) -> None:
            with self._in_flight.current():
                await handler(*args, **kwargs)

        return run

    # -- incoming ----------------------------------------------------------------------

    async def _on_command(self, ack: AsyncAck, body: dict[str, Any], respond: AsyncRespond) -> None:
        await ack()  # within Slack's 3 seconds; the work follows
        target = Target(PLATFORM, str(body.get("team_id", "")), str(body.get("channel_id", "")))
        user_id = str(body.get("user_id", ""))
        if _misshapen(target, user_id, "command"):
            return
        locale = await self.directory.locale(target.community, user_id)
        language = await self.service.member_language(target, locale)
        try:
            with speaking(language):  # the grammar's problems are texts too
                parsed = parse(unescape_groups(str(body.get("text") or "")), self.service.surface)
        except UsageError as error:
            with speaking(language):
                reply = texts.usage.usage_error(str(error), self.service.surface)
        else:
            command = Command(
                parsed.name,
                target,
                user_id,
                args=parsed.args,
                display_name=body.get("user_name"),
                moderator_check=self._moderator_check(target.community, user_id),
                locale=locale,
            )
            reply = await self.service.handle_command(command)
            if reply.form is not None:
                instead = await self._open_form(str(body.get("trigger_id") or ""), reply, target)
                if instead is None:
                    return
                reply = instead
        await self._deliver_reply(target, user_id, reply, respond)

    async def _open_form(
        self, trigger_id: str, reply: OutMessage, target: Target
    ) -> OutMessage | None:
        """Open the reply's form; None once it is open, else what to say instead."""
        assert reply.form is not None
        try:
            await self.adapter.open_form(trigger_id, reply.form, target)
        except DeliveryError as error:
            log.warning("could not open a form in %s: %s", target.channel, error)
            return texts.common.form_too_slow()
        return None

    def _moderator_check(self, team: str, user_id: str) -> Callable[[str | None], Awaitable[bool]]:
        async def check(group: str | None) -> bool:
            return await self.directory.is_moderator(team, user_id, group)

        return check

    async def _deliver_reply(
        self, target: Target, user_id: str, reply: OutMessage, respond: AsyncRespond
    ) -> None:
        """Through the command's response_url (works even where the bot is no
        member); if that fails, as an ephemeral or channel message. A file goes
        to the member's direct message with the bot, and the reply says so."""
        if reply.attachment is not None:
            reply = await self.adapter.file_to_direct_message(target, user_id, reply)
        kind = "in_channel" if reply.public else "ephemeral"
        try:
            sent = await respond(
                text=fallback_text(reply), blocks=blocks(reply), response_type=kind
            )
            if sent.status_code == 200:
                return
            log.info("response_url answered %s; replying another way", sent.status_code)
        except Exception:
            log.info("response_url failed; replying another way", exc_info=True)
        try:
            if reply.public:
                await self.adapter.send(target, reply)
            else:
                await self.adapter.ephemeral(target, user_id, reply)
        except DeliveryError as error:
            log.warning("could not answer %s in %s: %s", user_id, target.channel, error)

    async def _on_click(
        self, ack: AsyncAck, body: dict[str, Any], action: dict[str, Any], respond: AsyncRespond
    ) -> None:
        user = body.get("user") or {}
        team = (body.get("team") or {}).get("id") or user.get("team_id") or ""
        channel = (body.get("channel") or {}).get("id") or ""
        if _misshapen(Target(PLATFORM, str(team), str(channel)), str(user.get("id", "")), "click"):
            await ack()
            return
        click = Interaction(
            Target(PLATFORM, str(team), str(channel)),
            str(user.get("id", "")),
            # Only the posting and the slot; correctness is looked up by the service.
            str(action.get("value") or action.get("action_id") or ""),
            display_name=user.get("name") or user.get("username"),
            moderator_check=self._moderator_check(str(team), str(user.get("id", ""))),
            locale=await self.directory.locale(str(team), str(user.get("id", ""))),
        )
        reply = await self._stored(click)
        await ack()  # only now: the answer is committed, or the reply says it may not be
        if reply.form is not None:
            found = await self._open_form(str(body.get("trigger_id") or ""), reply, click.target)
            if found is None:
                return
            reply = found
        try:
            await self.adapter.reply_private(click, reply)
        except DeliveryError:
            try:
                await respond(
                    text=fallback_text(reply),
                    blocks=blocks(reply),
                    response_type="ephemeral",
                    replace_original=False,
                )
            except Exception:
                log.warning("could not answer a click by %s", click.user_id, exc_info=True)

    async def _on_form(self, ack: AsyncAck, body: dict[str, Any], view: dict[str, Any]) -> None:
        """A submitted modal: problems go back into the open form (`errors` by
        block id); otherwise it closes and the reply comes as an ephemeral
        message in the channel the form was opened from."""
        user = body.get("user") or {}
        # The workspace that installed the app, whose bank the form belongs to:
        # a Slack Connect member's own team is another workspace's.
        team = (
            view.get("app_installed_team_id")
            or (body.get("team") or {}).get("id")
            or user.get("team_id")
            or view.get("team_id")
        )
        user_id = str(user.get("id", ""))
        target = Target(PLATFORM, str(team or ""), str(view.get("private_metadata") or ""))
        if _misshapen(target, user_id, "form"):
            await ack()
            return
        form = FormSubmission(
            target,
            user_id,
            str(view.get("callback_id") or ""),
            view_values(view),
            display_name=user.get("name") or user.get("username"),
            moderator_check=self._moderator_check(target.community, user_id),
            inline_errors=True,
            locale=await self.directory.locale(target.community, user_id),
        )
        work = asyncio.ensure_future(self.service.handle_form(form))
        self._in_flight.add(work)
        try:
            reply = await asyncio.wait_for(asyncio.shield(work), self.ack_within)
        except TimeoutError:
            await ack()  # the form closes; the outcome follows as a message
            reply = await work
            message: OutMessage | None = reply.message or texts.common.private(
                "\n".join(reply.errors.values())
            )
        else:
            if reply.errors:
                await ack(response_action="errors", errors=reply.errors)
                return
            await ack()
            message = reply.message
        if message is None or not target.channel:
            return
        try:
            await self.adapter.ephemeral(target, user_id, message)
        except DeliveryError as error:
            log.warning("could not answer a form by %s: %s", user_id, error)

    async def _stored(self, click: Interaction) -> OutMessage:
        """The service's reply once the answer is stored; if that takes longer
        than Slack allows, a reply asking the member to click again (safe: a
        second answer is refused as "already answered")."""
        storing = asyncio.ensure_future(self.service.handle_click(click))
        self._in_flight.add(storing)  # it may outlive this listener; closing waits for it
        try:
            return await asyncio.wait_for(asyncio.shield(storing), self.ack_within)
        except TimeoutError:
            log.warning(
                "Slack: storing a click by %s took over %ss", click.user_id, self.ack_within
            )
            if self.service.surface.is_answer(click.custom_id):
                return texts.questions.answer_not_counted()
            return texts.common.too_slow()  # a command button: nothing to click again for


def _misshapen(target: Target, user_id: str, what: str) -> bool:
    """True (and one log line) if an id is not shaped as Slack makes it."""
    problem = bad_ids(target.community, target.channel, user_id)
    if problem is not None:
        log.warning("ignored a Slack %s: its %s is not one Slack makes", what, problem)
    return problem is not None


def platform(settings: Settings, service: QuizService) -> SlackPlatform:
    return SlackPlatform(settings, service)
