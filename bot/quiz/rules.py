"""Quiz rules as pure functions: scoring, option order, leaderboard periods, limits."""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import datetime, time, timedelta
from enum import Enum
from zoneinfo import ZoneInfo

POINTS_CORRECT = 10
SPEED_BONUS_MAX = 5

MIN_QUESTIONS, MAX_QUESTIONS = 1, 50
MIN_SECONDS, MAX_SECONDS = 2, 3600
DEFAULT_QUESTIONS, DEFAULT_SECONDS = 5, 30
LEADERBOARD_SIZE = 10


def points_for(correct: bool, *, live: bool, time_left: float, time_limit: float) -> int:
    """10 for a correct answer; in a live quiz plus round(5 × time_left / time_limit)."""
    if not correct:
        return 0
    if not live or time_limit <= 0:
        return POINTS_CORRECT
    share = min(max(time_left / time_limit, 0.0), 1.0)
    return POINTS_CORRECT + round(SPEED_BONUS_MAX * share)


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


def check_range(name: str, value: int, low: int, high: int) -> str | None:
    if low <= value <= high:
        return None
    return f"{name} must be between {low} and {high} (got {value})"


def streaks(results: list[bool]) -> tuple[int, int]:
    """(current, best) streak from a member's daily results in posting order.

    Each entry is one daily question that closed in the channel: True if the
    member answered it correctly; a wrong or missing answer breaks the run.
    """
    current = best = 0
    for correct in results:
        current = current + 1 if correct else 0
        best = max(best, current)
    return current, best
