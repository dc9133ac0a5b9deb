"""The terminal as a chat channel: one local player, who is also the moderator."""

from __future__ import annotations

import asyncio
import re
import sys
import threading
from collections.abc import Sequence
from itertools import count
from pathlib import Path
from typing import TextIO

from bot.adapters.console.dialect import ConsoleDialect
from bot.chat import Command, Interaction, MessageRef, OutMessage, Target
from bot.quiz import texts
from bot.quiz.surface import declared
from bot.quiz.surface.registry import Surface

CONSOLE_TARGET = Target("console", "local", "terminal")
LOCAL_USER = "local"
_BOLD = re.compile(r"\*\*(.+?)\*\*")


def as_terminal_text(message: OutMessage) -> str:
    """Lay a neutral message out as plain lines."""
    parts = []
    if message.title:
        parts.append(f"== {message.title} ==")
    if message.body:
        parts.append(_BOLD.sub(r"\1", message.body))
    parts.extend(_picture(message))
    for field in message.fields:
        parts.append(f"{field.name}:\n{field.value}")
    if message.footer:
        parts.append(f"({message.footer})")
    if not parts:
        parts.append(message.text)
    return "\n".join(parts)


def _picture(message: OutMessage) -> list[str]:
    """A terminal shows no pictures: their description and link instead."""
    if message.image is None:
        return []
    return [texts.questions.picture_line(message.image)]


class ConsoleAdapter:
    platform = "console"
    dialect = ConsoleDialect(LOCAL_USER)

    def __init__(
        self,
        out: TextIO | None = None,
        save_to: Path | None = None,
        surface: Surface | None = None,
    ) -> None:
        self.out = out or sys.stdout
        # What each button is typed as comes from the surface's declarations.
        self.surface = surface or declared()
        self.save_to = save_to or Path.cwd()  # where files sent to the player are saved
        self._ids = count(1)
        # The question open for answers: its message id and typed key → button id.
        self.open_question: tuple[str, dict[str, str]] | None = None
        # A private card with buttons (a review card): typed key → button id.
        self.open_card: dict[str, str] | None = None
        self.changed = asyncio.Event()

    @property
    def connected(self) -> bool:
        return True

    def _print(self, text: str) -> None:
        print(text, file=self.out, flush=True)

    async def send(self, target: Target, message: OutMessage) -> MessageRef:
        message_id = str(next(self._ids))
        self._print("\n" + as_terminal_text(message))
        live_buttons = self._keys(message)
        if live_buttons:
            # The terminal has no buttons: say which letters can be typed.
            self._print(as_terminal_text(texts.common.pick_a_letter(list(live_buttons))))
            self.open_question = (message_id, live_buttons)
            self.open_card = None
        self.changed.set()
        return MessageRef(target, message_id)

    async def edit(self, ref: MessageRef, message: OutMessage) -> None:
        if self.open_question and self.open_question[0] == ref.message_id:
            self.open_question = None
        self._print("\n" + as_terminal_text(message))
        self.changed.set()

    async def reply_private(self, event: Command | Interaction, message: OutMessage) -> None:
        self._print(f"> {as_terminal_text(message)}")
        if message.attachment is not None:
            path = self.save_to / message.attachment.filename
            path.write_bytes(message.attachment.data)
            self._print(f"> {as_terminal_text(texts.study.file_saved(str(path)))}")
        letters = self._keys(message)
        self.open_card = letters or None
        if letters:
            self._print(as_terminal_text(texts.common.pick_a_letter(list(letters))))

    def _keys(self, message: OutMessage) -> dict[str, str]:
        return {
            self.surface.shortcut(button): button.custom_id
            for button in message.buttons
            if not button.disabled
        }

    def hint(self, message: OutMessage) -> None:
        """A line of help that leaves the open card as it is."""
        self._print(f"> {as_terminal_text(message)}")

    async def display_names(self, target: Target, user_ids: Sequence[str]) -> dict[str, str]:
        return {user_id: user_id for user_id in user_ids}

    async def send_direct(self, target: Target, user_id: str, message: OutMessage) -> None:
        self._print(f"> {as_terminal_text(message)}")

    def click_for(self, letter: str) -> Interaction | None:
        """The click a typed letter means, if a card or question is open and has
        that letter (a review card shown last comes first)."""
        letters = self.open_card or (self.open_question[1] if self.open_question else None)
        if letters is None:
            return None
        custom_id = letters.get(letter.strip().upper())
        if custom_id is None:
            return None
        return Interaction(CONSOLE_TARGET, LOCAL_USER, custom_id)


class LineReader:
    """Reads stdin on a daemon thread so a blocked read never holds up exit.

    Lines arrive on an asyncio queue; None marks the end of input.
    """

    def __init__(self, source: TextIO | None = None) -> None:
        self.source = source or sys.stdin
        self.lines: asyncio.Queue[str | None] = asyncio.Queue()
        self._loop = asyncio.get_running_loop()
        threading.Thread(target=self._pump, name="stdin-reader", daemon=True).start()

    def _pump(self) -> None:
        for line in self.source:
            self._loop.call_soon_threadsafe(self.lines.put_nowait, line.rstrip("\n"))
        self._loop.call_soon_threadsafe(self.lines.put_nowait, None)
