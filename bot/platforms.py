"""How `quizmaster run` starts a chat platform, without importing every
platform library: each adapter module is loaded only when its token is set.

`PLATFORMS` is the one table of chat platforms: each entry is an adapter
package whose `__init__` says its NAME, whether the settings configure it,
what is wrong with them, and the MODULE that builds it. A new platform is a
new package under bot/adapters and one line here."""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Protocol

import bot.adapters.discord
import bot.adapters.slack
from bot.chat import Adapter, StartError
from bot.config import Settings
from bot.quiz.service import QuizService

PLATFORMS: tuple[ModuleType, ...] = (bot.adapters.discord, bot.adapters.slack)
_BY_NAME = {package.NAME: package for package in PLATFORMS}


def configured_platforms(settings: Settings) -> list[str]:
    return [package.NAME for package in PLATFORMS if package.configured(settings)]


def settings_problem(settings: Settings) -> str | None:
    """The first problem of a configured platform's settings, if any."""
    for package in PLATFORMS:
        found: str | None = package.problem(settings)
        if found:
            return found
    return None


class Platform(Protocol):
    """A connection to one chat platform, feeding the quiz service."""

    adapter: Adapter

    async def start(self) -> None:
        """Connect and begin serving; return once connected. A problem the
        operator must fix (a rejected token, a taken port) raises StartError."""
        ...

    async def close(self) -> None: ...


def build_platform(name: str, settings: Settings, service: QuizService) -> Platform:
    module = importlib.import_module(_BY_NAME[name].MODULE)
    platform: Platform = module.platform(settings, service)
    service.register(platform.adapter)
    return platform


__all__ = ["PLATFORMS", "Platform", "StartError", "build_platform", "configured_platforms"]
