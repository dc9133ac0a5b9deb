"""Forms in the terminal: a Discord modal or Slack view becomes a few prompts,
one field at a time, read from the same line queue as everything else."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable

from bot.adapters.console import texts as say
from bot.adapters.console.screen import Screen
from bot.chat import Form, FormField

CANCEL = "cancel"  # always stops a form, beside the word of the reader's language


async def ask_field(
    field: FormField, lines: asyncio.Queue[str | None], screen: Screen
) -> str | None:
    """One field's value; None when the player cancels or input ends. A needed
    field is asked again when left empty, any field when too long. A field of
    several lines (the options of a question) ends at an empty line."""
    screen.info(say.form_field(field.label, field.required, field.multiline))
    typed: list[str] = []
    while True:
        line = await lines.get()
        if line is None or line.strip().lower() in (CANCEL, say.cancel_word().lower()):
            return None
        if field.multiline and line.strip():
            typed.append(line.strip())
            continue
        value = "\n".join(typed) if field.multiline else line.strip()
        typed = []
        if not value and field.required:
            screen.info(say.field_needed(field.label))
        elif len(value) > field.max_length:
            screen.info(say.field_too_long(field.max_length, len(value)))
        else:
            return value


async def fill(
    form: Form,
    lines: asyncio.Queue[str | None],
    screen: Screen,
    *,
    values: dict[str, str] | None = None,
    only: Iterable[str] | None = None,
) -> dict[str, str] | None:
    """The form's values by key, asked in order (only the `only` keys when set,
    keeping the other `values`); None when cancelled."""
    filled = dict(values or {})
    wanted = set(only) if only is not None else None
    if wanted is None:
        screen.info(say.form_title(form.title))
    for field in form.fields:
        if wanted is not None and field.key not in wanted:
            continue
        value = await ask_field(field, lines, screen)
        if value is None:
            screen.info(say.form_cancelled())
            return None
        filled[field.key] = value
    return filled
