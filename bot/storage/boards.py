"""Leaderboard statements over the score read models, each read from an index kept in rank order."""

from __future__ import annotations

from functools import cache
from typing import Any

from sqlalchemy import (
    BindParameter,
    Integer,
    String,
    bindparam,
    case,
    or_,
    select,
)

from bot.domain.rules import Period
from bot.storage.models import (
    Channel,
    ChannelScore,
    CommunityScore,
    DailyStreak,
    MemberQuestion,
)

# Every read-model table (the recount replaces them all).


def board(model: Any, period: Period, key: Any, limit: int, *where: Any) -> Any:
    """Top rows of a board for a period: all time, or the current week or
    month `key`. Ranked by points, then more right answers, then the earlier
    last right answer, then user id."""
    columns, where = board_columns(model, period, key, *where)
    return _ranked(model, columns, limit, where)


def board_columns(
    model: Any, period: Period, key: Any, *where: Any
) -> tuple[list[Any], tuple[Any, ...]]:
    """A board's (points, right, answered, last right answer) columns for a
    period, and its conditions with the period's."""
    if period is Period.ALL:
        columns = [model.points, model.correct, model.answered, model.last_correct_at]
    elif period is Period.MONTH:
        where = (*where, model.month == key)
        columns = [model.month_points, model.month_correct, model.month_answered]
        columns.append(model.month_last_correct_at)
    else:
        where = (*where, model.week == key)
        columns = [model.week_points, model.week_correct, model.week_answered]
        columns.append(model.week_last_correct_at)
    return columns, where


def past_week_board(channel_id: int, key: str, limit: int) -> Any:
    """A channel's board for a past week `key` (the Monday post): the week of a
    member's latest answer, or the one before it if they answered since."""
    model = ChannelScore
    latest = model.week == key
    columns = [
        case((latest, getattr(model, f"week_{name}")), else_=getattr(model, f"prev_week_{name}"))
        for name in ("points", "correct", "answered", "last_correct_at")
    ]
    where = (model.channel_id == channel_id, or_(latest, model.prev_week == key))
    return _ranked(model, columns, limit, where)


def rank_order(points: Any, correct: Any, last_correct: Any, user_id: Any) -> list[Any]:
    """Points, then more correct answers, then the earlier last correct answer, then user id
    (every leaderboard and quiz scoreboard ranks this way).

    `last_correct` is NULL only where `correct` is 0, and two rows compared on
    it have the same `correct`: so it never matters where NULLs sort, and each
    backend's default lets the boards read the ranked indexes (models.py)."""
    return [points.desc(), correct.desc(), last_correct.asc(), user_id.asc()]


def _ranked(model: Any, columns: list[Any], limit: int, where: tuple[Any, ...]) -> Any:
    points, correct, answered, last_correct = columns
    return (
        select(model.user_id, points, correct, answered)
        .where(*where)
        .order_by(*rank_order(points, correct, last_correct, model.user_id))
        .limit(limit)
    )


def channel_board(channel_id: int, period: Period, key: str, limit: int) -> Any:
    return board_query("channel", period, limit).params(board_values(period, key, channel_id))


def community_board(platform: str, community: str, period: Period, key: str, limit: int) -> Any:
    values = board_values(period, key, platform=platform, community=community)
    return board_query("community", period, limit).params(values)


@cache
def board_query(scope: str, period: Period, limit: int) -> Any:
    """The board of a channel (`scope` "channel": parameter `channel_id`) or a
    community ("community": `platform`, `community`), with `key` for a week or
    month: built once per shape and run with `board_values`. Building the
    expression anew was a third of a leaderboard's CPU."""
    key = bindparam("key", type_=String)
    if scope == "channel":
        channel = ChannelScore.channel_id == bindparam("channel_id", type_=Integer)
        return board(ChannelScore, period, key, limit, channel)
    platform = CommunityScore.platform == bindparam("platform", type_=String)
    community = CommunityScore.community == bindparam("community", type_=String)
    return board(CommunityScore, period, key, limit, platform, community)


def board_values(
    period: Period,
    key: str,
    channel_id: int | None = None,
    *,
    platform: str | None = None,
    community: str | None = None,
) -> dict[str, Any]:
    """The parameters of `board_query` for one board."""
    values: dict[str, Any] = {}
    if period is not Period.ALL:
        values["key"] = key
    if channel_id is not None:
        values["channel_id"] = channel_id
    else:
        values.update(platform=platform, community=community)
    return values


def streak_board(channel_id: int | BindParameter[int], limit: int) -> Any:
    """Members who ever had a streak: longest current first, then longest best."""
    return (
        select(DailyStreak.user_id, DailyStreak.current, DailyStreak.best)
        .where(DailyStreak.channel_id == channel_id, DailyStreak.best > 0)
        .order_by(DailyStreak.current.desc(), DailyStreak.best.desc(), DailyStreak.user_id)
        .limit(limit)
    )


def streak_leaders(channel_id: int, limit: int) -> Any:
    """Members with the longest current streaks (at least 1), longest first."""
    return (
        select(DailyStreak.user_id, DailyStreak.current)
        .where(DailyStreak.channel_id == channel_id, DailyStreak.current > 0)
        .order_by(DailyStreak.current.desc(), DailyStreak.user_id)
        .limit(limit)
    )


def current_streak(channel_id: int, user_id: str) -> Any:
    return select(DailyStreak.current).where(
        DailyStreak.channel_id == channel_id, DailyStreak.user_id == user_id
    )


def member_streaks(platform: str, user_id: str, community: str | None = None) -> Any:
    """(channel id, current, best) for each channel where the member has a streak
    row: on the platform, or only in `community`'s channels."""
    query = (
        select(DailyStreak.channel_id, DailyStreak.current, DailyStreak.best)
        .join(Channel, Channel.id == DailyStreak.channel_id)
        .where(DailyStreak.user_id == user_id, Channel.platform == platform)
    )
    return query if community is None else query.where(Channel.community == community)


def community_totals(platform: str, community: str, user_id: str) -> Any:
    """(points, right answers, answers) of the member in one community, all time."""
    return select(CommunityScore.points, CommunityScore.correct, CommunityScore.answered).where(
        CommunityScore.platform == platform,
        CommunityScore.community == community,
        CommunityScore.user_id == user_id,
    )


def member_questions(platform: str, user_id: str) -> Any:
    """(question id, answered, right, points) for each question the member answered."""
    return select(
        MemberQuestion.question_id,
        MemberQuestion.answered,
        MemberQuestion.correct,
        MemberQuestion.points,
    ).where(MemberQuestion.platform == platform, MemberQuestion.user_id == user_id)
