"""The `/quiz` slash command group: typed options, descriptions, autocomplete.

Each subcommand only turns its options into a neutral `(name, args)` pair and
hands it to the runner; which commands need a moderator is the service's call.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from functools import cache
from typing import Any, Literal
from zoneinfo import available_timezones

import discord
from discord import app_commands

from bot.domain.rules import (
    MAX_QUESTIONS,
    MAX_SECONDS,
    MAX_TEAMS,
    MIN_QUESTIONS,
    MIN_SECONDS,
    MIN_TEAMS,
)
from bot.domain.spaced_repetition import MAX_REVIEW_COUNT, MIN_REVIEW_COUNT
from bot.i18n import DEFAULT, speaking, supported
from bot.quiz.bank import Catalog
from bot.quiz.channels import SETTINGS
from bot.quiz.questions import COMMUNITY_BANK
from bot.quiz.texts.usage import COMMAND_DESCRIPTIONS, OPTION_DESCRIPTIONS, described

Runner = Callable[[discord.Interaction[Any], str, dict[str, str]], Awaitable[None]]
CHOICES_LIMIT = 25  # Discord shows at most 25 autocomplete choices


def localised(msgid: str) -> app_commands.locale_str:
    """A description: English as Discord's default, its msgid kept for the translator."""
    with speaking(DEFAULT):
        english = described(msgid)
    return app_commands.locale_str(english, msgid=msgid)


COMMANDS = {key: localised(msgid) for key, msgid in COMMAND_DESCRIPTIONS.items()}
OPTIONS = {key: localised(msgid) for key, msgid in OPTION_DESCRIPTIONS.items()}


class CatalogTranslator(app_commands.Translator):
    """The command picker's descriptions from our catalogs, for each Discord
    client language we ship (`es-ES` and `es-419` both read Spanish)."""

    async def translate(
        self,
        string: app_commands.locale_str,
        locale: discord.Locale,
        context: app_commands.TranslationContextTypes,
    ) -> str | None:
        msgid = string.extras.get("msgid")
        code = supported(locale.value)
        if msgid is None or code is None or code == DEFAULT:
            return None  # Discord shows the English default
        with speaking(code):
            text = described(msgid)
        return text if text != string.message else None


def _matching(values: list[str], current: str) -> list[app_commands.Choice[str]]:
    wanted = current.lower()
    found = [value for value in values if wanted in value.lower()]
    return [app_commands.Choice(name=value, value=value) for value in found[:CHOICES_LIMIT]]


@cache
def _zones() -> list[str]:
    # Reading the tz database walks the filesystem; once per process is enough.
    return sorted(available_timezones())


def _given(**options: str | None) -> dict[str, str]:
    """Only the options the member filled in: absent ones fall back to the service's defaults."""
    return {key: value for key, value in options.items() if value is not None}


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
    schedule = app_commands.Group(name="schedule", description=COMMANDS["schedule"], parent=quiz)

    async def banks(_interaction: discord.Interaction[Any], current: str) -> list[Any]:
        return _matching([*sorted(catalog().banks), COMMUNITY_BANK], current)

    async def tags(_interaction: discord.Interaction[Any], current: str) -> list[Any]:
        return _matching(catalog().tags(), current)

    async def zones(_interaction: discord.Interaction[Any], current: str) -> list[Any]:
        return _matching(_zones(), current)

    @quiz.command(name="start", description=COMMANDS["start"])
    @app_commands.describe(
        questions=OPTIONS["questions"],
        seconds=OPTIONS["seconds"],
        bank=OPTIONS["bank"],
        tag=OPTIONS["tag"],
        teams=OPTIONS["teams"],
    )
    @app_commands.autocomplete(bank=banks, tag=tags)
    async def start(
        interaction: discord.Interaction[Any],
        questions: app_commands.Range[int, MIN_QUESTIONS, MAX_QUESTIONS] | None = None,
        seconds: app_commands.Range[int, MIN_SECONDS, MAX_SECONDS] | None = None,
        bank: str | None = None,
        tag: str | None = None,
        teams: app_commands.Range[int, MIN_TEAMS, MAX_TEAMS] | None = None,
    ) -> None:
        given = {
            "questions": questions,
            "seconds": seconds,
            "bank": bank,
            "tag": tag,
            "teams": teams,
        }
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
        period: Literal["week", "month", "all", "streaks"] = "week",
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

    @quiz.command(name="review", description=COMMANDS["review"])
    @app_commands.describe(count=OPTIONS["count"])
    async def review(
        interaction: discord.Interaction[Any],
        count: app_commands.Range[int, MIN_REVIEW_COUNT, MAX_REVIEW_COUNT] | None = None,
    ) -> None:
        await run(interaction, "review", {"count": str(count)} if count is not None else {})

    @quiz.command(name="export", description=COMMANDS["export"])
    @app_commands.describe(questions=OPTIONS["questions_kind"])
    async def export(
        interaction: discord.Interaction[Any],
        questions: Literal["missed", "all"] = "missed",
    ) -> None:
        await run(interaction, "export", {"which": questions})

    @quiz.command(name="submit", description=COMMANDS["submit"])
    async def submit(interaction: discord.Interaction[Any]) -> None:
        await run(interaction, "submit", {})

    @quiz.command(name="submissions", description=COMMANDS["submissions"])
    async def submissions(interaction: discord.Interaction[Any]) -> None:
        await run(interaction, "submissions", {})

    @quiz.command(name="remove-question", description=COMMANDS["remove-question"])
    @app_commands.describe(id=OPTIONS["id"])
    async def remove_question(interaction: discord.Interaction[Any], id: str) -> None:
        await run(interaction, "remove-question", {"id": id})

    @quiz.command(name="reports", description=COMMANDS["reports"])
    async def reports(interaction: discord.Interaction[Any]) -> None:
        await run(interaction, "reports", {})

    @quiz.command(name="health", description=COMMANDS["health"])
    @app_commands.describe(question=OPTIONS["question"])
    async def health(interaction: discord.Interaction[Any], question: str | None = None) -> None:
        await run(interaction, "health", {"id": question} if question else {})

    @quiz.command(name="restore", description=COMMANDS["restore"])
    @app_commands.describe(question=OPTIONS["question"])
    async def restore(interaction: discord.Interaction[Any], question: str) -> None:
        await run(interaction, "restore", {"id": question})

    @quiz.command(name="dashboard", description=COMMANDS["dashboard"])
    async def dashboard(interaction: discord.Interaction[Any]) -> None:
        await run(interaction, "dashboard", {})

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
    # The settings come from the feature that declares them, so a new one
    # (as `language` was) needs no line here.
    @app_commands.choices(setting=[app_commands.Choice(name=s, value=s) for s in SETTINGS])
    async def set_(interaction: discord.Interaction[Any], setting: str, value: str) -> None:
        await run(interaction, "config", {"key": setting, "value": value})

    # Times, zones and day lists stay free text: the service parses and explains
    # mistakes in one place for every platform.
    @schedule.command(name="daily", description=COMMANDS["schedule daily"])
    @app_commands.describe(
        time=OPTIONS["time"],
        timezone=OPTIONS["timezone"],
        days=OPTIONS["days"],
        bank=OPTIONS["bank"],
        tag=OPTIONS["tag"],
    )
    @app_commands.autocomplete(timezone=zones, bank=banks, tag=tags)
    async def schedule_daily(
        interaction: discord.Interaction[Any],
        time: str,
        timezone: str | None = None,
        days: str | None = None,
        bank: str | None = None,
        tag: str | None = None,
    ) -> None:
        args = _given(action="daily", time=time, timezone=timezone, days=days, bank=bank, tag=tag)
        await run(interaction, "schedule", args)

    @schedule.command(name="leaderboard", description=COMMANDS["schedule leaderboard"])
    @app_commands.describe(day=OPTIONS["day"], time=OPTIONS["time"], timezone=OPTIONS["timezone"])
    @app_commands.autocomplete(timezone=zones)
    async def schedule_leaderboard(
        interaction: discord.Interaction[Any],
        day: Literal["mon", "tue", "wed", "thu", "fri", "sat", "sun"],
        time: str,
        timezone: str | None = None,
    ) -> None:
        args = _given(action="leaderboard", day=day, time=time, timezone=timezone)
        await run(interaction, "schedule", args)

    @schedule.command(name="show", description=COMMANDS["schedule show"])
    async def schedule_show(interaction: discord.Interaction[Any]) -> None:
        await run(interaction, "schedule", {"action": "show"})

    @schedule.command(name="off", description=COMMANDS["schedule off"])
    @app_commands.describe(which=OPTIONS["which"])
    async def schedule_off(
        interaction: discord.Interaction[Any],
        which: Literal["daily", "leaderboard"] | None = None,
    ) -> None:
        await run(interaction, "schedule", _given(action="off", which=which))

    return quiz
