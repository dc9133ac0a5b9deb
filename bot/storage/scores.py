"""Every leaderboard and statistics read: quiz scoreboards, per-question
scores, and (from the read models) leaderboards, member totals and streaks."""

from __future__ import annotations

from sqlalchemy import case, func, select

from bot.domain.records import QuestionScore, QuizResult, RankRow, UserTotals
from bot.domain.rules import Period, Window
from bot.storage import boards, member_activity
from bot.storage.base import Store
from bot.storage.boards import rank_order
from bot.storage.db_thread import read_in_one_hop
from bot.storage.models import Answer, Post


class ScoreStore(Store):
    async def quiz_result(self, quiz_id: int, limit: int) -> QuizResult:
        async with self._reads() as session:
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
        period: Period,
        key: str,
        limit: int,
    ) -> list[RankRow]:
        """Top members by points in a channel (channel_id) or a whole community,
        all time or in the week or month `key` ("2026-W49", "2026-12")."""
        if channel_id is not None:
            query = boards.board_query("channel", period, limit)
            values = boards.board_values(period, key, channel_id)
        else:
            query = boards.board_query("community", period, limit)
            values = boards.board_values(period, key, platform=platform, community=community)
        rows = await self._read_rows(query, values)
        return [RankRow(u, int(p), int(c), int(n)) for u, p, c, n in rows]

    async def past_week_board(self, channel_id: int, key: str, limit: int) -> list[RankRow]:
        """A channel's top members in a past week `key` (the weekly post)."""
        async with self._reads() as session:
            rows = await session.execute(boards.past_week_board(channel_id, key, limit))
            return [RankRow(u, int(p), int(c), int(n)) for u, p, c, n in rows]

    async def user_totals(self, platform: str, user_id: str) -> UserTotals:
        found = await self._read_rows(boards.member_questions(platform, user_id))
        rows = [(q, int(n), int(c), int(p)) for q, n, c, p in found]
        return UserTotals(
            answered=sum(n for _, n, _, _ in rows),
            correct=sum(c for _, _, c, _ in rows),
            points=sum(p for _, _, _, p in rows),
            per_question=[(q, n, c) for q, n, c, _ in rows],
        )

    async def community_totals(self, platform: str, community: str, user_id: str) -> UserTotals:
        """The member's totals and per-question counts in one community only."""
        totals = boards.community_totals(platform, community, user_id)
        per_question = member_activity.member_questions(platform, community, user_id)
        # Both reads in one hand-off (SQLite) or on one connection (PostgreSQL).
        found, questions = await read_in_one_hop(
            self._reader,
            lambda connection: (
                connection.execute(totals).all(),
                connection.execute(per_question).all(),
            ),
        )
        points, correct, answered = (int(v) for v in found[0]) if found else (0, 0, 0)
        return UserTotals(
            answered=answered,
            correct=correct,
            points=points,
            per_question=[(q, int(n), int(c)) for q, n, c in questions],
        )

    async def streak_board(self, channel_id: int, limit: int) -> list[tuple[str, tuple[int, int]]]:
        """Members who ever had a streak in the channel: (user, (current, best))."""
        rows = await self._read_rows(boards.streak_board(channel_id, limit))
        return [(user, (current, best)) for user, current, best in rows]

    async def streak_leaders(self, channel_id: int, limit: int) -> list[tuple[str, int]]:
        rows = await self._read_rows(boards.streak_leaders(channel_id, limit))
        return [(user, current) for user, current in rows]

    async def member_streaks(
        self, platform: str, user_id: str, community: str | None = None
    ) -> dict[int, tuple[int, int]]:
        """The member's (current, best) streak in each channel of the platform,
        or of `community` only."""
        rows = await self._read_rows(boards.member_streaks(platform, user_id, community))
        return {channel: (current, best) for channel, current, best in rows}

    async def streak(self, channel_id: int, user_id: str) -> int:
        """The member's current streak in the channel."""
        rows = await self._read_rows(boards.current_streak(channel_id, user_id))
        return int(rows[0][0]) if rows else 0

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
        async with self._reads() as session:
            rows = await session.execute(query)
            return [QuestionScore(q, int(n), int(c)) for q, n, c in rows]
