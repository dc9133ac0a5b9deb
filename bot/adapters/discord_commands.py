"""The `/quiz` slash command group: typed options, descriptions, autocomplete.

Each subcommand only turns its options into a neutral `(name, args)` pair and
hands it to the runner; which commands need a moderator is the service's call.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Literal

import discord
from discord import app_commands

from bot.quiz.bank import Catalog
from bot.quiz.render import COMMAND_DESCRIPTIONS as COMMANDS
from bot.quiz.render import OPTION_DESCRIPTIONS as OPTIONS
from bot.quiz.rules import MAX_QUESTIONS, MAX_SECONDS, MIN_QUESTIONS, MIN_SECONDS

Runner = Callable[[discord.Interaction[Any], str, dict[str, str]], Awaitable[None]]
CHOICES_LIMIT = 25  # Discord shows at most 25 autocomplete choices


def _matching(values: list[str], current: str) -> list[app_commands.Choice[str]]:
    wanted = current.lower()
    found = [value for value in values if wanted in value.lower()]
    return [app_commands.Choice(name=value, value=value) for value in found[:CHOICES_LIMIT]]


def quiz_group(run: Runner, catalog: Callable[[], Catalog]) -> app_commands.Group:
    """The `/quiz` group. `catalog` is read at each autocomplete, so it follows reloads."""
    # Guilds only: every quiz lives in a server channel. Not gated by
    # default_member_permissions, so members keep stats, leaderboard and help.
    quiz = app_commands.Group(
        name="quiz",
        description=COMMANDS["quiz"],
        guild_only=True,
        allowed_contexts=app_commands.AppCommandContext(guild=True),
    )
    config = app_commands.Group(name="config", description=COMMANDS["config"], parent=quiz)

    async def banks(_interaction: discord.Interaction[Any], current: str) -> list[Any]:
        return _matching(sorted(catalog().banks), current)

    async def tags(_interaction: discord.Interaction[Any], current: str) -> list[Any]:
        return _matching(catalog().tags(), current)

    @quiz.command(name="start", description=COMMANDS["start"])
    @app_commands.describe(
        questions=OPTIONS["questions"],
        seconds=OPTIONS["seconds"],
        bank=OPTIONS["bank"],
        tag=OPTIONS["tag"],
    )
    @app_commands.autocomplete(bank=banks, tag=tags)
    async def start(
        interaction: discord.Interaction[Any],
        questions: app_commands.Range[int, MIN_QUESTIONS, MAX_QUESTIONS] | None = None,
        seconds: app_commands.Range[int, MIN_SECONDS, MAX_SECONDS] | None = None,
        bank: str | None = None,
        tag: str | None = None,
    ) -> None:
        given = {"questions": questions, "seconds": seconds, "bank": bank, "tag": tag}
        await run(interaction, "start", {k: str(v) for k, v in given.items() if v is not None})

    @quiz.command(name="stop", description=COMMANDS["stop"])
    async def stop(interaction: discord.Interaction[Any]) -> None:
        await run(interaction, "stop", {})

    @quiz.command(name="skip", description=COMMANDS["skip"])
    async def skip(interaction: discord.Interaction[Any]) -> None:
        await run(interaction, "skip", {})

    @quiz.command(name="leaderboard", description=COMMANDS["leaderboard"])
    @app_commands.describe(scope=OPTIONS["scope"], period=OPTIONS["period"])
    async def leaderboard(
        interaction: discord.Interaction[Any],
        scope: Literal["channel", "server"] = "channel",
        period: Literal["week", "month", "all"] = "week",
    ) -> None:
        await run(interaction, "leaderboard", {"scope": scope, "period": period})

    @quiz.command(name="stats", description=COMMANDS["stats"])
    @app_commands.describe(user=OPTIONS["user"])
    async def stats(
        interaction: discord.Interaction[Any], user: discord.User | None = None
    ) -> None:
        await run(interaction, "stats", {"user": str(user.id)} if user else {})

    @quiz.command(name="forget-me", description=COMMANDS["forget-me"])
    async def forget_me(interaction: discord.Interaction[Any]) -> None:
        await run(interaction, "forget-me", {})

    @quiz.command(name="help", description=COMMANDS["help"])
    async def help_(interaction: discord.Interaction[Any]) -> None:
        await run(interaction, "help", {})

    @config.command(name="show", description=COMMANDS["config show"])
    async def show(interaction: discord.Interaction[Any]) -> None:
        await run(interaction, "config", {})

    @config.command(name="set", description=COMMANDS["config set"])
    @app_commands.describe(
        setting=OPTIONS["setting"],
        value=OPTIONS["value"],
    )
    async def set_(
        interaction: discord.Interaction[Any],
        setting: Literal["moderator-role", "mentions", "timezone"],
        value: str,
    ) -> None:
        await run(interaction, "config", {"key": setting, "value": value})

    return quiz
