"""Leaderboards, scoreboards, streaks and a member's stats."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date, timedelta

from bot.chat import Field, OutMessage
from bot.dialect import Dialect
from bot.domain.records import QuizResult, RankRow, TeamRow
from bot.domain.rules import (
    Period,
    Scope,
)
from bot.quiz.texts.common import days, percent, private, reviews_due_line, streak_lines
from bot.quiz.texts.teams import board_lines


def _rank_lines(
    rows: Sequence[RankRow], dialect: Dialect, names: Mapping[str, str] | None = None
) -> str:
    medals = {1: "🥇", 2: "🥈", 3: "🥉"}
    lines = []
    for place, row in enumerate(rows, start=1):
        badge = medals.get(place, f"{place}.")
        lines.append(
            f"{badge} {dialect.mention(row.user_id, names)}: {row.points} pts "
            f"({row.correct}/{row.answered} correct)"
        )
    return "\n".join(lines)


def scoreboard(
    result: QuizResult,
    dialect: Dialect,
    *,
    stopped: bool,
    names: Mapping[str, str] | None = None,
    teams: Sequence[TeamRow] | None = None,
) -> OutMessage:
    """The end of a live quiz; a team quiz's team board beside the individual one."""
    title = "Quiz stopped: final scores" if stopped else "Quiz over: final scores"
    if not result.participants:
        body = "Nobody answered this time."
    else:
        accuracy = round(100 * result.correct / result.answers) if result.answers else 0
        people = "1 player" if result.participants == 1 else f"{result.participants} players"
        ranks = _rank_lines(result.rows, dialect, names)
        body = f"{ranks}\n\n{people} · {accuracy}% of answers correct"
    if teams:
        board = board_lines(teams)
        return OutMessage(
            text=f"{title}\n{body}\nTeams:\n{board}",
            title=title,
            body=body,
            fields=(Field("Teams", board),),
        )
    return OutMessage(text=f"{title}\n{body}", title=title, body=body)


_PERIOD_NAMES = {Period.WEEK: "this week", Period.MONTH: "this month", Period.ALL: "all time"}


def leaderboard(
    rows: Sequence[RankRow],
    dialect: Dialect,
    scope: Scope,
    period: Period,
    names: Mapping[str, str] | None = None,
) -> OutMessage:
    """Posted for the whole channel to see, as the answer to `/quiz leaderboard`."""
    where = "this channel" if scope is Scope.CHANNEL else f"this {dialect.community}"
    title = f"Leaderboard: {where}, {_PERIOD_NAMES[period]}"
    body = _rank_lines(rows, dialect, names) if rows else "No answers yet in this period."
    return OutMessage(text=f"{title}\n{body}", title=title, body=body, public=True)


def streak_board(
    board: Sequence[tuple[str, tuple[int, int]]],
    dialect: Dialect,
    names: Mapping[str, str] | None = None,
) -> OutMessage:
    """`/quiz leaderboard streaks`: current and best daily streaks in the channel."""
    title = "Daily streaks: this channel"
    lines = [
        f"{place}. {dialect.mention(user, names)}: {days(current)} (best {best})"
        for place, (user, (current, best)) in enumerate(board, start=1)
    ]
    body = "\n".join(lines) or "No daily streaks yet: they start with the first daily question."
    return OutMessage(text=f"{title}\n{body}", title=title, body=body, public=True)


@dataclass(frozen=True)
class Hardest:
    """The question of a week that the fewest members got right."""

    prompt: str
    correct: int
    answered: int


def weekly_leaderboard(
    rows: Sequence[RankRow],
    week_start: date,
    streak_leaders: Sequence[tuple[str, int]],
    hardest: Hardest | None,
    dialect: Dialect,
    names: Mapping[str, str] | None = None,
) -> OutMessage:
    """The scheduled weekly post: last week's top ten, streaks, the hardest question."""
    week_end = week_start + timedelta(days=6)
    title = f"Weekly leaderboard: {week_start:%b %d} – {week_end:%b %d}"
    body = _rank_lines(rows, dialect, names) if rows else "Nobody answered last week."
    fields = [Field("Daily streaks", streak_lines(streak_leaders, dialect, names))]
    if hardest is not None:
        share = percent(hardest.correct, hardest.answered)
        fields.append(
            Field(
                "Hardest question",
                f"{dialect.escape_text(hardest.prompt)}\n"
                f"{hardest.correct} of {hardest.answered} right ({share})",
            )
        )
    text = f"{title}\n{body}\n" + "\n".join(f"{f.name}:\n{f.value}" for f in fields)
    return OutMessage(text=text, title=title, body=body, fields=tuple(fields), public=True)


@dataclass(frozen=True)
class StatsView:
    user_id: str
    answered: int
    correct: int
    points: int
    streak: int
    best_streak: int
    best_streak_anywhere: int
    per_tag: Sequence[tuple[str, int, int]]  # (tag, answered, correct)
    reviews_due: int | None = None  # the member's own due review cards


def stats(view: StatsView, dialect: Dialect) -> OutMessage:
    who = dialect.mention(view.user_id)
    title = "Your stats" if who == "you" else f"Stats for {who}"
    summary = (
        f"Answered: {view.answered}\nCorrect: {view.correct} "
        f"({percent(view.correct, view.answered)})\nPoints: {view.points}\n"
        f"Daily streak: {view.streak} (best here {view.best_streak}, "
        f"best in this community {view.best_streak_anywhere})"
    )
    if view.reviews_due is not None:
        summary += f"\n{reviews_due_line(view.reviews_due)}"
    tags = "\n".join(
        f"{tag}: {percent(correct, answered)} of {answered}"
        for tag, answered, correct in view.per_tag
    )
    fields = (Field("By topic", tags),) if tags else ()
    text = f"{title}\n{summary}" + (f"\nBy topic:\n{tags}" if tags else "")
    return OutMessage(text=text, title=title, body=summary, fields=fields)


def forgotten(count: int) -> OutMessage:
    noun = "answer" if count == 1 else "answers"
    return private(
        f"Done: I deleted your {count} {noun}, the stats built on them, your review cards"
        " and your submissions (questions already accepted stay, without your name)."
    )
