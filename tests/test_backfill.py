"""Upgrading a database that already holds a quiz history: migration 0006
backfills the read models, so every leaderboard, stat and streak reads as it
did before the upgrade, and `db check` finds nothing to report.

"Before" is what the bot computed from the answers themselves until now: the
same aggregate queries, run on the database before it is upgraded, over the
answers to closed questions (scores count an answer once its question closes)."""

from __future__ import annotations

from datetime import UTC, datetime
from zoneinfo import ZoneInfo

from sqlalchemy import and_, case, func, or_, select
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from bot.domain.records import RankRow
from bot.domain.rules import LEADERBOARD_SIZE, Period, Window, period_key, period_window, streaks
from bot.storage.db import Database, check_read_models, upgrade
from bot.storage.models import Answer, Channel, Post
from bot.storage.repository import Repository
from tests.datagen import PLATFORM, generate

NOW = datetime(2026, 3, 18, 15, 30, tzinfo=UTC)  # a Wednesday
# Forty days: weeks and a month change inside the history, in every zone.
SHAPE = {"answers": 6000, "members": 400, "channels": 6, "communities": 2, "days": 40}
PERIODS = (Period.ALL, Period.WEEK, Period.MONTH)


async def old_board(
    connection: AsyncConnection, windows: dict[int, Window], limit: int
) -> list[RankRow]:
    """The leaderboard as the bot ranked it before the read models: every
    answer of the channels, each within its window."""
    points = func.sum(Answer.points)
    correct = func.sum(case((Answer.correct, 1), else_=0))
    last_correct = func.max(case((Answer.correct, Answer.answered_at), else_=None))
    inside = []
    closed = Answer.post_id.in_(select(Post.id).where(Post.closed_at.is_not(None)))
    for channel_id, window in windows.items():
        condition = [Answer.channel_id == channel_id]
        if window.start is not None and window.end is not None:
            condition += [Answer.answered_at >= window.start, Answer.answered_at < window.end]
        inside.append(and_(*condition))
    rows = await connection.execute(
        select(Answer.user_id, points, correct, func.count(Answer.id))
        .where(or_(*inside), closed)
        .group_by(Answer.user_id)
        .order_by(points.desc(), correct.desc(), last_correct.asc().nulls_last(), Answer.user_id)
        .limit(limit)
    )
    return [RankRow(u, int(p), int(c), int(n)) for u, p, c, n in rows]


async def old_totals(connection: AsyncConnection, user_id: str) -> list[tuple[str, int, int, int]]:
    rows = await connection.execute(
        select(
            Post.question_id,
            func.count(Answer.id),
            func.sum(case((Answer.correct, 1), else_=0)),
            func.sum(Answer.points),
        )
        .join(Post, Post.id == Answer.post_id)
        .where(Answer.user_id == user_id, Post.closed_at.is_not(None))
        .group_by(Post.question_id)
    )
    return sorted((q, int(n), int(c), int(p)) for q, n, c, p in rows)


async def old_streaks(connection: AsyncConnection, channel_id: int) -> dict[str, tuple[int, int]]:
    posts = await connection.execute(
        select(Post.id, Post.closed_at.is_not(None))
        .where(Post.channel_id == channel_id, Post.kind == "daily")
        .order_by(Post.posted_at, Post.id)
    )
    answers = await connection.execute(
        select(Answer.user_id, Answer.post_id, Answer.correct)
        .join(Post, Post.id == Answer.post_id)
        .where(Post.channel_id == channel_id, Post.kind == "daily")
    )
    by_user: dict[str, dict[int, bool]] = {}
    for user_id, post_id, correct in answers:
        by_user.setdefault(user_id, {})[post_id] = bool(correct)
    history = [(p, bool(closed)) for p, closed in posts]
    return {
        user: streaks([mine.get(p, False) for p, closed in history if closed or p in mine])
        for user, mine in by_user.items()
    }


def streak_ranking(table: dict[str, tuple[int, int]]) -> list[tuple[str, tuple[int, int]]]:
    ranked = sorted(table.items(), key=lambda entry: (-entry[1][0], -entry[1][1], entry[0]))
    return [entry for entry in ranked if entry[1][1] > 0][:LEADERBOARD_SIZE]


async def test_an_upgraded_history_shows_the_same_boards_stats_and_streaks(
    engine_at_0005: AsyncEngine,
) -> None:
    engine = engine_at_0005
    info = await generate(engine, **SHAPE, seed=3, now=NOW)
    async with engine.connect() as connection:
        channels = (
            await connection.execute(select(Channel.id, Channel.community, Channel.timezone))
        ).all()
    zones = {channel_id: ZoneInfo(zone) for channel_id, _, zone in channels}
    communities = {community for _, community, _ in channels}
    members = [info.heavy_member, "nobody"]

    # Before: straight from the answers, on the old schema.
    before: dict[tuple[str, str, Period], list[RankRow]] = {}
    async with engine.connect() as connection:
        for channel_id, _, _ in channels:
            for period in PERIODS:
                window = period_window(period, NOW, zones[channel_id])
                before[("channel", str(channel_id), period)] = await old_board(
                    connection, {channel_id: window}, LEADERBOARD_SIZE
                )
        for community in communities:
            for period in PERIODS:
                # A community's week is each of its channels' own week.
                windows = {
                    channel_id: period_window(period, NOW, zones[channel_id])
                    for channel_id, home, _ in channels
                    if home == community
                }
                before[("community", community, period)] = await old_board(
                    connection, windows, LEADERBOARD_SIZE
                )
        streaks_before = {
            channel_id: await old_streaks(connection, channel_id) for channel_id, _, _ in channels
        }
        totals_before = {user: await old_totals(connection, user) for user in members}

    await upgrade(engine)

    scores = Repository(Database(engine, engine)).scores
    for (scope, key, period), rows in before.items():
        if scope == "channel":
            channel_id = int(key)
            after = await scores.leaderboard(
                platform=PLATFORM,
                community="",
                channel_id=channel_id,
                period=period,
                key=period_key(period, NOW, zones[channel_id]),
                limit=LEADERBOARD_SIZE,
            )
        else:
            after = await scores.leaderboard(
                platform=PLATFORM,
                community=key,
                channel_id=None,
                period=period,
                key=period_key(period, NOW, ZoneInfo("UTC")),
                limit=LEADERBOARD_SIZE,
            )
        assert after == rows, (scope, key, period)
        if period is Period.ALL:
            assert len(rows) == LEADERBOARD_SIZE  # the comparison ranks real boards

    for channel_id, table in streaks_before.items():
        assert await scores.streak_board(channel_id, LEADERBOARD_SIZE) == streak_ranking(table)
    heavy_streaks = await scores.member_streaks(PLATFORM, info.heavy_member)
    assert heavy_streaks == {
        channel_id: table[info.heavy_member]
        for channel_id, table in streaks_before.items()
        if info.heavy_member in table
    }
    assert any(current > 0 for current, _ in heavy_streaks.values())

    for user, rows in totals_before.items():
        totals = await scores.user_totals(PLATFORM, user)
        assert sorted(totals.per_question) == [(q, n, c) for q, n, c, _ in rows]
        assert totals.points == sum(p for _, _, _, p in rows)

    assert await check_read_models(engine) == ([], 0)


async def test_upgrading_an_empty_database_at_0005_works_and_checks_clean(
    engine_at_0005: AsyncEngine,
) -> None:
    await upgrade(engine_at_0005)
    assert await check_read_models(engine_at_0005) == ([], 0)
