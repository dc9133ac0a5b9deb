"""The registry of the `/quiz` surface: every command, button and form the
features declare, and what the edges derive from it (the text grammar, help,
platforms' routing patterns, whether a click is an answer, typed shortcuts)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import TypeVar

from bot.chat import Button
from bot.quiz.surface.spec import ButtonRoute, CommandSpec, FormRoute, Pressed, Variant


class Surface:
    def __init__(
        self,
        commands: Iterable[CommandSpec],
        buttons: Iterable[ButtonRoute] = (),
        forms: Iterable[FormRoute] = (),
    ) -> None:
        self.commands: dict[str, CommandSpec] = {}
        self.buttons: dict[str, ButtonRoute] = {}
        self.forms: dict[str, FormRoute] = {}
        self._button_sizes: list[int] = []
        for spec in commands:
            if spec.name in self.commands:
                raise ValueError(f"command {spec.name} is declared twice")
            self.commands[spec.name] = spec
        for route in buttons:
            self.add_button(route)
        for form in forms:
            if form.kind.prefix in self.forms:
                raise ValueError(f"form {form.kind.prefix} is declared twice")
            self.forms[form.kind.prefix] = form
        self._form_sizes = _sizes(self.forms)

    def add_button(self, route: ButtonRoute) -> None:
        if route.kind.prefix in self.buttons:
            raise ValueError(f"button {route.kind.prefix} is declared twice")
        self.buttons[route.kind.prefix] = route
        self._button_sizes = _sizes(self.buttons)

    def variants(self) -> list[tuple[CommandSpec, Variant]]:
        return [(spec, variant) for spec in self.commands.values() for variant in spec.variants]

    # -- ids --------------------------------------------------------------------

    def button(self, custom_id: str) -> tuple[ButtonRoute, Pressed] | None:
        return _find(self.buttons, self._button_sizes, custom_id)

    def form(self, form_id: str) -> tuple[FormRoute, Pressed] | None:
        return _find(self.forms, self._form_sizes, form_id)

    def is_answer(self, custom_id: str) -> bool:
        """Whether a click on this id stores an answer (so a lost one asks for
        another click), rather than acting as a command."""
        found = self.button(custom_id)
        return found is not None and found[0].kind.answer

    def action_pattern(self) -> re.Pattern[str]:
        """The ids of every declared button, for platforms that route by pattern."""
        return _prefixes(self.buttons)

    def form_pattern(self) -> re.Pattern[str]:
        return _prefixes(self.forms)

    def shortcut(self, button: Button) -> str:
        """What a member types in the terminal to press `button`."""
        found = self.button(button.custom_id)
        shortcut = found[0].kind.shortcut if found else None
        return (shortcut or button.label).upper()


_R = TypeVar("_R", ButtonRoute, FormRoute)


def _find(routes: dict[str, _R], sizes: list[int], custom_id: str) -> tuple[_R, Pressed] | None:
    # Longest prefix first (`qm:f:reject` before a shorter `qm:f`), trying only
    # the prefix lengths declared: a dict look-up or two, as this runs on every click.
    parts = custom_id.split(":")
    for size in sizes:
        route = routes.get(":".join(parts[:size]))
        if route is not None:
            pressed = route.kind.parse_parts(parts)
            return (route, pressed) if pressed is not None else None
    return None


def _sizes(routes: dict[str, ButtonRoute] | dict[str, FormRoute]) -> list[int]:
    return sorted({route.kind.prefix_parts for route in routes.values()}, reverse=True)


def _prefixes(routes: dict[str, ButtonRoute] | dict[str, FormRoute]) -> re.Pattern[str]:
    names = "|".join(re.escape(prefix) for prefix in sorted(routes, key=len, reverse=True))
    return re.compile(rf"^(?:{names})(?::|$)")
