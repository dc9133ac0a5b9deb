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
from bot.quiz.texts.common import private

CONFIG_KEYS = {
    "moderator-role": "role (Discord) or user group (Slack) whose members moderate; "
    "`none` clears it",
    "moderator-group": "same as moderator-role",
    "mentions": "`on` or `off`: off names members in channel posts without pinging them",
    "timezone": "IANA time zone for schedules, leaderboard weeks and months, e.g. Europe/Berlin",
    "daily-window": f"hours a daily question stays open at most "
    f"({MIN_DAILY_WINDOW_HOURS}–{MAX_DAILY_WINDOW_HOURS}, default 24)",
    "grace": f"minutes a scheduled post missed while the bot was down may still be made "
    f"({MIN_GRACE_MINUTES}–{MAX_GRACE_MINUTES}, default 120)",
    "mode": "`compete` (default: speed points) or `study` (the same points however fast, "
    "and the explanation with your private reply at once)",
    "reading-time": f"`on` or `off` (default): each question gets a second more per "
    f"{WORDS_PER_READING_SECOND} words of its prompt and options, up to {MAX_READING_SECONDS} s",
    "daily-pick": "`shuffle` (default: every question once, in random order) or `adaptive` "
    "(what the channel missed comes back after a few days, then new ones)",
}


def channel_settings(channel: ChannelInfo) -> OutMessage:
    lines = [
        f"Moderator role/group: {channel.moderator_role or 'none (admins only)'}",
        f"Mentions in channel posts: {'on' if channel.mentions else 'off'}",
        f"Time zone: {channel.timezone}",
        f"Daily question open for: {channel.daily_window_hours} h at most",
        f"Grace for missed posts: {channel.grace_minutes} min",
        f"Mode: {channel.mode}",
        f"Reading time: {'on' if channel.reading_time else 'off'}",
        f"Daily pick: {channel.daily_pick}",
    ]
    if channel.delivery_problem:
        lines.append(
            f"⚠️ My last post here failed: {channel.delivery_problem}. Timed posts are "
            "paused until a moderator starts a quiz that posts."
        )
    body = "\n".join(lines)
    return OutMessage(text=f"Channel settings\n{body}", title="Channel settings", body=body)


def unknown_setting(key: str) -> OutMessage:
    known = ", ".join(f"`{name}`" for name in CONFIG_KEYS)
    return private(f"There is no setting `{key}`. Settings: {known}.")


def setting_needs_value(key: str) -> OutMessage:
    return private(f"`/quiz config set {key}` needs a value: {CONFIG_KEYS[key]}.")


def unknown_timezone(name: str) -> OutMessage:
    shown = name if len(name) <= 40 else name[:39] + "…"  # a paste must not flood the reply
    return private(
        f"`{shown}` is not a time zone I know. Use an IANA name such as Europe/Berlin, "
        "America/New_York or UTC."
    )


def setting_changed(key: str, channel: ChannelInfo) -> OutMessage:
    shown = replace(channel_settings(channel), title="Setting saved")
    return replace(shown, text=f"Saved `{key}`.\n{shown.body}")


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
    """E.g. `daily 09:00 Europe/Berlin mon-fri (next: Thu 03 Dec 09:00 CET)`."""
    if view.kind == "leaderboard":
        line = f"leaderboard {view.days} {view.at_time} {view.zone}"
    else:
        line = f"daily {view.at_time} {view.zone} {view.days}"
        line += "".join(
            f" {key}={value}" for key, value in (("bank", view.bank), ("tag", view.tag)) if value
        )
    return f"{line} (next: {view.next_fire:%a %d %b %H:%M %Z})"


def schedule_list(views: Sequence[ScheduleView], channel: ChannelInfo) -> OutMessage:
    title = "Schedules in this channel"
    if not views:
        body = (
            "Nothing is scheduled here. Moderators can add a daily question with "
            "`/quiz schedule daily 09:00 Europe/Berlin mon-fri` and a weekly "
            "leaderboard with `/quiz schedule leaderboard mon 09:00`."
        )
    else:
        body = "\n".join(f"• {schedule_line(view)}" for view in views)
        body += (
            f"\nDaily questions stay open until the next one, {channel.daily_window_hours} h "
            f"at most. A post missed while I was down is made up to "
            f"{channel.grace_minutes} min late, never twice. {daily_pick_line(channel)}"
        )
    if channel.delivery_problem:
        body += (
            f"\n⚠️ My last post here failed: {channel.delivery_problem}. Scheduled posts are "
            "paused until a moderator starts a quiz that posts."
        )
    return OutMessage(text=f"{title}\n{body}", title=title, body=body)


def daily_pick_line(channel: ChannelInfo) -> str:
    if channel.daily_pick == "adaptive":
        return (
            "Daily pick: adaptive (a question the channel missed comes back after 3, 6, then "
            "12 days, never sooner than 3; otherwise one it has not seen)."
        )
    return "Daily pick: shuffle (every question once, in random order)."


def schedule_saved(view: ScheduleView) -> OutMessage:
    what = "Daily question" if view.kind == "daily" else "Weekly leaderboard"
    return private(f"{what} scheduled: {schedule_line(view)}.")


def schedules_off(kinds: Sequence[str], removed: int) -> OutMessage:
    names = " and ".join("daily question" if k == "daily" else "weekly leaderboard" for k in kinds)
    if not removed:
        return private(f"Nothing to turn off: no {names} is scheduled here.")
    return private(f"Turned off the {names} schedule here.")


_SCHEDULE_OPTIONS = {
    "time": "a time like 09:00",
    "day": "a day (mon, tue, wed, thu, fri, sat, sun)",
}


def schedule_needs(option: str) -> OutMessage:
    return schedule_problem(f"this schedule needs {_SCHEDULE_OPTIONS[option]}")


def not_a_schedule(which: str) -> OutMessage:
    return schedule_problem(f"`{which}` is not a schedule: use daily or leaderboard")


def unknown_schedule_action(action: str) -> OutMessage:
    return schedule_problem(
        f"`{action}` is not a schedule action: use daily, leaderboard, show or off"
    )


def schedule_problem(problem: str) -> OutMessage:
    return private(
        f"{problem.rstrip('.')}. Nothing was changed. Example: "
        "`/quiz schedule daily 09:00 Europe/Berlin mon-fri`."
    )


def removed_from_community() -> str:
    """Stored as the channels' delivery problem when the bot is removed from
    their community; read back in the channel settings' warning."""
    return "the bot was removed from this community (add it again to resume timed posts)"
