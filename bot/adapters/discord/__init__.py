"""The Discord platform: discord.py client, slash command tree, message rendering.

This file is what the runner reads (`bot.platforms`); it imports no discord.py,
so a bot without Discord never loads the library."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # bot.config reads this package's shard settings
    from bot.config import Settings

NAME = "discord"
MODULE = "bot.adapters.discord.platform"  # defines platform(settings, service)


def configured(settings: Settings) -> bool:
    return settings.discord_token is not None


def problem(settings: Settings) -> str | None:
    return settings.discord_shards.problem()
