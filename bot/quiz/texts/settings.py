"""Channel settings and schedules as moderators read them."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime

from bot.chat import OutMessage
from bot.domain.records import ChannelInfo
from bot.domain.rules import (
    MAX_DAILY_WINDOW_HOURS,
    MAX_GRACE_MINUTES,
    MAX_READING_SECONDS,
    MIN_DAILY_WINDOW_HOURS,
    MIN_GRACE_MINUTES,
    WORDS_PER_READING_SECOND,
)
from bot.i18n import LANGUAGE_NAMES, day_and_time_zone, offered, t
from bot.quiz.texts.common import private


def config_keys() -> dict[str, str]:
    """What each setting takes, as `config set` without a value and help say it."""
    return {
        "moderator-role": t(
            "role (Discord) or user group (Slack) whose members moderate; `none` clears it"
        ),
        "moderator-group": t("same as moderator-role"),
        "mentions": t("`on` or `off`: off names members in channel posts without pinging them"),
        "timezone": t(
            "IANA time zone for schedules, leaderboard weeks and months, e.g. Europe/Berlin"
        ),
        "daily-window": t(
            "hours a daily question stays open at most ({low}–{high}, default 24)",
            low=MIN_DAILY_WINDOW_HOURS,
            high=MAX_DAILY_WINDOW_HOURS,
        ),
        "grace": t(
            "minutes a scheduled post missed while the bot was down may still be made "
            "({low}–{high}, default 120)",
            low=MIN_GRACE_MINUTES,
            high=MAX_GRACE_MINUTES,
        ),
        "mode": t(
            "`compete` (default: speed points) or `study` (the same points however fast, "
            "and the explanation with your private reply at once)"
        ),
        "reading-time": t(
            "`on` or `off` (default): each question gets a second more per {words} words of "
            "its prompt and options, up to {most} s",
            words=WORDS_PER_READING_SECOND,
            most=MAX_READING_SECONDS,
        ),
        "daily-pick": t(
            "`shuffle` (default: every question once, in random order) or `adaptive` "
            "(what the channel missed comes back after a few days, then new ones)"
        ),
        "language": t(
            "the language of the whole community's channel posts: {languages} (default "
            "`en`); private replies follow each member's own language",
            languages=language_list(),
        ),
    }


def language_list() -> str:
    return ", ".join(f"`{code}` ({LANGUAGE_NAMES.get(code, code)})" for code in offered())


def _on_off(value: bool) -> str:
    return t("on") if value else t("off")


def channel_settings(channel: ChannelInfo, community_language: str = "en") -> OutMessage:
    lines = [
        t(
            "Moderator role/group: {role}",
            role=channel.moderator_role or t("none (admins only)"),
        ),
        t("Mentions in channel posts: {value}", value=_on_off(channel.mentions)),
        t("Time zone: {zone}", zone=channel.timezone),
        t("Daily question open for: {hours} h at most", hours=channel.daily_window_hours),
        t("Grace for missed posts: {minutes} min", minutes=channel.grace_minutes),
        t("Mode: {mode}", mode=channel.mode),
        t("Reading time: {value}", value=_on_off(channel.reading_time)),
        t("Daily pick: {pick}", pick=channel.daily_pick),
        t(
            "Language of channel posts (whole community): {language}",
            language=f"`{community_language}` ({LANGUAGE_NAMES.get(community_language, '')})",
        ),
    ]
    if channel.delivery_problem:
        lines.append(
            t(
                "⚠️ My last post here failed: {problem}. Timed posts are paused until a "
                "moderator starts a quiz that posts.",
                problem=channel.delivery_problem,
            )
        )
    body = "\n".join(lines)
    title = t("Channel settings")
    return OutMessage(text=f"{title}\n{body}", title=title, body=body)


def unknown_setting(key: str) -> OutMessage:
    known = ", ".join(f"`{name}`" for name in config_keys())
    return private(t("There is no setting `{key}`. Settings: {known}.", key=key, known=known))


def setting_needs_value(key: str) -> OutMessage:
    return private(
        t(
            "`/quiz config set {key}` needs a value: {what}.",
            key=key,
            what=config_keys()[key],
        )
    )


def unknown_timezone(name: str) -> OutMessage:
    shown = name if len(name) <= 40 else name[:39] + "…"  # a paste must not flood the reply
    return private(
        t(
            "`{zone}` is not a time zone I know. Use an IANA name such as Europe/Berlin, "
            "America/New_York or UTC.",
            zone=shown,
        )
    )


def unknown_language(code: str) -> OutMessage:
    shown = " ".join(code.split())[:20]
    return private(
        t(
            "`{code}` is not a language I speak. Choose one of {languages}.",
            code=shown,
            languages=language_list(),
        )
    )


def setting_changed(key: str, channel: ChannelInfo, community_language: str = "en") -> OutMessage:
    shown = replace(channel_settings(channel, community_language), title=t("Setting saved"))
    return replace(shown, text=t("Saved `{key}`.", key=key) + f"\n{shown.body}")


@dataclass(frozen=True)
class ScheduleView:
    kind: str  # "daily" or "leaderboard"
    at_time: str
    zone: str
    days: str  # short form, e.g. "mon-fri"
    bank: str | None
    tag: str | None
    next_fire: datetime  # local to the schedule's zone


def schedule_line(view: ScheduleView) -> str:
    """E.g. `daily 09:00 Europe/Berlin mon-fri (next: Thu 03 Dec 09:00 CET)`: the
    schedule as typed (so it stays English), the next post in the reader's language."""
    if view.kind == "leaderboard":
        line = f"leaderboard {view.days} {view.at_time} {view.zone}"
    else:
        line = f"daily {view.at_time} {view.zone} {view.days}"
        line += "".join(
            f" {key}={value}" for key, value in (("bank", view.bank), ("tag", view.tag)) if value
        )
    return t("{schedule} (next: {when})", schedule=line, when=day_and_time_zone(view.next_fire))


def schedule_list(views: Sequence[ScheduleView], channel: ChannelInfo) -> OutMessage:
    title = t("Schedules in this channel")
    if not views:
        body = t(
            "Nothing is scheduled here. Moderators can add a daily question with "
            "`/quiz schedule daily 09:00 Europe/Berlin mon-fri` and a weekly "
            "leaderboard with `/quiz schedule leaderboard mon 09:00`."
        )
    else:
        body = "\n".join(f"• {schedule_line(view)}" for view in views)
        body += "\n" + t(
            "Daily questions stay open until the next one, {hours} h at most. A post missed "
            "while I was down is made up to {minutes} min late, never twice.",
            hours=channel.daily_window_hours,
            minutes=channel.grace_minutes,
        )
        body += " " + daily_pick_line(channel)
    if channel.delivery_problem:
        body += "\n" + t(
            "⚠️ My last post here failed: {problem}. Scheduled posts are paused until a "
            "moderator starts a quiz that posts.",
            problem=channel.delivery_problem,
        )
    return OutMessage(text=f"{title}\n{body}", title=title, body=body)


def daily_pick_line(channel: ChannelInfo) -> str:
    if channel.daily_pick == "adaptive":
        return t(
            "Daily pick: adaptive (a question the channel missed comes back after 3, 6, then "
            "12 days, never sooner than 3; otherwise one it has not seen)."
        )
    return t("Daily pick: shuffle (every question once, in random order).")


def schedule_saved(view: ScheduleView) -> OutMessage:
    if view.kind == "daily":
        return private(t("Daily question scheduled: {line}.", line=schedule_line(view)))
    return private(t("Weekly leaderboard scheduled: {line}.", line=schedule_line(view)))


def schedules_off(kinds: Sequence[str], removed: int) -> OutMessage:
    if set(kinds) == {"daily", "leaderboard"}:
        names = t("daily question and weekly leaderboard")
    elif "daily" in kinds:
        names = t("daily question")
    else:
        names = t("weekly leaderboard")
    if not removed:
        return private(t("Nothing to turn off: no {names} is scheduled here.", names=names))
    return private(t("Turned off the {names} schedule here.", names=names))


def schedule_needs(option: str) -> OutMessage:
    wanted = {
        "time": t("a time like 09:00"),
        "day": t("a day (mon, tue, wed, thu, fri, sat, sun)"),
    }
    return schedule_problem(t("this schedule needs {what}", what=wanted[option]))


def not_a_schedule(which: str) -> OutMessage:
    return schedule_problem(t("`{which}` is not a schedule: use daily or leaderboard", which=which))


def unknown_schedule_action(action: str) -> OutMessage:
    return schedule_problem(
        t(
            "`{action}` is not a schedule action: use daily, leaderboard, show or off",
            action=action,
        )
    )


def schedule_problem(problem: str) -> OutMessage:
    return private(
        t(
            "{problem}. Nothing was changed. Example: "
            "`/quiz schedule daily 09:00 Europe/Berlin mon-fri`.",
            problem=problem.rstrip("."),
        )
    )


def removed_from_community() -> str:
    """Stored as the channels' delivery problem when the bot is removed from
    their community; read back in the channel settings' warning."""
    return "the bot was removed from this community (add it again to resume timed posts)"
