"""Schedule rules as pure functions: parsing what people type (times, zones, days)
and working out when a rule fires next. No I/O and no clock reads: callers pass `now`."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from typing import TypeAlias
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

Days: TypeAlias = frozenset[int]  # 0=Monday .. 6=Sunday, as datetime.weekday()

DAY_NAMES: tuple[str, ...] = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
ALL_DAYS: Days = frozenset(range(7))
_FULL_NAMES = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_DAY_WORDS: dict[str, Days] = {
    "daily": ALL_DAYS,
    "everyday": ALL_DAYS,
    "every day": ALL_DAYS,  # what format_days prints, so it must parse back
    "weekdays": frozenset(range(5)),
    "weekends": frozenset({5, 6}),
}

# ASCII digits only: \d would also accept other scripts' digits.
_TIME = re.compile(r"([0-9]{1,2}):([0-9]{2})")
# A zone key's shape; rules out paths like "../etc" and "/etc/passwd" before ZoneInfo sees them.
_ZONE = re.compile(r"[A-Za-z][A-Za-z0-9_+-]*(?:/[A-Za-z0-9_+-]+)*")


class ScheduleError(ValueError):
    """Bad schedule input; the message is a sentence meant for the chat user."""


def _shown(text: str) -> str:
    """The user's input for an error message, cut short so a paste can't flood the chat."""
    return text if len(text) <= 40 else text[:39] + "…"


def parse_time(text: str) -> time:
    """A 24-hour H:MM or HH:MM time of day, 00:00 to 23:59."""
    text = text.strip()
    match = _TIME.fullmatch(text)
    if match is None or int(match[1]) > 23 or int(match[2]) > 59:
        if not text:
            raise ScheduleError("A time of day is needed: use HH:MM, like 09:00")
        raise ScheduleError(f"{_shown(text)} is not a time of day: use HH:MM, like 09:00")
    return time(int(match[1]), int(match[2]))


def parse_zone(text: str) -> ZoneInfo:
    """An IANA time zone such as Europe/Berlin, or UTC."""
    text = text.strip()
    if text.upper() == "UTC":
        return ZoneInfo("UTC")
    hint = "use an IANA name like Europe/Berlin or America/New_York"
    if not text:
        raise ScheduleError(f"A time zone is needed: {hint}")
    problem = ScheduleError(f"{_shown(text)} is not a time zone I know: {hint}")
    if _ZONE.fullmatch(text) is None:
        raise problem
    try:
        return ZoneInfo(text)
    # Not found, not a TZif file (ValueError), or a directory such as "Europe" (OSError).
    except (ZoneInfoNotFoundError, ValueError, OSError):
        raise problem from None


def _day(word: str) -> int | None:
    """A day from its name or any prefix of it with at least three letters."""
    if len(word) >= 3:
        for number, name in enumerate(_FULL_NAMES):
            if name.startswith(word):
                return number
    return None


def parse_weekday(text: str) -> int:
    """A single day of the week, e.g. "fri" or "Friday" → 4."""
    number = _day(text.strip().lower())
    if number is None:
        raise ScheduleError(
            f"'{_shown(text.strip())}' is not a day of the week: use a name like mon or monday"
        )
    return number


def parse_days(text: str) -> Days:
    """Days like "mon-fri", "mon,wed,fri", "fri-mon" (ranges wrap), "weekdays" or "daily"."""
    problem = ScheduleError(
        f"'{_shown(text.strip())}' is not a list of days: use names like mon-fri or mon,wed,fri"
    )
    days: set[int] = set()
    for raw in text.lower().split(","):
        item = " ".join(raw.split())  # tolerate stray and doubled spaces
        if item in _DAY_WORDS:
            days |= _DAY_WORDS[item]
            continue
        ends = [_day(part.strip()) for part in item.split("-")]
        first, last = ends[0], ends[-1]
        if len(ends) > 2 or first is None or last is None:
            raise problem
        # Counting forward modulo 7 makes "fri-mon" mean fri,sat,sun,mon.
        days.update((first + step) % 7 for step in range((last - first) % 7 + 1))
    return frozenset(days)


def format_days(days: Days) -> str:
    """The short form: "every day", or runs of three or more as "mon-fri", e.g. "mon-wed,fri"."""
    if days == ALL_DAYS:
        return "every day"
    if not days:
        return "no days"  # parse_days never yields this; shown rather than crashing a display
    runs: list[list[int]] = []
    for day in sorted(days):
        if runs and runs[-1][-1] == day - 1:
            runs[-1].append(day)
        else:
            runs.append([day])
    parts: list[str] = []
    for run in runs:
        if len(run) >= 3:
            parts.append(f"{DAY_NAMES[run[0]]}-{DAY_NAMES[run[-1]]}")
        else:
            parts.extend(DAY_NAMES[day] for day in run)
    return ",".join(parts)


@dataclass(frozen=True)
class Rule:
    """Fire at local wall time `at` in `zone` on `days` (weekdays of the local date)."""

    at: time
    zone: ZoneInfo
    days: Days = ALL_DAYS

    def __post_init__(self) -> None:
        # An empty or out-of-range set would leave next_fire with nothing to find.
        if not self.days or not self.days <= ALL_DAYS:
            raise ScheduleError("A schedule needs at least one day of the week")


def _gap_end(before: datetime, after: datetime, zone: ZoneInfo) -> datetime:
    """The UTC instant of the offset change between `before` and `after`.

    Bisection down to the microsecond finds it exactly, for gaps of any length
    and changes on any second, in about 35 steps.
    """
    new_offset = after.astimezone(zone).utcoffset()
    while after - before > timedelta(microseconds=1):
        middle = before + (after - before) // 2
        if middle.astimezone(zone).utcoffset() == new_offset:
            after = middle
        else:
            before = middle
    return after


def fire_time_on(day: date, rule: Rule) -> datetime:
    """The UTC instant the rule fires on local date `day` (whatever its weekday).

    A wall time that occurs twice (clocks go back) fires at its first occurrence;
    one that does not exist (clocks go forward) fires when the gap ends.
    """
    local = datetime.combine(day, rule.at, rule.zone)  # fold=0: the first occurrence
    instant = local.astimezone(UTC)
    if instant.astimezone(rule.zone).replace(tzinfo=None) == local.replace(tzinfo=None):
        return instant
    # In a gap, fold=0 reads the time with the old offset and fold=1 with the new one;
    # the clock change lies between those two instants.
    other = local.replace(fold=1).astimezone(UTC)
    return _gap_end(min(instant, other), max(instant, other), rule.zone)


def next_fire(now: datetime, rule: Rule) -> datetime:
    """The first instant strictly after `now` (aware) at which the rule fires, in UTC."""
    if now.tzinfo is None:
        raise ValueError("next_fire needs an aware datetime")
    today = now.astimezone(rule.zone).date()
    # From yesterday: a fire pushed past a gap can land on the following local date.
    candidates = (
        fire_time_on(day, rule)
        for day in (today + timedelta(days=offset) for offset in range(-1, 9))
        if day.weekday() in rule.days
    )
    return min(instant for instant in candidates if instant > now)


def catch_up(due: datetime, now: datetime, grace: timedelta) -> bool:
    """Whether a post due at `due` should still go out at `now` (e.g. after a restart).

    Less than `grace` late: post it now. Later than that: skip it, since a
    "daily question" hours late is more confusing than a missed one.
    """
    return now - due < grace
