"""Quiz rules as pure functions: scoring, option order, leaderboard periods, limits."""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from enum import Enum
from functools import cache
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

POINTS_CORRECT = 10
SPEED_BONUS_MAX = 5

MIN_QUESTIONS, MAX_QUESTIONS = 1, 50
MIN_SECONDS, MAX_SECONDS = 2, 3600
DEFAULT_QUESTIONS, DEFAULT_SECONDS = 5, 30
LEADERBOARD_SIZE = 10
STREAK_LEADERS = 5

MIN_DAILY_WINDOW_HOURS, MAX_DAILY_WINDOW_HOURS = 1, 168
MIN_GRACE_MINUTES, MAX_GRACE_MINUTES = 0, 1440


def points_for(correct: bool, *, live: bool, time_left: float, time_limit: float) -> int:
    """10 for a correct answer; in a live quiz plus round(5 × time_left / time_limit)."""
    if not correct:
        return 0
    if not live or time_limit <= 0:
        return POINTS_CORRECT
    share = min(max(time_left / time_limit, 0.0), 1.0)
    return POINTS_CORRECT + round(SPEED_BONUS_MAX * share)


def half_points(points: int) -> int:
    """A right answer after the hint: half its points, rounded down."""
    return points // 2


WORDS_PER_READING_SECOND = 15
MAX_READING_SECONDS = 60


def reading_seconds(*texts: str) -> int:
    """The time to read added to a question with reading time on: a second per
    15 words of its prompt and options (whole seconds, rounded down), 60 at most."""
    words = sum(len(text.split()) for text in texts)
    return min(words // WORDS_PER_READING_SECOND, MAX_READING_SECONDS)


MIN_TEAMS, MAX_TEAMS = 2, 4
TEAM_HISTORY_DAYS = 30


def shuffled_order(option_count: int, rng: random.Random) -> list[int]:
    """A posting's display order: slot i shows the bank's option order[i]."""
    order = list(range(option_count))
    rng.shuffle(order)
    return order


class Period(Enum):
    WEEK = "week"
    MONTH = "month"
    ALL = "all"


class Scope(Enum):
    CHANNEL = "channel"
    COMMUNITY = "community"


@dataclass(frozen=True)
class Window:
    """A half-open UTC interval [start, end); None means unbounded."""

    start: datetime | None
    end: datetime | None


def period_window(period: Period, now: datetime, zone: ZoneInfo) -> Window:
    """The current ISO week (Monday to Sunday) or calendar month in `zone`, as UTC bounds."""
    if period is Period.ALL:
        return Window(None, None)
    local = now.astimezone(zone)
    if period is Period.WEEK:
        first_day = local.date() - timedelta(days=local.weekday())
        next_first = first_day + timedelta(days=7)
    else:
        first_day = local.date().replace(day=1)
        next_first = (first_day + timedelta(days=32)).replace(day=1)
    start = datetime.combine(first_day, time(0), zone)
    end = datetime.combine(next_first, time(0), zone)
    return Window(start.astimezone(now.tzinfo), end.astimezone(now.tzinfo))


ALL_TIME = "all"


def period_key(period: Period, at: datetime, zone: ZoneInfo) -> str:
    """The score bucket an instant falls in, in `zone`: "all", an ISO week like
    "2026-W49" or a month like "2026-12". Leaderboard rows are kept per bucket."""
    if period is Period.ALL:
        return ALL_TIME
    local = at.astimezone(zone)
    if period is Period.WEEK:
        year, week, _ = local.isocalendar()
        return f"{year}-W{week:02d}"
    return f"{local.year}-{local.month:02d}"


@cache
def zone_or_utc(name: str) -> ZoneInfo:
    """A stored channel zone; UTC if this machine does not know it (any more)."""
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        return ZoneInfo("UTC")


def week_key(day: date) -> str:
    """The ISO week bucket of a local calendar day."""
    year, week, _ = day.isocalendar()
    return f"{year}-W{week:02d}"


MAX_ID_LENGTH = 64


def is_valid_id(value: str) -> bool:
    """A member, channel or community id as platforms make them: 1–64 printable
    characters without spaces (longer ones would not fit the database either).

    Checked on every click, so by str's own C methods: the only white space
    `isprintable` lets through is the ASCII space."""
    return 0 < len(value) <= MAX_ID_LENGTH and value.isprintable() and " " not in value


def in_range(value: int, low: int, high: int) -> bool:
    return low <= value <= high


def as_int(value: int | str | None, default: int) -> int | None:
    """A whole number typed in a command option; `default` when left out,
    None when it is not a whole number."""
    if value is None or value == "":
        return default
    if isinstance(value, int):
        return value
    try:
        return int(value.strip())
    except ValueError:  # "ten", "3.5", "--5", "²" (a digit int() refuses)
        return None


def streaks(results: list[bool]) -> tuple[int, int]:
    """(current, best) streak from a member's daily results in posting order.

    Each entry is one daily question posted in the channel: True if the member
    answered it correctly; a wrong answer, or none by the time it closed,
    breaks the run. Days with no post are simply not in the list, so days
    off and outages never break a streak.
    """
    current = best = 0
    for correct in results:
        current = current + 1 if correct else 0
        best = max(best, current)
    return current, best


def streak_table(
    posts: list[tuple[int, bool]], answers: dict[str, dict[int, bool]]
) -> dict[str, tuple[int, int]]:
    """Everyone's (current, best) streak in a channel from its daily posts
    (id, closed), oldest first, and each member's answers (post id → correct):
    for each member, `streaks` of the posts that closed or that they answered
    (an open post counts for a member only once they answered it).

    Walks each member's answers only, not every post for every member: a
    closed post between two of a member's answers (or after the last one) is
    one they missed. That keeps a recount of a big channel linear."""
    position = {post_id: index for index, (post_id, _) in enumerate(posts)}
    # closed_before[i]: how many of the first i posts are closed.
    closed_before = [0]
    for _, closed in posts:
        closed_before.append(closed_before[-1] + int(closed))
    table: dict[str, tuple[int, int]] = {}
    for user, mine in answers.items():
        current = best = 0
        after = 0  # index just past the member's previous answer
        for index, correct in sorted(
            (position[post_id], correct) for post_id, correct in mine.items() if post_id in position
        ):
            if closed_before[index] > closed_before[after]:
                current = 0  # missed a closed post in between
            current = current + 1 if correct else 0
            best = max(best, current)
            after = index + 1
        if closed_before[len(posts)] > closed_before[after]:
            current = 0
        table[user] = (current, best)
    return table
