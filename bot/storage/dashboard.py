"""The dashboard's reads: a community's channels, how its closed questions were
answered (from `post_votes`), and one member's closed answers over time.

Read-only, each one short query on an index; the boards themselves come from
ScoreStore, as in chat."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import func, select

from bot.storage.base import Store, channel_info
from bot.storage.models import Answer, Channel, Post, PostVotes, Schedule
from bot.storage.read_models import SLOTS
from bot.storage.records import ChannelInfo


@dataclass(frozen=True)
class PostVoteRow:
    """One closed post: which question, its option order, and its votes per shown slot."""

    question_id: str
    option_order: list[int]
    correct_slot: int
    answered: int
    correct: int
    slots: tuple[int, ...]


@dataclass(frozen=True)
class MemberAnswer:
    """One of a member's answers to a closed question."""

    at: datetime
    question_id: str
    correct: bool
    points: int


class DashboardStore(Store):
    async def community_channels(self, platform: str, community: str) -> list[ChannelInfo]:
        async with self._reads() as session:
            rows = await session.execute(
                select(Channel)
                .where(Channel.platform == platform, Channel.community == community)
                .order_by(Channel.channel)
            )
            return [channel_info(row) for row in rows.scalars()]

    async def post_votes(
        self, platform: str, community: str, since: datetime | None
    ) -> list[PostVoteRow]:
        """Every closed post of the community (closed since `since`) with answers."""
        slots = [getattr(PostVotes, f"slot_{n}") for n in range(SLOTS)]
        query = (
            select(
                Post.question_id,
                Post.option_order,
                Post.correct_slot,
                PostVotes.answered,
                PostVotes.correct,
                *slots,
            )
            .join(Post, Post.id == PostVotes.post_id)
            .where(PostVotes.platform == platform, PostVotes.community == community)
        )
        if since is not None:
            query = query.where(PostVotes.closed_at >= since)
        async with self._reads() as session:
            rows = await session.execute(query)
            return [
                PostVoteRow(question, list(order), correct_slot, answered, correct, tuple(votes))
                for question, order, correct_slot, answered, correct, *votes in rows
            ]

    async def member_answers(
        self, platform: str, community: str, user_id: str
    ) -> list[MemberAnswer]:
        """The member's answers to closed questions in the community, oldest first."""
        query = (
            select(Answer.answered_at, Post.question_id, Answer.correct, Answer.points)
            .join(Post, Post.id == Answer.post_id)
            .join(Channel, Channel.id == Answer.channel_id)
            .where(
                Answer.user_id == user_id,
                Channel.platform == platform,
                Channel.community == community,
                Post.closed_at.is_not(None),
            )
            .order_by(Answer.answered_at)
        )
        async with self._reads() as session:
            rows = await session.execute(query)
            return [MemberAnswer(at, q, bool(c), int(p)) for at, q, c, p in rows]

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
