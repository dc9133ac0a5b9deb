"""Team quizzes: a member's team, and the team board beside the individual one."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from babel.numbers import format_decimal

from bot.chat import OutMessage
from bot.domain.records import TeamRow
from bot.i18n import babel_locale, t, tn
from bot.quiz.texts.common import bad_value


def team_rule() -> str:
    return t(
        "Teams are dealt by points in this channel over the last 30 days: highest first, "
        "round-robin (Team 1, Team 2, …). Each member joins on their first answer, into "
        "their dealt team if it is one of the smallest, else the smallest; teams never "
        "differ by more than one member. A team's score is its average points per member "
        "who answered."
    )


def team_name(team: int) -> str:
    return t("Team {number}", number=team)


def your_team(team: int, teams: int) -> str:
    return t("You play for {team} (of {teams}).", team=team_name(team), teams=teams)


def with_team(reply: OutMessage, line: str) -> OutMessage:
    """A private reply with the member's team added, on their first answer."""
    if not line:
        return reply
    return replace(reply, text=f"{reply.text}\n{line}", body=f"{reply.body}\n{line}")


def board_lines(board: Sequence[TeamRow]) -> str:
    lines = []
    for place, row in enumerate(board, 1):
        people = tn("1 member", "{count} members", row.members)
        lines.append(
            t(
                "{place}. {team}: {average} points per member ({points} points, {people})",
                place=place,
                team=team_name(row.team),
                average=format_decimal(row.average, "0.0", locale=babel_locale()),
                points=row.points,
                people=people,
            )
        )
    return "\n".join(lines)


def teams_out_of_range(value: object, low: int, high: int) -> OutMessage:
    return bad_value(
        t(
            "teams must be a whole number from {low} to {high} (got {value})",
            low=low,
            high=high,
            value=value,
        )
    )
