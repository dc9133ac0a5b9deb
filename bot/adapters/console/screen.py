"""What the terminal shows, drawn with rich: colour on a terminal, plain text on a
pipe or with NO_COLOR (no escape sequence at all then).

Each kind of line has its own small method, so adding one (a hint, an image's
description) is one method and one call."""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from typing import TextIO

from rich.console import Console
from rich.text import Text

from bot.adapters.console import texts as say
from bot.chat import OutMessage
from bot.quiz import texts

_BOLD = re.compile(r"\*\*(.+?)\*\*")
_SAVE, _UP, _ERASE, _RESTORE = "\x1b7", "\x1b[1A\r", "\x1b[K", "\x1b8"


def _with_bold(text: str, style: str = "") -> Text:
    """`**bold**` marks (the core's neutral emphasis) as rich styles; the text
    itself is never read as markup, so bank and member text show as written."""
    out = Text(style=style)
    for index, part in enumerate(_BOLD.split(text)):
        out.append(part, style="bold" if index % 2 else "")
    return out


class Screen:
    def __init__(self, out: TextIO, *, colour: bool | None = None) -> None:
        is_terminal = out.isatty()
        if colour is None:
            colour = is_terminal and "NO_COLOR" not in os.environ
        self.colour = colour
        # A live countdown rewrites a line with cursor codes: only where colour is on.
        self.live = colour and is_terminal
        self.console = Console(
            file=out,
            color_system="auto" if colour else None,
            force_terminal=colour,
            no_color=not colour,
            highlight=False,
            emoji=False,
            markup=False,
            soft_wrap=not colour,  # a pipe gets whole lines, never wrapped ones
        )
        self._out = out
        self.closed = False  # set when the reader went away (a broken pipe)

    def _print(self, *lines: Text | str) -> None:
        if self.closed:
            return
        for line in lines:
            self.console.print(line)
        self._out.flush()

    def blank(self) -> None:
        self._print("")

    # -- what any console shows -----------------------------------------------

    def title(self, text: str) -> None:
        self._print(Text(text, style="bold cyan"))

    def body(self, text: str) -> None:
        self._print(*(_with_bold(line) for line in text.split("\n")))

    def field(self, name: str, value: str) -> None:
        self._print(Text(name, style="bold"), *(_with_bold(v) for v in value.split("\n")))

    def footer(self, text: str) -> None:
        self._print(Text(f"({text})", style="dim"))

    def message(self, message: OutMessage) -> None:
        """A whole message, as a channel post reads."""
        self.blank()
        if message.title:
            self.title(message.title)
        if message.body:
            self.body(message.body)
        self.picture(message)
        for field in message.fields:
            self.field(field.name, field.value)
        if message.footer:
            self.footer(message.footer)
        if not (message.title or message.body or message.fields):
            self.body(message.text)

    def note(self, message: OutMessage) -> None:
        """A private reply: a card with a title (a review card, stats) is drawn
        whole; a plain reply is one or more lines set off by `>`."""
        if message.title:
            self.message(message)
            return
        text = _BOLD.sub(r"\1", message.body or message.text)
        for field in message.fields:
            text += f"\n{field.name}:\n{field.value}"
        style = "green" if text.startswith("✅") else "red" if text.startswith("❌") else ""
        self._print(*(Text(f"> {line}", style=style) for line in text.split("\n")))

    # -- the game -------------------------------------------------------------

    def question(self, message: OutMessage) -> None:
        """The question without the channel's footer (the countdown replaces it)."""
        self.blank()
        if message.title:
            self.title(message.title)
        self.body(message.body or message.text)
        self.picture(message)

    def picture(self, message: OutMessage) -> None:
        """A terminal shows no pictures: their description and link instead."""
        if message.image is not None:
            self.body(texts.questions.picture_line(message.image))

    def answer_prompt(self, seconds_left: int, letters: Sequence[str]) -> None:
        if self.live:
            self._print(self._countdown_text(seconds_left, letters))
            if not self.closed:
                self.console.print(Text("› ", style="bold"), end="")
                self._out.flush()
        else:
            self._print(Text(say.time_to_answer(seconds_left, letters), style="dim"))

    def _countdown_text(self, seconds_left: int, letters: Sequence[str]) -> Text:
        style = "bold red" if seconds_left <= 5 else "yellow"
        return Text(say.countdown(seconds_left, letters), style=style)

    def tick(self, seconds_left: int, letters: Sequence[str]) -> None:
        """Rewrite the countdown line above the one being typed on, leaving the
        cursor (and what was typed) where it was."""
        if not self.live or self.closed:
            return
        with self.console.capture() as captured:
            self.console.print(self._countdown_text(seconds_left, letters), end="")
        self._out.write(_SAVE + _UP + captured.get() + _ERASE + _RESTORE)
        self._out.flush()

    def end_of_prompt(self) -> None:
        """Time ran out with the cursor still on the prompt line: leave it."""
        if self.live:
            self._print("")

    def verdict(self, right: bool | None, points: int, answer: str) -> None:
        if right:
            self._print(Text(say.right(points), style="bold green"))
        elif right is None:
            self._print(Text(say.times_up(answer), style="bold yellow"))
        else:
            self._print(Text(say.wrong(answer), style="bold red"))

    def explanation(self, text: str) -> None:
        self._print(*(_with_bold(line, style="dim") for line in text.split("\n")))

    def score(self, points: int, right_count: int, answered: int) -> None:
        self._print(Text(say.running_score(points, right_count, answered), style="cyan"))

    def info(self, text: str) -> None:
        self._print(Text(text, style="dim"))

    def end_screen(self, lines: Sequence[str], footer: Sequence[str]) -> None:
        self.blank()
        self._print(Text(f"── {say.end_title()} ──", style="bold cyan"))
        self._print(*(Text(line, style="bold") for line in lines))
        self._print(*(Text(line, style="dim") for line in footer))
