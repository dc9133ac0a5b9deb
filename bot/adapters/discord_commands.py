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
        description="Multiple-choice quizzes in this channel",
        guild_only=True,
        allowed_contexts=app_commands.AppCommandContext(guild=True),
    )
    config = app_commands.Group(name="config", description="Channel settings", parent=quiz)

    async def banks(_interaction: discord.Interaction[Any], current: str) -> list[Any]:
        return _matching(sorted(catalog().banks), current)

    async def tags(_interaction: discord.Interaction[Any], current: str) -> list[Any]:
        return _matching(catalog().tags(), current)

    @quiz.command(name="start", description="Start a live quiz here (moderators)")
    @app_commands.describe(
        questions=f"How many questions ({MIN_QUESTIONS}–{MAX_QUESTIONS}, default 5)",
        seconds=f"Seconds per question ({MIN_SECONDS}–{MAX_SECONDS}, default 30)",
        bank="Question bank to draw from",
        tag="Only questions with this tag",
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

    @quiz.command(name="stop", description="End the quiz now and post the scores (moderators)")
    async def stop(interaction: discord.Interaction[Any]) -> None:
        await run(interaction, "stop", {})

    @quiz.command(name="skip", description="Reveal the open question now (moderators)")
    async def skip(interaction: discord.Interaction[Any]) -> None:
        await run(interaction, "skip", {})

    @quiz.command(name="leaderboard", description="The top ten, for everyone to see")
    @app_commands.describe(scope="This channel or the whole server", period="Which period")
    async def leaderboard(
        interaction: discord.Interaction[Any],
        scope: Literal["channel", "server"] = "channel",
        period: Literal["week", "month", "all"] = "week",
    ) -> None:
        await run(interaction, "leaderboard", {"scope": scope, "period": period})

    @quiz.command(name="stats", description="Answers, accuracy, points and streaks")
    @app_commands.describe(user="Whose stats (default: yours)")
    async def stats(
        interaction: discord.Interaction[Any], user: discord.User | None = None
    ) -> None:
        await run(interaction, "stats", {"user": str(user.id)} if user else {})

    @quiz.command(name="forget-me", description="Delete your answers and stats")
    async def forget_me(interaction: discord.Interaction[Any]) -> None:
        await run(interaction, "forget-me", {})

    @quiz.command(name="help", description="How the quiz works")
    async def help_(interaction: discord.Interaction[Any]) -> None:
        await run(interaction, "help", {})

    @config.command(name="show", description="Show this channel's settings")
    async def show(interaction: discord.Interaction[Any]) -> None:
        await run(interaction, "config", {})

    @config.command(name="set", description="Change a channel setting (moderators)")
    @app_commands.describe(
        setting="Which setting",
        value="Role name or id (`none` clears it), on/off, or a time zone like Europe/Berlin",
    )
    async def set_(
        interaction: discord.Interaction[Any],
        setting: Literal["moderator-role", "mentions", "timezone"],
        value: str,
    ) -> None:
        await run(interaction, "config", {"key": setting, "value": value})

    return quiz
