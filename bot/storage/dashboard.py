"""The dashboard's reads: a community's channels, how its closed questions were
answered (from `post_votes`), and one member's closed answers over time.

Read-only, each one short query on an index; the boards themselves come from
ScoreStore, as in chat."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

from sqlalchemy import func, select

from bot.quiz.rules import Period
from bot.storage import member_activity, read_models
from bot.storage.base import Store, channel_info
from bot.storage.models import Channel, Post, PostVotes, Schedule
from bot.storage.read_models import OPTIONS
from bot.storage.records import ChannelInfo, RankRow


@dataclass(frozen=True)
class QuestionVotes:
    """How one question was answered over some closed posts: posts, answers,
    right answers and votes per option in bank order."""

    question_id: str
    posts: int
    answered: int
    correct: int
    options: tuple[int, ...]


@dataclass(frozen=True)
class MemberRecord:
    """A member's closed answers in a community: points per UTC day (oldest
    first) and (question, answered, right) per question."""

    points_per_day: list[tuple[date, int]]
    per_question: list[tuple[str, int, int]]


class DashboardStore(Store):
    async def community_channels(self, platform: str, community: str) -> list[ChannelInfo]:
        async with self._reads() as session:
            rows = await session.execute(
                select(Channel)
                .where(Channel.platform == platform, Channel.community == community)
                .order_by(Channel.channel)
            )
            return [channel_info(row) for row in rows.scalars()]

    async def question_votes(
        self, platform: str, community: str, since: datetime | None
    ) -> list[QuestionVotes]:
        """Per question, the community's closed posts (closed since `since`),
        added up by the database: one index range, a row per question back."""
        options = [func.sum(getattr(PostVotes, f"option_{n}")) for n in range(OPTIONS)]
        query = (
            select(
                PostVotes.question_id,
                func.count(),
                func.sum(PostVotes.answered),
                func.sum(PostVotes.correct),
                *options,
            )
            .where(PostVotes.platform == platform, PostVotes.community == community)
            .group_by(PostVotes.question_id)
        )
        if since is not None:
            query = query.where(PostVotes.closed_at >= since)
        async with self._reads() as session:
            rows = await session.execute(query)
            return [
                QuestionVotes(
                    question, int(posts), int(answered), int(correct), tuple(map(int, votes))
                )
                for question, posts, answered, correct, *votes in rows
            ]

    async def member_record(self, platform: str, community: str, user_id: str) -> MemberRecord:
        """The member's answers to closed questions in the community, per UTC
        day and per question, from the read models the close keeps."""
        async with self._reader.connect() as connection:
            days = await connection.execute(
                member_activity.member_days(platform, community, user_id)
            )
            per_day = [(day, int(points)) for day, points in days]
            questions = await connection.execute(
                member_activity.member_questions(platform, community, user_id)
            )
            per_question = [(q, int(n), int(c)) for q, n, c in questions]
        return MemberRecord(per_day, per_question)

    # -- figures for /metrics ------------------------------------------------------

    async def open_questions(self) -> int:
        """Questions on screen and not closed yet (partial index on closes_at)."""
        async with self._reads() as session:
            found = await session.execute(
                select(func.count()).select_from(Post).where(Post.closed_at.is_(None))
            )
            return int(found.scalar_one())

    async def schedule_counts(self) -> dict[str, int]:
        async with self._reads() as session:
            rows = await session.execute(
                select(Schedule.kind, func.count()).group_by(Schedule.kind)
            )
            return {kind: int(count) for kind, count in rows}

    # -- boards, all in one snapshot ----------------------------------------------------

    async def boards(
        self,
        platform: str,
        community: str,
        period: Period,
        keys: Mapping[int, str],
        community_key: str,
        limit: int,
    ) -> tuple[list[RankRow], dict[int, list[RankRow]]]:
        """The community's board and each channel's (`keys`: channel id → its
        period key), each the same indexed query as in chat, read in one
        read-only transaction on a Core connection: one snapshot, one
        connection, no ORM bookkeeping per board."""
        async with self._reader.connect() as session:
            wide = await session.execute(
                read_models.community_board(platform, community, period, community_key, limit)
            )
            channels = {}
            for channel_id, key in keys.items():
                rows = await session.execute(
                    read_models.channel_board(channel_id, period, key, limit)
                )
                channels[channel_id] = [_rank(row) for row in rows]
            return [_rank(row) for row in wide], channels

    async def streak_boards(
        self, channel_ids: Sequence[int], limit: int
    ) -> dict[int, list[tuple[str, int, int]]]:
        """Each channel's streak board, (member, current, best), in one snapshot."""
        async with self._reader.connect() as session:
            boards = {}
            for channel_id in channel_ids:
                rows = await session.execute(read_models.streak_board(channel_id, limit))
                boards[channel_id] = [(u, int(c), int(b)) for u, c, b in rows]
            return boards


def _rank(row: Any) -> RankRow:
    user, points, correct, answered = row
    return RankRow(user, int(points), int(correct), int(answered))
