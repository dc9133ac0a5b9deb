"""The dashboard's reads: a community's channels, how its closed questions were
answered (from `post_votes`), and one member's closed answers over time.

Read-only, each one short query on an index; the boards themselves come from
ScoreStore, as in chat."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from functools import lru_cache
from typing import Any

from sqlalchemy import Connection, Integer, bindparam, func, select, union_all

from bot.domain.records import ChannelInfo, RankRow
from bot.domain.rules import Period
from bot.storage import boards, member_activity
from bot.storage.base import Store, channel_info
from bot.storage.db_thread import read_in_one_hop
from bot.storage.models import Channel, ChannelScore, DailyStreak, Post, PostVotes, Schedule
from bot.storage.post_votes import OPTIONS


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

        def read(connection: Connection) -> MemberRecord:
            days = connection.execute(member_activity.member_days(platform, community, user_id))
            questions = connection.execute(
                member_activity.member_questions(platform, community, user_id)
            )
            return MemberRecord(
                [(day, int(points)) for day, points in days],
                [(q, int(n), int(c)) for q, n, c in questions],
            )

        return await read_in_one_hop(self._reader, read)

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
        period key), read in one read-only transaction on a Core connection:
        one snapshot, and every channel's board in one statement per
        CHANNELS_PER_STATEMENT channels, each board still read from its index."""

        def read(connection: Connection) -> tuple[list[RankRow], dict[int, list[RankRow]]]:
            wide = connection.execute(
                boards.board_query("community", period, limit),
                boards.board_values(period, community_key, platform=platform, community=community),
            )
            channels: dict[int, list[RankRow]] = {channel_id: [] for channel_id in keys}
            for chosen in _slices(list(keys)):
                values: dict[str, Any] = {}
                for n, channel_id in enumerate(chosen):
                    values[f"channel_{n}"] = channel_id
                    if period is not Period.ALL:
                        values[f"key_{n}"] = keys[channel_id]
                rows = connection.execute(many_channel_boards(period, len(chosen), limit), values)
                for channel_id, *row in rows:
                    channels[channel_id].append(_rank(row))
            return [_rank(row) for row in wide], channels

        return await read_in_one_hop(self._reader, read)

    async def streak_boards(
        self, channel_ids: Sequence[int], limit: int
    ) -> dict[int, list[tuple[str, int, int]]]:
        """Each channel's streak board, (member, current, best), in one
        snapshot and one statement per CHANNELS_PER_STATEMENT channels."""

        def read(connection: Connection) -> dict[int, list[tuple[str, int, int]]]:
            boards: dict[int, list[tuple[str, int, int]]] = {c: [] for c in channel_ids}
            for chosen in _slices(list(channel_ids)):
                values = {f"channel_{n}": channel_id for n, channel_id in enumerate(chosen)}
                rows = connection.execute(many_streak_boards(len(chosen), limit), values)
                for channel_id, user, current, best in rows:
                    boards[channel_id].append((user, int(current), int(best)))
            return boards

        return await read_in_one_hop(self._reader, read)


# A page's channel boards go to the database in statements of this many boards
# (a UNION ALL of one indexed LIMIT query each; SQLite allows 500 per compound).
CHANNELS_PER_STATEMENT = 50


def _slices(ids: list[int]) -> list[list[int]]:
    return [
        ids[start : start + CHANNELS_PER_STATEMENT]
        for start in range(0, len(ids), CHANNELS_PER_STATEMENT)
    ]


@lru_cache(maxsize=256)
def many_channel_boards(period: Period, channels: int, limit: int) -> Any:
    """The boards of channels `channel_0` … (in periods `key_0` …, but for all
    time), as (channel id, member, points, right, answered) in rank order per
    channel: built once per shape, then only its parameters change."""
    parts = []
    for n in range(channels):
        model = ChannelScore
        columns, where = boards.board_columns(
            model, period, bindparam(f"key_{n}"), model.channel_id == bindparam(f"channel_{n}")
        )
        points, correct, answered, last_correct = columns
        parts.append(
            select(
                model.channel_id,
                model.user_id,
                points.label("points"),
                correct.label("correct"),
                answered.label("answered"),
                last_correct.label("last_correct_at"),
            )
            .where(*where)
            .order_by(*boards.rank_order(points, correct, last_correct, model.user_id))
            .limit(limit)
        )
    rows = _union(parts)
    return select(
        rows.c.channel_id, rows.c.user_id, rows.c.points, rows.c.correct, rows.c.answered
    ).order_by(
        rows.c.channel_id,
        *boards.rank_order(rows.c.points, rows.c.correct, rows.c.last_correct_at, rows.c.user_id),
    )


@lru_cache(maxsize=256)
def many_streak_boards(channels: int, limit: int) -> Any:
    """The streak boards of channels `channel_0` …, as (channel id, member,
    current, best) in board order per channel."""
    parts = [
        boards.streak_board(bindparam(f"channel_{n}", type_=Integer), limit).add_columns(
            DailyStreak.channel_id
        )
        for n in range(channels)
    ]
    rows = _union(parts)
    return select(rows.c.channel_id, rows.c.user_id, rows.c.current, rows.c.best).order_by(
        rows.c.channel_id, rows.c.current.desc(), rows.c.best.desc(), rows.c.user_id
    )


def _union(parts: list[Any]) -> Any:
    """UNION ALL of LIMIT queries, each wrapped as a subquery (SQLite takes no
    ORDER BY or LIMIT on a compound's members)."""
    return union_all(*(select(part.subquery()) for part in parts)).subquery()


def _rank(row: Any) -> RankRow:
    user, points, correct, answered = row
    return RankRow(user, int(points), int(correct), int(answered))
