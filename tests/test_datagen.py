"""The data generator writes what the scale benchmarks rely on: exactly the
answers asked for, one per member and post, inside each post's open window,
scored by the rules, and the same history again for the same seed."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.domain.rules import points_for
from bot.storage.db import create_engine, upgrade
from bot.storage.models import Answer, Channel, Post, Quiz
from tests.datagen import SCHEMA_REVISION, GeneratedInfo, generate

NOW = datetime(2026, 3, 4, 15, 30, tzinfo=UTC)
SHAPE = {"answers": 3000, "members": 300, "channels": 6, "communities": 2, "days": 10}


async def _generate(engine: AsyncEngine, seed: int = 5) -> GeneratedInfo:
    return await generate(engine, **SHAPE, seed=seed, now=NOW)


async def test_generated_history_keeps_the_invariants(engine: AsyncEngine) -> None:
    info = await _generate(engine)

    async with engine.connect() as connection:
        posts = {post.id: post for post in (await connection.execute(select(Post))).all()}
        answers = (await connection.execute(select(Answer))).all()
        channels = (await connection.execute(select(Channel))).all()
        quizzes = await connection.scalar(select(func.count(Quiz.id)))

    assert len(answers) == info.answers == SHAPE["answers"]
    assert len({(a.post_id, a.user_id) for a in answers}) == len(answers)
    assert len(channels) == SHAPE["channels"]
    assert len({c.community for c in channels}) == SHAPE["communities"]
    assert {c.platform for c in channels} == {"discord"}
    assert any(c.timezone != "UTC" for c in channels)
    assert quizzes == info.quizzes > 0
    assert len({a.user_id for a in answers}) == info.members <= SHAPE["members"]

    for answer in answers:
        post = posts[answer.post_id]
        assert answer.channel_id == post.channel_id
        assert post.posted_at <= answer.answered_at < post.closes_at
        assert answer.answered_at < (post.closed_at or NOW)
        assert 0 <= answer.slot < len(post.option_order)
        assert answer.correct == (answer.slot == post.correct_slot)
        time_left = (post.closes_at - answer.answered_at).total_seconds()
        live = post.kind == "live"
        expected = points_for(
            answer.correct, live=live, time_left=time_left, time_limit=post.seconds
        )
        assert answer.points == expected

    daily = [post for post in posts.values() if post.kind == "daily"]
    per_channel = Counter(post.channel_id for post in daily)
    assert set(per_channel.values()) == {SHAPE["days"]}
    assert all(post.message_id and post.posted_at <= NOW for post in posts.values())
    still_open = [post for post in daily if post.closed_at is None]
    assert len(still_open) == info.open_daily_posts > 0
    assert all(post.closes_at > NOW and post.revealed_at is None for post in still_open)
    assert all(post.revealed_at for post in posts.values() if post.closed_at is not None)

    by_member = Counter(a.user_id for a in answers)
    assert by_member[info.heavy_member] == info.heavy_member_answers == max(by_member.values())
    # Heavy-tailed: the busiest member answers many times as often as the median one.
    counts = sorted(by_member.values())
    assert info.heavy_member_answers >= 10 * counts[len(counts) // 2]
    by_channel = Counter(a.channel_id for a in answers)
    busy = next(c for c in channels if c.channel == info.busy_channel.channel)
    assert by_channel[busy.id] == info.busy_channel_answers == max(by_channel.values())
    assert busy.community == info.community == info.busy_channel.community


async def test_the_same_seed_makes_the_same_history(tmp_path: Path) -> None:
    histories = []
    for name in ("one", "two"):
        engine = create_engine(f"sqlite+aiosqlite:///{tmp_path / name}.db")
        await upgrade(engine, SCHEMA_REVISION)
        info = await _generate(engine)
        await upgrade(engine)
        async with engine.connect() as connection:
            rows = (await connection.execute(select(Answer).order_by(Answer.id))).all()
        await engine.dispose()
        histories.append((info, [tuple(row) for row in rows]))
    assert histories[0] == histories[1]
