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
from bot.i18n import N_, short_date, t, tn
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
            t(
                "{badge} {member}: {points} pts ({correct}/{answered} correct)",
                badge=badge,
                member=dialect.mention(row.user_id, names),
                points=row.points,
                correct=row.correct,
                answered=row.answered,
            )
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
    title = t("Quiz stopped: final scores") if stopped else t("Quiz over: final scores")
    if not result.participants:
        body = t("Nobody answered this time.")
    else:
        accuracy = round(100 * result.correct / result.answers) if result.answers else 0
        people = tn("1 player", "{count} players", result.participants)
        ranks = _rank_lines(result.rows, dialect, names)
        body = (
            ranks
            + "\n\n"
            + t("{players} · {share} of answers correct", players=people, share=f"{accuracy}%")
        )
    if teams:
        board = board_lines(teams)
        teams_name = t("Teams")
        return OutMessage(
            text=f"{title}\n{body}\n{teams_name}:\n{board}",
            title=title,
            body=body,
            fields=(Field(teams_name, board),),
        )
    return OutMessage(text=f"{title}\n{body}", title=title, body=body)


_PERIOD_NAMES = {
    Period.WEEK: N_("this week"),
    Period.MONTH: N_("this month"),
    Period.ALL: N_("all time"),
}


def leaderboard(
    rows: Sequence[RankRow],
    dialect: Dialect,
    scope: Scope,
    period: Period,
    names: Mapping[str, str] | None = None,
) -> OutMessage:
    """Posted for the whole channel to see, as the answer to `/quiz leaderboard`."""
    where = (
        t("this channel")
        if scope is Scope.CHANNEL
        else t("this {community}", community=dialect.community)
    )
    title = t("Leaderboard: {where}, {period}", where=where, period=t(_PERIOD_NAMES[period]))
    body = _rank_lines(rows, dialect, names) if rows else t("No answers yet in this period.")
    return OutMessage(text=f"{title}\n{body}", title=title, body=body, public=True)


def streak_board(
    board: Sequence[tuple[str, tuple[int, int]]],
    dialect: Dialect,
    names: Mapping[str, str] | None = None,
) -> OutMessage:
    """`/quiz leaderboard streaks`: current and best daily streaks in the channel."""
    title = t("Daily streaks: this channel")
    lines = [
        t(
            "{place}. {member}: {days} (best {best})",
            place=place,
            member=dialect.mention(user, names),
            days=days(current),
            best=best,
        )
        for place, (user, (current, best)) in enumerate(board, start=1)
    ]
    body = "\n".join(lines) or t("No daily streaks yet: they start with the first daily question.")
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
    title = t(
        "Weekly leaderboard: {start} – {end}",
        start=short_date(week_start),
        end=short_date(week_end),
    )
    body = _rank_lines(rows, dialect, names) if rows else t("Nobody answered last week.")
    fields = [Field(t("Daily streaks"), streak_lines(streak_leaders, dialect, names))]
    if hardest is not None:
        share = percent(hardest.correct, hardest.answered)
        fields.append(
            Field(
                t("Hardest question"),
                dialect.escape_text(hardest.prompt)
                + "\n"
                + t(
                    "{correct} of {answered} right ({share})",
                    correct=hardest.correct,
                    answered=hardest.answered,
                    share=share,
                ),
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
    title = t("Your stats") if who == t("you") else t("Stats for {member}", member=who)
    summary = t(
        "Answered: {answered}\nCorrect: {correct} ({share})\nPoints: {points}\n"
        "Daily streak: {streak} (best here {best}, best in this community {best_anywhere})",
        answered=view.answered,
        correct=view.correct,
        share=percent(view.correct, view.answered),
        points=view.points,
        streak=view.streak,
        best=view.best_streak,
        best_anywhere=view.best_streak_anywhere,
    )
    if view.reviews_due is not None:
        summary += f"\n{reviews_due_line(view.reviews_due)}"
    tags = "\n".join(
        t(
            "{tag}: {share} of {answered}",
            tag=tag,
            share=percent(correct, answered),
            answered=answered,
        )
        for tag, answered, correct in view.per_tag
    )
    by_topic = t("By topic")
    fields = (Field(by_topic, tags),) if tags else ()
    text = f"{title}\n{summary}" + (f"\n{by_topic}:\n{tags}" if tags else "")
    return OutMessage(text=text, title=title, body=summary, fields=fields)


def forgotten(count: int) -> OutMessage:
    return private(
        tn(
            "Done: I deleted your 1 answer, the stats built on them, your review cards and "
            "your submissions (questions already accepted stay, without your name).",
            "Done: I deleted your {count} answers, the stats built on them, your review cards "
            "and your submissions (questions already accepted stay, without your name).",
            count,
        )
    )
