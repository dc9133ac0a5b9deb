"""How `quizmaster run` starts a chat platform, without importing every
platform library: each adapter module is loaded only when its token is set."""

from __future__ import annotations

import importlib
from typing import Protocol

from bot.chat import Adapter
from bot.config import Settings
from bot.quiz.service import QuizService

# Each module defines `platform(settings, service) -> Platform`.
PLATFORM_MODULES = {
    "discord": "bot.adapters.discord.platform",
    "slack": "bot.adapters.slack.platform",
}


class Platform(Protocol):
    """A connection to one chat platform, feeding the quiz service."""

    adapter: Adapter

    async def start(self) -> None:
        """Connect and begin serving; return once connected. A problem the
        operator must fix (a rejected token, a taken port) raises StartError."""
        ...

    async def close(self) -> None: ...


class StartError(Exception):
    """The platform cannot start with these settings; the message says why."""


def build_platform(name: str, settings: Settings, service: QuizService) -> Platform:
    module = importlib.import_module(PLATFORM_MODULES[name])
    platform: Platform = module.platform(settings, service)
    service.register(platform.adapter)
    return platform
