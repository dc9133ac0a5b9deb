"""The `/quiz` surface: declarations (spec), the registry, the text grammar."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from bot.quiz.surface.registry import Surface


def declared() -> Surface:
    """The surface the features declare (bot/quiz/commands.py assembles it)."""
    from bot.quiz.commands import SURFACE

    return SURFACE
