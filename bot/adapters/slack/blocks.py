"""Neutral `OutMessage` → Slack Block Kit (plus the plain `text` fallback)."""

from __future__ import annotations

import re
from typing import Any

from bot.adapters.slack.dialect import SLACK_DIALECT
from bot.chat import Button, ButtonStyle, Form, FormField, Image, OutMessage
from bot.quiz import texts

Block = dict[str, Any]

# Slack's limits, with a little room: header 150, section text 3000, fallback 40000.
HEADER_LIMIT = 150
SECTION_LIMIT = 3000
TEXT_LIMIT = 4000

_BOLD = re.compile(r"\*\*(.+?)\*\*")
# Slack's own markup (mentions, dates, links) must survive escaping. Text we did
# not write (names, bank text) arrives already escaped by the Slack dialect, so it
# cannot look like markup here, and its entities are left as they are.
_MARKUP = re.compile(r"<[@#!][^<>\s][^<>]*>")
_BARE_AMPERSAND = re.compile(r"&(?!(?:amp|lt|gt);)")
_ENTITIES = {"&lt;": "<", "&gt;": ">", "&amp;": "&"}
_ENTITY = re.compile("|".join(_ENTITIES))
_STYLES = {ButtonStyle.SUCCESS: "primary", ButtonStyle.DANGER: "danger"}


def escape(text: str) -> str:
    """Escape &, < and > as Slack asks, except inside Slack's own markup."""
    pieces = []
    last = 0
    for found in _MARKUP.finditer(text):
        pieces.append(_escape_plain(text[last : found.start()]))
        pieces.append(found.group(0))
        last = found.end()
    pieces.append(_escape_plain(text[last:]))
    return "".join(pieces)


def _escape_plain(text: str) -> str:
    return _BARE_AMPERSAND.sub("&amp;", text).replace("<", "&lt;").replace(">", "&gt;")


def plain(text: str) -> str:
    """For plain_text fields, which Slack shows as they are: no entities."""
    return _ENTITY.sub(lambda found: _ENTITIES[found.group(0)], text)


def mrkdwn(text: str) -> str:
    """Our `**bold**` becomes Slack's `*bold*`."""
    return _BOLD.sub(r"*\1*", escape(text))


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _section(text: str) -> Block:
    return {
        "type": "section",
        "text": {"type": "mrkdwn", "text": _cut(mrkdwn(text), SECTION_LIMIT)},
    }


def _button(button: Button) -> Block:
    element: Block = {
        "type": "button",
        "text": {"type": "plain_text", "text": button.label[:75]},
        # The id names only the posting and the slot; it is unique per button,
        # as Slack wants action ids within a message to be.
        "action_id": button.custom_id,
        "value": button.custom_id,
    }
    style = _STYLES.get(button.style)
    if style:
        element["style"] = style
    return element


IMAGE_ALT_LIMIT = 2000


def _image(image: Image) -> Block:
    """A picture with its description for screen readers (Slack's `alt_text`)."""
    return {
        "type": "image",
        "image_url": image.url,
        "alt_text": _cut(plain(image.alt), IMAGE_ALT_LIMIT),
    }


def blocks(message: OutMessage) -> list[Block]:
    made: list[Block] = []
    if message.title:
        title = _cut(plain(message.title), HEADER_LIMIT)
        made.append({"type": "header", "text": {"type": "plain_text", "text": title}})
    if message.body:
        made.append(_section(message.body))
    if message.image is not None:
        made.append(_image(message.image))
    for field in message.fields:
        made.append(_section(f"**{field.name}**\n{field.value}"))
    context = []
    if message.footer:
        context.append(mrkdwn(message.footer))
    if message.deadline is not None:
        context.append(escape(texts.questions.closes(message.deadline, SLACK_DIALECT)))
    if context:
        made.append(
            {
                "type": "context",
                "elements": [{"type": "mrkdwn", "text": _cut(part, 2000)} for part in context],
            }
        )
    # Slack has no disabled buttons: a closed question simply loses its actions.
    live = [button for button in message.buttons if not button.disabled]
    if live:
        made.append({"type": "actions", "elements": [_button(b) for b in live[:25]]})
    return made


def fallback_text(message: OutMessage) -> str:
    """The plain text notifications and old clients show."""
    return _cut(escape(message.text), TEXT_LIMIT)


# Slack's limits for modal views.
MODAL_TITLE_LIMIT = 24
INPUT_LIMIT = 3000
PLACEHOLDER_LIMIT = 150


def _input(field: FormField) -> Block:
    element: Block = {
        "type": "plain_text_input",
        "action_id": field.key,
        "multiline": field.multiline,
        "max_length": min(field.max_length, INPUT_LIMIT),
    }
    if field.value:
        element["initial_value"] = field.value[: min(field.max_length, INPUT_LIMIT)]
    if field.placeholder:
        text = _cut(field.placeholder.replace("\n", ", "), PLACEHOLDER_LIMIT)
        element["placeholder"] = {"type": "plain_text", "text": text}
    return {
        "type": "input",
        # Errors returned with `response_action: errors` name fields by block id.
        "block_id": field.key,
        "optional": not field.required,
        "label": {"type": "plain_text", "text": _cut(field.label, 2000)},
        "element": element,
    }


def modal_view(form: Form, metadata: str) -> Block:
    """A neutral form as a Slack modal; `metadata` (the channel it was opened
    in) comes back with the submission, where private replies go."""
    return {
        "type": "modal",
        "callback_id": form.form_id,
        "private_metadata": metadata,
        "title": {"type": "plain_text", "text": _cut(form.title, MODAL_TITLE_LIMIT)},
        "submit": {"type": "plain_text", "text": _cut(form.submit_label, MODAL_TITLE_LIMIT)},
        "close": {"type": "plain_text", "text": _cut(form.cancel_label, MODAL_TITLE_LIMIT)},
        "blocks": [_input(field) for field in form.fields],
    }


def view_values(view: dict[str, Any]) -> dict[str, str]:
    """Field key → typed text, from a submitted view's state."""
    values: dict[str, str] = {}
    state = (view.get("state") or {}).get("values") or {}
    for block_id, actions in state.items():
        if not isinstance(actions, dict):
            continue
        for action in actions.values():
            if isinstance(action, dict):
                values[str(block_id)] = str(action.get("value") or "")
    return values
