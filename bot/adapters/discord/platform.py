"""Discord: a discord.py client feeding `/quiz` commands and answer clicks to the
quiz service, and posting what the service says back to Discord."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

import aiohttp
import discord
import yarl
from discord import app_commands

from bot.adapters.discord import render as discord_render
from bot.adapters.discord.commands import CatalogTranslator, quiz_group
from bot.adapters.discord.dialect import DISCORD_DIALECT
from bot.adapters.discord.ids import bad_ids
from bot.adapters.discord.shards import ALL_SHARDS, IDENTIFY_INTERVAL, IdentifyPacer, ShardPlan
from bot.adapters.in_flight import InFlight
from bot.chat import (
    Command,
    DeliveryError,
    FormReply,
    FormSubmission,
    Interaction,
    MessageRef,
    ModeratorCheck,
    OutMessage,
    StartError,
    Target,
)
from bot.config import Settings
from bot.i18n import speaking, t
from bot.quiz import texts
from bot.quiz.service import QuizService

log = logging.getLogger(__name__)

PLATFORM = "discord"
# Discord drops an interaction not answered within 3 s: reply directly when the
# service is quicker than this, else defer ("thinking…") and follow up.
REPLY_WITHIN = 2.0
# After this long (a hung database), stop waiting and tell the member: a click
# that may not have been stored never reads as counted.
ANSWER_WITHIN = 10.0
# On close, how long interactions in flight get to finish (each is bounded by
# ANSWER_WITHIN, plus time to send its answer).
DRAIN_WITHIN = ANSWER_WITHIN + 2.0
NO_MENTIONS = discord.AllowedMentions.none()
# An answer that cannot be sent is logged in one line; the work behind it is done.
SEND_ERRORS = (discord.HTTPException, aiohttp.ClientError, OSError, TimeoutError)
_ROLE_MENTION = re.compile(r"^<@&(\d+)>$")


def intents() -> discord.Intents:
    """Only what the bot uses: guild, channel and role events. Commands and clicks
    come as interactions, so no message content and no member list are needed."""
    chosen = discord.Intents.none()
    chosen.guilds = True
    return chosen


def point_at(api_url: str | None, gateway_url: str | None) -> None:
    """Route REST and the gateway through a proxy (or a test fake). discord.py
    reads both from class attributes, so this applies process-wide."""
    if api_url:
        discord.http.Route.BASE = api_url.rstrip("/")
    if gateway_url:
        discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY = yarl.URL(gateway_url)


def misshapen(
    interaction: discord.Interaction[Any], what: str, args: dict[str, str] | None = None
) -> bool:
    """True (and one log line) if an id the interaction names is not a snowflake:
    it goes no further (not to the service, and no answer is sent)."""
    problem = bad_ids(interaction.guild_id, interaction.channel_id, interaction.user.id, args)
    if problem is not None:
        log.warning("ignored a Discord %s: its %s is not one Discord makes", what, problem)
    return problem is not None


def target_of(interaction: discord.Interaction[Any]) -> Target | None:
    if interaction.guild_id is None or interaction.channel_id is None:
        return None
    return Target(PLATFORM, str(interaction.guild_id), str(interaction.channel_id))


def _role_matches(role: discord.Role, wanted: str) -> bool:
    mention = _ROLE_MENTION.match(wanted)
    if mention:
        wanted = mention.group(1)
    wanted = wanted.lstrip("@").strip().lower()
    return role.name.lower() == wanted or str(role.id) == wanted


def member_locale(interaction: discord.Interaction[Any]) -> str | None:
    """The member's client language (`es-ES`), which Discord sends with every interaction."""
    locale = getattr(interaction, "locale", None)
    return None if locale is None else str(getattr(locale, "value", locale))


def moderator_check(interaction: discord.Interaction[Any]) -> ModeratorCheck:
    """The author's moderator test, asked by the service with the channel's role setting."""

    async def check(moderator_role: str | None) -> bool:
        # interaction.permissions are the member's resolved permissions in this
        # channel, sent by Discord with the interaction.
        permissions = interaction.permissions
        if permissions.administrator or permissions.manage_guild:
            return True
        member = interaction.user
        if not moderator_role or not isinstance(member, discord.Member):
            return False
        return any(_role_matches(role, moderator_role) for role in member.roles)

    return check


class ReconnectLog(logging.Filter):
    """discord.py logs each reconnect attempt after a dropped gateway as ERROR
    with the exception's traceback (often two, chained). A passing outage is
    expected and discord.py resumes on its own: say it in one WARNING line."""

    def filter(self, record: logging.LogRecord) -> bool:
        if str(record.msg).startswith("Attempting a reconnect") and record.exc_info:
            error = record.exc_info[1]
            reason = " ".join(f"{type(error).__name__}: {error}".split())[:300]
            args = record.args if isinstance(record.args, tuple) else ()
            if len(args) == 2:  # discord.shard: (shard id, delay)
                record.msg = "Discord shard %s: connection lost (%s); reconnecting in %.1f s"
                record.args = (args[0], reason, args[1])
            else:
                record.msg = "Discord connection lost (%s); reconnecting in %.1f s"
                record.args = (reason, *args)
            record.levelno, record.levelname = logging.WARNING, "WARNING"
            record.exc_info, record.exc_text = None, None
        return True


RECONNECT_LOG = ReconnectLog()


class QuizTree(app_commands.CommandTree["QuizClient"]):
    async def on_error(
        self, interaction: discord.Interaction[Any], error: app_commands.AppCommandError, /
    ) -> None:
        # A stale command (synced by an older build) or a bug: say so privately.
        log.error("/quiz failed: %s", error, exc_info=error)
        if not interaction.response.is_done():
            with contextlib.suppress(discord.HTTPException):
                await interaction.response.send_message(
                    texts.common.failure().text, ephemeral=True, allowed_mentions=NO_MENTIONS
                )


class QuizClient(discord.AutoShardedClient):
    """The gateway connection, with `/quiz` and the answer buttons wired to the service.

    Always sharded (one shard is a shard too): this process runs `shards.ids`
    of `shards.count`, both settled in `prepare` once the gateway is asked."""

    def __init__(
        self,
        service: QuizService,
        guild_ids: Sequence[int],
        *,
        shards: ShardPlan = ALL_SHARDS,
        identify_interval: float = IDENTIFY_INTERVAL,
        guild_ready_timeout: float = 2.0,
    ) -> None:
        super().__init__(
            intents=intents(),
            allowed_mentions=NO_MENTIONS,
            guild_ready_timeout=guild_ready_timeout,
        )
        self.service = service
        self.guild_ids = list(guild_ids)
        self.plan = shards
        self.pacer = IdentifyPacer(1, identify_interval)
        # Each of this process's shards: is its gateway session live?
        self.shard_online: dict[int, bool] = {}
        self.tree: app_commands.CommandTree[QuizClient] = QuizTree(self)
        self.tree.add_command(quiz_group(self.run_command, lambda: service.catalog))
        self.translator = CatalogTranslator()
        # Private-reply channel for `Adapter.reply_private`: id(event) → interaction.
        self.pending: dict[int, discord.Interaction[Any]] = {}
        # Closing: new interactions are asked to retry; those in flight finish.
        self.accepting = True
        self._in_flight = InFlight(PLATFORM)
        # addFilter ignores a filter already present: one per process.
        logging.getLogger("discord.client").addFilter(RECONNECT_LOG)
        logging.getLogger("discord.shard").addFilter(RECONNECT_LOG)

    async def prepare(self) -> None:
        """After login: the shard count (the gateway's recommendation for
        `auto`) and the identify concurrency, from `GET /gateway/bot`."""
        recommended, _url, limits = await self.http.get_bot_gateway()
        count = self.plan.count or recommended
        plan = ShardPlan(count, self.plan.ids)
        problem = plan.problem()
        if problem is not None:
            raise StartError(problem)
        self.plan = plan
        self.shard_count = count
        self.shard_ids = plan.ids
        self.pacer.max_concurrency = max(1, int(limits.get("max_concurrency", 1)))
        self.shard_online = {shard: False for shard in self.own_shards}
        log.info(
            "Discord: shards %s of %d (identifying %d at a time)",
            _ranges(self.own_shards),
            count,
            self.pacer.max_concurrency,
        )

    @property
    def own_shards(self) -> list[int]:
        return list(self.plan.ids or range(self.plan.count or 1))

    @property
    def online(self) -> bool:
        """Some gateway session of this process is live: posts go over REST and
        work for every server, whichever shard its events arrive on."""
        return any(self.shard_online.values())

    async def before_identify_hook(self, shard_id: int | None, *, initial: bool = False) -> None:
        await self.pacer.wait(shard_id or 0)

    async def setup_hook(self) -> None:
        # Descriptions in each client language we ship (option names stay English).
        await self.tree.set_translator(self.translator)
        if not self.plan.registers_commands:
            return  # the process holding shard 0 syncs /quiz for all
        if not self.guild_ids:
            await self.tree.sync()
            return
        for guild_id in self.guild_ids:
            guild = discord.Object(id=guild_id)
            self.tree.copy_global_to(guild=guild)
            try:
                await self.tree.sync(guild=guild)
            except discord.Forbidden:
                raise StartError(
                    f"Discord refused to register /quiz in server {guild_id} "
                    "(QUIZ_DISCORD_GUILD_IDS): invite the bot there with the "
                    "applications.commands scope"
                ) from None

    # Connection state, per shard: live from READY (its servers loaded) or
    # RESUMED until it drops; discord.py reconnects each shard on its own.
    async def on_shard_ready(self, shard_id: int) -> None:
        self.shard_online[shard_id] = True

    async def on_shard_resumed(self, shard_id: int) -> None:
        self.shard_online[shard_id] = True

    async def on_shard_disconnect(self, shard_id: int) -> None:
        self.shard_online[shard_id] = False

    # -- commands and clicks -------------------------------------------------------------

    async def run_command(
        self, interaction: discord.Interaction[Any], name: str, args: dict[str, str]
    ) -> None:
        # The fallback replies (too slow, restarting) speak the member's language too.
        with self._in_flight.current(), speaking(member_locale(interaction)):
            if misshapen(interaction, "command", args):
                return
            target = target_of(interaction)
            if not self.accepting or target is None:
                await _refuse(interaction, target)
                return
            user = interaction.user
            command = Command(
                name,
                target,
                str(user.id),
                args=args,
                display_name=user.display_name,
                moderator_check=moderator_check(interaction),
                locale=member_locale(interaction),
            )
            work = self.service.handle_command(command)
            await self._answer(interaction, command, work, COMMAND_FALLBACK)

    async def on_interaction(self, interaction: discord.Interaction[Any]) -> None:
        # Every button on our messages is a letter button: each click is answered,
        # even one naming a post that does not exist (the service says so).
        # (Slash commands go through the command tree, not here.)
        try:
            if interaction.type is discord.InteractionType.component:
                await self.on_answer_click(interaction)
            elif interaction.type is discord.InteractionType.modal_submit:
                await self.on_form(interaction)
        finally:
            _let_go(interaction)

    async def on_answer_click(self, interaction: discord.Interaction[Any]) -> None:
        # The fallback replies (too slow, restarting) speak the member's language too.
        with self._in_flight.current(), speaking(member_locale(interaction)):
            if misshapen(interaction, "click"):
                return
            target = target_of(interaction)
            if not self.accepting or target is None:
                await _refuse(interaction, target)
                return
            data: dict[str, Any] = dict(interaction.data or {})
            custom_id = str(data.get("custom_id", ""))
            user = interaction.user
            click = Interaction(
                target,
                str(user.id),
                custom_id,
                display_name=user.display_name,
                moderator_check=moderator_check(interaction),
                locale=member_locale(interaction),
            )
            # Only an answer (or review card) click may have been lost; a
            # submission review click is a command.
            answer = self.service.surface.is_answer(custom_id)
            fallback = CLICK_FALLBACK if answer else COMMAND_FALLBACK
            await self._answer(interaction, click, self.service.handle_click(click), fallback)

    async def on_form(self, interaction: discord.Interaction[Any]) -> None:
        """A submitted modal. A modal closes when submitted, so its problems come
        back as a private reply (with a button to reopen it, filled in)."""
        # The fallback replies (too slow, restarting) speak the member's language too.
        with self._in_flight.current(), speaking(member_locale(interaction)):
            if misshapen(interaction, "form"):
                return
            target = target_of(interaction)
            if not self.accepting or target is None:
                await _refuse(interaction, target)
                return
            data: dict[str, Any] = dict(interaction.data or {})
            user = interaction.user
            form = FormSubmission(
                target,
                str(user.id),
                str(data.get("custom_id", "")),
                discord_render.modal_values(data),
                display_name=user.display_name,
                moderator_check=moderator_check(interaction),
                locale=member_locale(interaction),
            )
            await respond(interaction, _form_reply(self.service.handle_form(form)))

    async def _answer(
        self,
        interaction: discord.Interaction[Any],
        event: Command | Interaction,
        work: Awaitable[OutMessage],
        fallback: Fallback,
    ) -> None:
        self.pending[id(event)] = interaction
        try:
            await respond(interaction, work, fallback)
        finally:
            self.pending.pop(id(event), None)

    async def drain(self, within: float) -> None:
        """Stop taking interactions, then wait (at most `within` seconds) for
        those in flight to store their work and answer."""
        self.accepting = False
        # Interactions keep arriving until the gateway closes; each is asked
        # to retry, which is quick, so the set empties.
        await self._in_flight.wait(asyncio.get_running_loop().time() + within)


@dataclass(frozen=True)
class Fallback:
    """What to tell the member when the work fails or outlasts ANSWER_WITHIN."""

    failed: Callable[[], OutMessage]
    slow: Callable[[], OutMessage]


# A click either counted or the member is told to click again.
CLICK_FALLBACK = Fallback(texts.questions.answer_not_counted, texts.questions.answer_not_counted)
COMMAND_FALLBACK = Fallback(texts.common.failure, texts.common.too_slow)


async def _form_reply(work: Awaitable[FormReply]) -> OutMessage:
    reply = await work
    if reply.message is not None:
        return reply.message
    return texts.common.private("\n".join(reply.errors.values()) or t("Done."))


async def _known(message: OutMessage) -> OutMessage:
    """A reply decided without the service, in the shape `respond` takes."""
    return message


async def _refuse(interaction: discord.Interaction[Any], target: Target | None) -> None:
    """Outside a server channel, or while closing: a private word, no work."""
    message = texts.common.server_only() if target is None else texts.common.restarting()
    await respond(interaction, _known(message), COMMAND_FALLBACK)


def _let_go(interaction: discord.Interaction[Any]) -> None:
    """Once answered, let reference counting free an interaction. discord.py
    caches its `response` on it and the response points back, so each click's
    objects (about thirty, with its message, member and buttons) waited for
    the cyclic collector: at 200 clicks/s a 22-43 ms pass every ten seconds,
    every click arriving meanwhile waiting too (bench/discord_clicks.py).
    Nothing reads the interaction once it is answered."""
    for cached in ("_cs_response", "_cs_followup"):
        with contextlib.suppress(AttributeError):
            delattr(interaction, cached)


def _retrieve(task: asyncio.Future[OutMessage]) -> None:
    """Work given up on may still fail later: take its error, so asyncio does
    not report it as never retrieved (the service logs its own failures)."""
    if not task.cancelled() and task.exception() is not None:
        log.debug("an interaction's work failed", exc_info=task.exception())


def _settled(task: asyncio.Future[OutMessage], fallback: Fallback) -> OutMessage:
    """The work's reply; the fallback's when it failed or is not done by now
    (ANSWER_WITHIN). Not cancelled then: a command half done is worse than one
    finishing late, and a late click is found by the member's next click."""
    if not task.done():
        log.warning("an interaction took longer than %.0f s; told the member", ANSWER_WITHIN)
        return fallback.slow()
    error = task.exception()
    if error is not None:
        log.error("an interaction failed", exc_info=error)
        return fallback.failed()
    return task.result()


async def respond(
    interaction: discord.Interaction[Any],
    work: Awaitable[OutMessage],
    fallback: Fallback = COMMAND_FALLBACK,
) -> None:
    """Answer within Discord's window: directly when the work is quick, else
    defer privately and send the result as a followup. The work is done (or
    given up on, and the member told) before anything is answered."""
    # One task and plain waits on it: every future layered between the work and
    # the reply is one more pass through the event loop, and at a few hundred
    # clicks a second each pass waits behind everything else that is ready.
    loop = asyncio.get_running_loop()
    give_up_at = loop.time() + ANSWER_WITHIN
    task = asyncio.ensure_future(work)
    task.add_done_callback(_retrieve)
    await asyncio.wait({task}, timeout=REPLY_WITHIN)
    if not task.done():
        await _deferred(interaction, task, fallback, give_up_at)
        return
    message = _settled(task, fallback)
    try:
        if (
            message.form is not None
            and interaction.type is not discord.InteractionType.modal_submit
        ):
            await interaction.response.send_modal(discord_render.modal(message.form))
            return
        await interaction.response.send_message(
            ephemeral=not message.public, **discord_render.payload(message)
        )
    except SEND_ERRORS as error:
        log.warning("could not answer an interaction: %s", error)


async def _deferred(
    interaction: discord.Interaction[Any],
    task: asyncio.Future[OutMessage],
    fallback: Fallback,
    give_up_at: float,
) -> None:
    try:
        await interaction.response.defer(ephemeral=True, thinking=True)
    except SEND_ERRORS as error:
        log.warning("could not defer an interaction: %s", error)
    left = give_up_at - asyncio.get_running_loop().time()
    if left > 0:
        await asyncio.wait({task}, timeout=left)
    message = _settled(task, fallback)
    if message.form is not None:  # a modal must be the first answer; too late now
        message = texts.common.form_too_slow()
    try:
        if message.public:
            # The placeholder is private; a public result gets a message of its own.
            with contextlib.suppress(discord.HTTPException):
                await interaction.delete_original_response()
            await interaction.followup.send(ephemeral=False, **discord_render.payload(message))
        else:
            await interaction.followup.send(ephemeral=True, **discord_render.payload(message))
    except SEND_ERRORS as error:
        log.warning("could not follow up an interaction: %s", error)


class DiscordAdapter:
    """The quiz service's view of Discord: post, edit, and look up names."""

    platform = PLATFORM
    dialect = DISCORD_DIALECT

    def __init__(self, client: QuizClient) -> None:
        self.client = client

    @property
    def connected(self) -> bool:
        return self.client.online and self.client.is_ready() and not self.client.is_closed()

    @property
    def parts(self) -> dict[str, bool]:
        """Each shard this process runs, and whether its gateway session is live."""
        return {f"shard {shard}": up for shard, up in sorted(self.client.shard_online.items())}

    def _channel(self, target: Target) -> discord.PartialMessageable:
        return self.client.get_partial_messageable(
            int(target.channel), guild_id=int(target.community)
        )

    async def send(self, target: Target, message: OutMessage) -> MessageRef:
        try:
            # The nonce makes Discord refuse a second message from a retry of
            # the same post (ours after a timeout, or discord.py's after a 5xx).
            payload = discord_render.payload(message)
            if message.idempotency_key:
                payload["nonce"] = message.idempotency_key
            sent = await self._channel(target).send(**payload)
        except discord.HTTPException as error:
            raise _delivery_error(error) from error
        return MessageRef(target, str(sent.id))

    async def edit(self, ref: MessageRef, message: OutMessage) -> None:
        partial = self._channel(ref.target).get_partial_message(int(ref.message_id))
        try:
            await partial.edit(**discord_render.edit_payload(message))
        except discord.HTTPException as error:
            raise _delivery_error(error) from error

    async def shows(self, ref: MessageRef, message: OutMessage) -> bool:
        """Read the message back (it needs Read Message History); False when
        Discord will not say, so the caller edits it to be sure."""
        try:
            data = await self.client.http.get_message(int(ref.target.channel), int(ref.message_id))
        except discord.HTTPException as error:
            log.info("cannot read back message %s: %s", ref.message_id, error)
            return False
        return discord_render.shows(dict(data), message)

    async def reply_private(self, event: Command | Interaction, message: OutMessage) -> None:
        interaction = self.client.pending.get(id(event))
        if interaction is None:
            log.warning("no open interaction to reply to privately; dropped")
            return
        await interaction.followup.send(ephemeral=True, **discord_render.payload(message))

    async def send_direct(self, target: Target, user_id: str, message: OutMessage) -> None:
        """A direct message; a member who closed DMs from server members makes
        Discord refuse it (403), which is a DeliveryError like any refusal."""
        try:
            channel = await self.client.create_dm(discord.Object(id=int(user_id)))
            await channel.send(**discord_render.payload(message))
        except discord.HTTPException as error:
            raise _delivery_error(error) from error

    async def display_names(self, target: Target, user_ids: Sequence[str]) -> dict[str, str]:
        guild = self.client.get_guild(int(target.community))
        if guild is None:
            return {}
        names: dict[str, str] = {}
        for user_id in user_ids:
            member = guild.get_member(int(user_id))
            if member is None:
                try:
                    member = await guild.fetch_member(int(user_id))
                except discord.HTTPException:
                    continue  # left the server: the caller shows a neutral word
            names[user_id] = member.display_name
        return names


def _ranges(shards: Sequence[int]) -> str:
    """[0, 1, 2, 5] → "0-2,5", as QUIZ_DISCORD_SHARD_IDS is written."""
    spans: list[list[int]] = []
    for shard in shards:
        if spans and shard == spans[-1][1] + 1:
            spans[-1][1] = shard
        else:
            spans.append([shard, shard])
    return ",".join(f"{a}-{b}" if a != b else str(a) for a, b in spans)


def _delivery_error(error: discord.HTTPException) -> DeliveryError:
    """403/404 mean a missing channel or permission, which retrying cannot fix."""
    reason = f"Discord said {error.status}: {error.text or 'refused'}"
    permanent = isinstance(error, discord.Forbidden | discord.NotFound)
    return DeliveryError(reason, permanent=permanent, rate_limited=error.status == 429)


class DiscordPlatform:
    def __init__(self, client: QuizClient, token: str) -> None:
        self.client = client
        self.adapter = DiscordAdapter(client)
        self._token = token
        self._connection: asyncio.Task[None] | None = None

    async def start(self) -> None:
        try:
            await self.client.login(self._token)
            await self.client.prepare()
        except discord.LoginFailure:
            await self.client.close()
            raise StartError("Discord rejected DISCORD_TOKEN; check the bot token") from None
        except StartError:
            await self.client.close()
            raise
        except discord.HTTPException as error:
            await self.client.close()
            raise StartError(
                f"Discord refused the login or command sync ({error.status})"
            ) from None
        except OSError as error:
            await self.client.close()
            raise StartError(f"cannot reach Discord ({error})") from None
        except BaseException:
            await self.client.close()
            raise
        self._connection = asyncio.create_task(self.client.connect(), name="discord-gateway")
        ready = asyncio.create_task(self.client.wait_until_ready())
        await asyncio.wait({self._connection, ready}, return_when=asyncio.FIRST_COMPLETED)
        if not ready.done():
            ready.cancel()
            problem = self._connection.exception()
            await self.client.close()
            raise StartError(f"the Discord gateway closed the connection ({problem})")

    async def close(self) -> None:
        """Drain, then disconnect: interactions in flight are stored and answered,
        new ones are asked to retry in a moment (another process may take them)."""
        await self.client.drain(DRAIN_WITHIN)
        await self.client.close()
        if self._connection is not None:
            with contextlib.suppress(Exception, asyncio.CancelledError):
                await self._connection


def platform(
    settings: Settings,
    service: QuizService,
    *,
    guild_ready_timeout: float = 2.0,
    identify_interval: float = IDENTIFY_INTERVAL,
    client_class: type[QuizClient] = QuizClient,
) -> DiscordPlatform:
    """What `quizmaster run` starts; tests pass a short `guild_ready_timeout` and
    `identify_interval`, or a client class without discord.py's re-identify pause."""
    if settings.discord_token is None:
        raise StartError("DISCORD_TOKEN is not set")
    point_at(settings.discord_api_url, settings.discord_gateway_url)
    client = client_class(
        service,
        settings.discord_guild_ids,
        shards=settings.discord_shards,
        identify_interval=identify_interval,
        guild_ready_timeout=guild_ready_timeout,
    )
    return DiscordPlatform(client, settings.discord_token.get_secret_value())
