"""The Slack platform: slack-bolt app over Socket Mode or HTTP, Block Kit rendering.

This file is what the runner reads (`bot.platforms`); it imports no slack-bolt,
so a bot without Slack never loads the library."""

from __future__ import annotations

from bot.config import Settings

NAME = "slack"
MODULE = "bot.adapters.slack.platform"  # defines platform(settings, service)


def configured(settings: Settings) -> bool:
    return settings.slack_configured


def problem(settings: Settings) -> str | None:
    """Why the Slack settings cannot start, or None when they can (or are unset)."""
    return settings.slack_problem()
