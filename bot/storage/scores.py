"""Every leaderboard and statistics read: quiz scoreboards, leaderboards,
member totals, daily results and streak history, per-question scores."""

from __future__ import annotations

from typing import Any

from sqlalchemy import and_, case, func, select

from bot.quiz.rules import Window
from bot.storage.base import Store
from bot.storage.models import Answer, Channel, Post
from bot.storage.records import DailyHistory, QuestionScore, QuizResult, RankRow, UserTotals


def rank_order(points: Any, correct: Any, last_correct: Any, user_id: Any) -> list[Any]:
    """Points, then more correct answers, then the earlier last correct answer, then user id."""
    return [points.desc(), correct.desc(), last_correct.asc().nulls_last(), user_id.asc()]


class ScoreStore(Store):
    async def quiz_result(self, quiz_id: int, limit: int) -> QuizResult:
        async with self._sessions() as session:
            points = func.sum(Answer.points)
            correct = func.sum(case((Answer.correct, 1), else_=0))
            last_correct = func.max(case((Answer.correct, Answer.answered_at), else_=None))
            base = (
                select(Answer).join(Post, Post.id == Answer.post_id).where(Post.quiz_id == quiz_id)
            )
            ranked = await session.execute(
                base.with_only_columns(Answer.user_id, points, correct, func.count(Answer.id))
                .group_by(Answer.user_id)
                .order_by(*rank_order(points, correct, last_correct, Answer.user_id))
                .limit(limit)
            )
            rows = [RankRow(u, int(p), int(c), int(n)) for u, p, c, n in ranked]
            totals = (
                await session.execute(
                    base.with_only_columns(
                        func.count(func.distinct(Answer.user_id)),
                        func.count(Answer.id),
                        func.coalesce(correct, 0),
                    )
                )
            ).one()
            return QuizResult(rows, int(totals[0]), int(totals[1]), int(totals[2]))

    async def leaderboard(
        self,
        *,
        platform: str,
        community: str,
        channel_id: int | None,
        window: Window,
        limit: int,
    ) -> list[RankRow]:
        """Top members by points in a channel (channel_id) or a whole community."""
        points = func.sum(Answer.points)
        correct = func.sum(case((Answer.correct, 1), else_=0))
        last_correct = func.max(case((Answer.correct, Answer.answered_at), else_=None))
        query = select(Answer.user_id, points, correct, func.count(Answer.id))
        if channel_id is not None:
            query = query.where(Answer.channel_id == channel_id)
        else:
            in_community = select(Channel.id).where(
                Channel.platform == platform, Channel.community == community
            )
            query = query.where(Answer.channel_id.in_(in_community))
        if window.start is not None:
            query = query.where(Answer.answered_at >= window.start)
        if window.end is not None:
            query = query.where(Answer.answered_at < window.end)
        query = (
            query.group_by(Answer.user_id)
            .order_by(*rank_order(points, correct, last_correct, Answer.user_id))
            .limit(limit)
        )
        async with self._sessions() as session:
            rows = await session.execute(query)
            return [RankRow(u, int(p), int(c), int(n)) for u, p, c, n in rows]

    async def user_totals(self, platform: str, user_id: str) -> UserTotals:
        on_platform = select(Channel.id).where(Channel.platform == platform)
        mine = and_(Answer.user_id == user_id, Answer.channel_id.in_(on_platform))
        async with self._sessions() as session:
            per_question = await session.execute(
                select(
                    Post.question_id,
                    func.count(Answer.id),
                    func.sum(case((Answer.correct, 1), else_=0)),
                    func.sum(Answer.points),
                )
                .join(Post, Post.id == Answer.post_id)
                .where(mine)
                .group_by(Post.question_id)
            )
            rows = [(q, int(n), int(c), int(p)) for q, n, c, p in per_question]
        return UserTotals(
            answered=sum(n for _, n, _, _ in rows),
            correct=sum(c for _, _, c, _ in rows),
            points=sum(p for _, _, _, p in rows),
            per_question=[(q, n, c) for q, n, c, _ in rows],
        )

    async def daily_results(self, channel_id: int, user_id: str) -> list[bool]:
        """For each daily question in the channel, oldest first, that has closed
        or that the user already answered: did the user answer it correctly?
        (Streaks are derived from this; an open question not yet answered
        cannot break a streak.)"""
        async with self._sessions() as session:
            rows = await session.execute(
                select(func.coalesce(Answer.correct, False))
                .select_from(Post)
                .outerjoin(Answer, and_(Answer.post_id == Post.id, Answer.user_id == user_id))
                .where(
                    Post.channel_id == channel_id,
                    Post.kind == "daily",
                    Post.closed_at.is_not(None) | Answer.id.is_not(None),
                )
                .order_by(Post.posted_at, Post.id)
            )
            return [bool(value) for value in rows.scalars()]

    async def daily_history(self, channel_id: int) -> DailyHistory:
        """Every daily question of the channel and every answer to them, for
        computing all members' streaks at once."""
        async with self._sessions() as session:
            posts = await session.execute(
                select(Post.id, Post.closed_at.is_not(None))
                .where(Post.channel_id == channel_id, Post.kind == "daily")
                .order_by(Post.posted_at, Post.id)
            )
            answers = await session.execute(
                select(Answer.user_id, Answer.post_id, Answer.correct)
                .join(Post, Post.id == Answer.post_id)
                .where(Post.channel_id == channel_id, Post.kind == "daily")
            )
            by_user: dict[str, dict[int, bool]] = {}
            for user_id, post_id, correct in answers:
                by_user.setdefault(user_id, {})[post_id] = bool(correct)
            return DailyHistory([(p, bool(closed)) for p, closed in posts], by_user)

    async def question_scores(self, channel_id: int, window: Window) -> list[QuestionScore]:
        """How each question posted in the channel during `window` was answered."""
        correct = func.sum(case((Answer.correct, 1), else_=0))
        query = (
            select(Post.question_id, func.count(Answer.id), correct)
            .join(Answer, Answer.post_id == Post.id)
            .where(Post.channel_id == channel_id)
            .group_by(Post.question_id)
        )
        if window.start is not None:
            query = query.where(Post.posted_at >= window.start)
        if window.end is not None:
            query = query.where(Post.posted_at < window.end)
        async with self._sessions() as session:
            rows = await session.execute(query)
            return [QuestionScore(q, int(n), int(c)) for q, n, c in rows]

    async def daily_channels_of(self, platform: str, user_id: str) -> list[int]:
        async with self._sessions() as session:
            rows = await session.execute(
                select(func.distinct(Answer.channel_id))
                .join(Post, Post.id == Answer.post_id)
                .join(Channel, Channel.id == Answer.channel_id)
                .where(
                    Answer.user_id == user_id, Channel.platform == platform, Post.kind == "daily"
                )
            )
            return list(rows.scalars())
