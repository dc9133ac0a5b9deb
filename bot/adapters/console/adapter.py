"""The terminal as a chat channel: one local player, who is also the moderator."""

from __future__ import annotations

import asyncio
import contextlib
import sys
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from itertools import count
from pathlib import Path
from typing import TextIO

from bot.adapters.console import texts as say
from bot.adapters.console.dialect import ConsoleDialect
from bot.adapters.console.screen import Screen
from bot.chat import ButtonStyle, Command, Form, Interaction, MessageRef, OutMessage, Target
from bot.i18n import from_environment
from bot.quiz import texts
from bot.quiz.buttons import REPORT
from bot.quiz.surface import declared
from bot.quiz.surface.registry import Surface

CONSOLE_TARGET = Target("console", "local", "terminal")
LOCAL_USER = "local"


@dataclass(frozen=True)
class Reveal:
    """A question that closed, as the game shows it: its answer letter and why."""

    message_id: str
    answer: str
    explanation: str
    report: str | None = None  # the "Report a problem" button's id, if offered


def reveal_of(message_id: str, message: OutMessage, report: str | None = None) -> Reveal:
    """Read the closed question's answer from its buttons (the right one is the
    one marked SUCCESS) and its explanation from the field the core names Why."""
    answer = next((b.label for b in message.buttons if b.style is ButtonStyle.SUCCESS), "")
    why = next((f.value for f in message.fields if f.name == "Why"), "")
    return Reveal(message_id, answer, why, report)


class ConsoleAdapter:
    platform = "console"
    dialect = ConsoleDialect(LOCAL_USER)

    def __init__(
        self,
        out: TextIO | None = None,
        save_to: Path | None = None,
        surface: Surface | None = None,
        *,
        single_player: bool = False,
        screen: Screen | None = None,
    ) -> None:
        self.out = out or sys.stdout
        self.screen = screen or Screen(self.out)
        # `quizmaster play`: the game draws reveals and the end itself, in words
        # for one player; channel posts without buttons wait in `held`.
        self.single_player = single_player
        self.held: list[OutMessage] = []
        self.reveals: dict[str, Reveal] = {}
        self.question_message: OutMessage | None = None
        # What each button is typed as comes from the surface's declarations.
        self.surface = surface or declared()
        self.save_to = save_to or Path.cwd()  # where files sent to the player are saved
        self._ids = count(1)
        # The question open for answers: its message id and typed key → button id.
        self.open_question: tuple[str, dict[str, str]] | None = None
        # A private card with buttons (a review card): typed key → button id.
        self.open_card: dict[str, str] | None = None
        # The report button of the question revealed last (typed as "!"), and a
        # form a reply opened, for the front end to ask field by field.
        self.last_report: str | None = None
        self.pending_form: Form | None = None
        self.changed = asyncio.Event()

    @property
    def connected(self) -> bool:
        return True

    @contextlib.contextmanager
    def _drawing(self) -> Iterator[None]:
        """A reader gone away (a broken pipe) is the terminal's affair, not a failed
        delivery: the screen goes quiet and the game, seeing it closed, ends the quiz."""
        try:
            yield
        except BrokenPipeError:
            self.changed.set()

    async def send(self, target: Target, message: OutMessage) -> MessageRef:
        with self._drawing():
            return self._send(target, message)
        return MessageRef(target, "0")  # only when the screen closed mid-draw

    def _send(self, target: Target, message: OutMessage) -> MessageRef:
        message_id = str(next(self._ids))
        live_buttons = self._keys(message)
        if live_buttons and self.single_player:
            self.screen.question(message)  # the game draws the countdown
        elif live_buttons:
            self.screen.message(message)
            # The terminal has no buttons: say which letters can be typed.
            self.screen.note(texts.common.pick_a_letter(list(live_buttons)))
        elif self.single_player:
            self.held.append(message)
        else:
            self.screen.message(message)
        if live_buttons:
            self.open_question = (message_id, live_buttons)
            self.question_message = message
            self.open_card = None
        self.changed.set()
        return MessageRef(target, message_id)

    async def edit(self, ref: MessageRef, message: OutMessage) -> None:
        with self._drawing():
            self._edit(ref, message)

    def _edit(self, ref: MessageRef, message: OutMessage) -> None:
        closing = self.open_question is not None and self.open_question[0] == ref.message_id
        if closing:
            self.open_question = None
        report = self._keys(message).get(REPORT.shortcut or "")
        if self.single_player:
            # Only the question's close matters to one player; the game shows it.
            if closing:
                self.reveals[ref.message_id] = reveal_of(ref.message_id, message, report)
        else:
            self.screen.message(message)
            if report is not None:
                self.last_report = report
                self.screen.info(say.report_this())
        self.changed.set()

    async def reply_private(self, event: Command | Interaction, message: OutMessage) -> None:
        with self._drawing():
            self._reply_private(message)

    def _reply_private(self, message: OutMessage) -> None:
        if message.form is not None:  # asked a field at a time by the front end
            self.pending_form = message.form
            return
        self.screen.note(message)
        if message.attachment is not None:
            path = self.save_to / message.attachment.filename
            try:
                path.write_bytes(message.attachment.data)
            except OSError as error:  # an unwritable folder: say so, keep taking commands
                self.screen.note(texts.study.file_not_saved(str(path), error.strerror or ""))
            else:
                self.screen.note(texts.study.file_saved(str(path)))
        letters = self._keys(message)
        self.open_card = letters or None
        if letters:
            self.screen.note(texts.common.pick_a_letter(list(letters)))

    def _keys(self, message: OutMessage) -> dict[str, str]:
        return {
            self.surface.shortcut(button): button.custom_id
            for button in message.buttons
            if not button.disabled
        }

    def hint(self, message: OutMessage) -> None:
        """A line of help that leaves the open card as it is."""
        with self._drawing():
            self.screen.note(message)

    async def display_names(self, target: Target, user_ids: Sequence[str]) -> dict[str, str]:
        return {user_id: user_id for user_id in user_ids}

    async def send_direct(self, target: Target, user_id: str, message: OutMessage) -> None:
        with self._drawing():
            self.screen.note(message)

    def click_for(self, letter: str) -> Interaction | None:
        """The click a typed letter means, if a card or question is open and has
        that letter (a review card shown last comes first)."""
        letters = self.open_card or (self.open_question[1] if self.open_question else None) or {}
        typed = letter.strip().upper()
        custom_id = letters.get(typed)
        if custom_id is None and typed == REPORT.shortcut:
            custom_id = self.last_report
        if custom_id is None:
            return None
        return Interaction(CONSOLE_TARGET, LOCAL_USER, custom_id, locale=from_environment())


class LineReader:
    """Reads stdin on a daemon thread so a blocked read never holds up exit.

    Lines arrive on an asyncio queue; None marks the end of input.
    """

    def __init__(self, source: TextIO | None = None) -> None:
        self.source = source or sys.stdin
        self.lines: asyncio.Queue[str | None] = asyncio.Queue()
        self._loop = asyncio.get_running_loop()
        threading.Thread(target=self._pump, name="stdin-reader", daemon=True).start()

    @property
    def interactive(self) -> bool:
        """A person at a terminal, not a pipe or a file."""
        try:
            return self.source.isatty()
        except (AttributeError, ValueError):
            return False

    def _pump(self) -> None:
        for line in self.source:
            self._loop.call_soon_threadsafe(self.lines.put_nowait, line.rstrip("\n"))
        self._loop.call_soon_threadsafe(self.lines.put_nowait, None)
