"""A neutral OutMessage as Discord sends it: an embed or plain content, plus one
row of letter buttons that keep working across restarts."""

from __future__ import annotations

from collections.abc import Sequence
from io import BytesIO
from typing import Any

import discord

from bot.adapters.discord.dialect import DISCORD_DIALECT
from bot.chat import Button, ButtonStyle, Form, OutMessage
from bot.quiz import texts

# Discord's limits on what one message may carry.
CONTENT_LIMIT = 2000
MODAL_TITLE_LIMIT = 45
LABEL_LIMIT = 45
INPUT_LIMIT = 4000
DESCRIPTION_LIMIT = 4096
FIELD_LIMIT = 1024
TITLE_LIMIT = 256

_STYLES = {
    ButtonStyle.NEUTRAL: discord.ButtonStyle.secondary,
    ButtonStyle.SUCCESS: discord.ButtonStyle.success,
    ButtonStyle.DANGER: discord.ButtonStyle.danger,
}


class PostedView(discord.ui.View):
    """Letter buttons that travel with a message and nothing more.

    Clicks are routed by custom_id in `QuizClient.on_interaction`, so a click on
    any question message, including one posted before a restart or one naming a
    post that no longer exists, gets an answer. (discord.py's own routing, a
    DynamicItem, silently drops a click whose id it cannot match to a button on
    the clicked message.) Not dispatchable: discord.py keeps no copy of the view
    for each message sent.
    """

    def __init__(self, buttons: Sequence[Button]) -> None:
        super().__init__(timeout=None)
        for button in buttons:
            self.add_item(
                discord.ui.Button(
                    label=button.label,
                    custom_id=button.custom_id,
                    style=_STYLES[button.style],
                    disabled=button.disabled,
                )
            )

    def is_dispatchable(self) -> bool:
        return False


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def embed(message: OutMessage) -> discord.Embed:
    description = message.body or message.text
    if message.image is not None:
        # Embed images take no alt text: what the picture shows goes under the text.
        description = f"{description}\n\n🖼️ {message.image.alt}"
    if message.deadline is not None:
        closes = texts.questions.closes(message.deadline, DISCORD_DIALECT)
        description = f"{description}\n\n{closes}"
    made = discord.Embed(
        title=_cut(message.title, TITLE_LIMIT) if message.title else None,
        description=_cut(description, DESCRIPTION_LIMIT),
    )
    for item in message.fields:
        made.add_field(
            name=_cut(item.name, TITLE_LIMIT),
            value=_cut(item.value, FIELD_LIMIT) or "–",
            inline=item.inline,
        )
    if message.footer:
        made.set_footer(text=message.footer)
    if message.image is not None:
        made.set_image(url=message.image.url)
    return made


def view(message: OutMessage) -> discord.ui.View | None:
    if not message.buttons:
        return None
    return PostedView(message.buttons)


def payload(message: OutMessage) -> dict[str, Any]:
    """Keyword arguments for send/edit: rich messages as an embed, short
    private replies as plain content. Mentions never ping."""
    rich = bool(
        message.title or message.fields or message.buttons or message.deadline or message.image
    )
    kwargs: dict[str, Any] = {"allowed_mentions": discord.AllowedMentions.none()}
    if rich:
        kwargs["embed"] = embed(message)
    else:
        kwargs["content"] = _cut(message.body or message.text, CONTENT_LIMIT)
    made = view(message)
    if made is not None:
        kwargs["view"] = made
    if message.attachment is not None:
        # Sent as a multipart upload with the (private) reply.
        kwargs["file"] = discord.File(
            BytesIO(message.attachment.data), filename=message.attachment.filename
        )
    return kwargs


def edit_payload(message: OutMessage) -> dict[str, Any]:
    """Like `payload`, but clears whatever the new form does not use."""
    kwargs = payload(message)
    kwargs.setdefault("content", None)
    kwargs.setdefault("embed", None)
    kwargs.setdefault("view", None)
    return kwargs


def shows(data: dict[str, Any], message: OutMessage) -> bool:
    """Whether a message as Discord returned it already reads as `message` would
    make it: the same text, embed and buttons, so editing it would change
    nothing a member sees."""
    kwargs = edit_payload(message)
    made_embed: discord.Embed | None = kwargs["embed"]
    made_view: discord.ui.View | None = kwargs["view"]
    wanted = _seen(
        kwargs["content"],
        [made_embed.to_dict()] if made_embed is not None else [],
        made_view.to_components() if made_view is not None else [],
    )
    return _seen(data.get("content"), data.get("embeds") or [], data.get("components") or []) == (
        wanted
    )


def _seen(content: str | None, embeds: Sequence[Any], rows: Sequence[Any]) -> tuple[Any, ...]:
    """What a member sees of a message, from its JSON form (Discord adds keys of
    its own, such as ids and image proxies, that are left out here)."""
    shown_embeds = [
        (
            embed.get("title"),
            embed.get("description"),
            [
                (f.get("name"), f.get("value"), bool(f.get("inline")))
                for f in embed.get("fields") or []
            ],
            (embed.get("footer") or {}).get("text"),
            (embed.get("image") or {}).get("url"),
        )
        for embed in embeds
    ]
    buttons = [
        (item.get("label"), item.get("custom_id"), item.get("style"), bool(item.get("disabled")))
        for row in rows
        for item in row.get("components", [])
    ]
    return (content or "", shown_embeds, buttons)


def modal(form: Form) -> discord.ui.Modal:
    """A neutral form as a Discord modal: one labelled text input per field.

    Stopped before it is sent, so discord.py keeps no copy waiting for its
    submission: `QuizClient.on_interaction` routes every modal submit by its
    custom_id, which also works for a form opened before a restart."""
    made = discord.ui.Modal(
        title=_cut(form.title, MODAL_TITLE_LIMIT), custom_id=form.form_id, timeout=None
    )
    for field in form.fields[:5]:  # Discord allows five inputs per modal
        text_input: discord.ui.TextInput[discord.ui.Modal] = discord.ui.TextInput(
            style=discord.TextStyle.paragraph if field.multiline else discord.TextStyle.short,
            custom_id=field.key,
            placeholder=_cut(field.placeholder, 100) if field.placeholder else None,
            default=field.value[: min(field.max_length, INPUT_LIMIT)] or None,
            required=field.required,
            max_length=min(field.max_length, INPUT_LIMIT),
        )
        made.add_item(discord.ui.Label(text=_cut(field.label, LABEL_LIMIT), component=text_input))
    made.stop()
    return made


def modal_values(data: dict[str, Any]) -> dict[str, str]:
    """Field key → typed text, from a modal submit's components (inputs inside
    labels, or inside action rows as older clients send them)."""
    values: dict[str, str] = {}
    pending = list(data.get("components") or [])
    while pending:
        component = pending.pop(0)
        if not isinstance(component, dict):
            continue
        if component.get("type") == 1:
            pending.extend(component.get("components") or [])
        elif component.get("type") == 18:
            pending.append(component.get("component") or {})
        elif isinstance(component.get("custom_id"), str):
            values[component["custom_id"]] = str(component.get("value") or "")
    return values
