"""The Slack side of `bot.chat.Adapter`: posts, edits, private replies, names."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence

import aiohttp
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.adapters.slack.blocks import blocks, fallback_text, modal_view
from bot.adapters.slack.dialect import SLACK_DIALECT
from bot.adapters.slack.moderators import SlackDirectory
from bot.adapters.slack.pacing import ChannelPacer
from bot.adapters.slack.workspaces import Workspaces
from bot.chat import Command, DeliveryError, Form, Interaction, MessageRef, OutMessage, Target
from bot.quiz import texts

log = logging.getLogger(__name__)

PLATFORM = "slack"
# Errors retrying cannot fix: the channel is gone or closed to us, or the
# message cannot be made at all. Anything else is treated as passing.
PERMANENT_ERRORS = {
    "channel_not_found",
    "not_in_channel",
    "is_archived",
    "account_inactive",
    "token_revoked",
    "invalid_auth",
    "not_authed",
    "missing_scope",
    "restricted_action",
    "ekm_access_denied",
    "team_access_not_granted",
    "message_not_found",
    "cant_update_message",
    "invalid_blocks",
    "msg_too_long",
}


def delivery_error(error: Exception) -> DeliveryError:
    """Our neutral error for a failed Web API call."""
    if isinstance(error, SlackApiError):
        code = str(error.response.get("error") or "unknown_error")
        limited = code == "ratelimited" or error.response.status_code == 429
        return DeliveryError(code, permanent=code in PERMANENT_ERRORS, rate_limited=limited)
    return DeliveryError(f"{type(error).__name__}: {error}".rstrip(": "), permanent=False)


# Failures of a call that the caller turns into a DeliveryError.
CALL_ERRORS = (SlackApiError, aiohttp.ClientError, asyncio.TimeoutError)


class SlackAdapter:
    platform = PLATFORM
    dialect = SLACK_DIALECT

    def __init__(
        self,
        workspaces: Workspaces,
        directory: SlackDirectory,
        pacer: ChannelPacer | None = None,
        is_connected: Callable[[], bool] = lambda: False,
    ) -> None:
        self.workspaces = workspaces
        self.directory = directory
        self.pacer = pacer or ChannelPacer()
        self._is_connected = is_connected

    @property
    def connected(self) -> bool:
        return self._is_connected()

    async def _client(self, target: Target) -> AsyncWebClient:
        """The client with the bot token of the target's workspace."""
        return await self.workspaces.client(target.community)

    async def send(self, target: Target, message: OutMessage) -> MessageRef:
        client = await self._client(target)
        # Members answer what is posted: know their languages before they click.
        self.directory.warm(target.community)
        # Paced per workspace and channel: each workspace's token has its own
        # limits (its 429s are waited out by that client's retry handler).
        await self.pacer.wait(f"{target.community}:{target.channel}")
        try:
            response = await client.chat_postMessage(
                channel=target.channel,
                text=fallback_text(message),
                blocks=blocks(message),
                unfurl_links=False,
                unfurl_media=False,
            )
        except CALL_ERRORS as error:
            raise self._failed("post in", target, error) from error
        return MessageRef(target, str(response["ts"]))

    async def edit(self, ref: MessageRef, message: OutMessage) -> None:
        client = await self._client(ref.target)
        await self.pacer.wait(f"{ref.target.community}:{ref.target.channel}")
        try:
            await client.chat_update(
                channel=ref.target.channel,
                ts=ref.message_id,
                text=fallback_text(message),
                blocks=blocks(message),
            )
        except CALL_ERRORS as error:
            raise self._failed("edit a message in", ref.target, error) from error

    async def reply_private(self, event: Command | Interaction, message: OutMessage) -> None:
        if message.attachment is not None:
            # An ephemeral message cannot carry a file: it goes to a direct message.
            message = await self.file_to_direct_message(event.target, event.user_id, message)
        await self.ephemeral(event.target, event.user_id, message)

    async def file_to_direct_message(
        self, target: Target, user_id: str, message: OutMessage
    ) -> OutMessage:
        """Send the message's file (with its text) in the member's direct message
        with the bot; what to tell them where they asked."""
        attachment = message.attachment
        assert attachment is not None
        try:
            client = await self._client(target)
            opened = await client.conversations_open(users=user_id)
            await client.files_upload_v2(
                channel=str(opened["channel"]["id"]),
                file=attachment.data,
                filename=attachment.filename,
                title=attachment.filename,
                initial_comment=fallback_text(message),
            )
        except (*CALL_ERRORS, DeliveryError) as error:
            problem = error if isinstance(error, DeliveryError) else delivery_error(error)
            log.warning("could not send %s a file: %s", user_id, problem)
            return texts.study.file_not_delivered(str(problem))
        return texts.study.file_sent_to_direct_messages()

    async def ephemeral(self, target: Target, user_id: str, message: OutMessage) -> None:
        """A message in the channel that only `user_id` sees."""
        client = await self._client(target)
        try:
            await client.chat_postEphemeral(
                channel=target.channel,
                user=user_id,
                text=fallback_text(message),
                blocks=blocks(message),
            )
        except CALL_ERRORS as error:
            raise self._failed("reply privately in", target, error) from error

    async def send_direct(self, target: Target, user_id: str, message: OutMessage) -> None:
        """A message in the app's direct conversation with the member (its
        Messages tab): chat.postMessage to a user id needs only chat:write."""
        client = await self._client(target)
        await self.pacer.wait(f"{target.community}:{user_id}")
        try:
            await client.chat_postMessage(
                channel=user_id,
                text=fallback_text(message),
                blocks=blocks(message),
                unfurl_links=False,
                unfurl_media=False,
            )
        except CALL_ERRORS as error:
            raise self._failed("message a member from", target, error) from error

    async def open_form(self, trigger_id: str, form: Form, target: Target) -> None:
        """Open a modal for the member whose command or click gave `trigger_id`
        (valid for three seconds)."""
        client = await self._client(target)
        try:
            await client.views_open(trigger_id=trigger_id, view=modal_view(form, target.channel))
        except CALL_ERRORS as error:
            raise delivery_error(error) from error

    async def display_names(self, target: Target, user_ids: Sequence[str]) -> dict[str, str]:
        unique = list(dict.fromkeys(user_ids))
        names = await asyncio.gather(
            *(self.directory.display_name(target.community, u) for u in unique)
        )
        return {user: name for user, name in zip(unique, names, strict=True) if name}

    def _failed(self, action: str, target: Target, error: Exception) -> DeliveryError:
        problem = delivery_error(error)
        level = logging.WARNING if problem.permanent else logging.INFO
        log.log(level, "could not %s channel %s: %s", action, target.channel, problem)
        return problem
