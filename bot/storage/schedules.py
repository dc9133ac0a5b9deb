"""Channels' timed posts: the rule, its next fire time, and claiming a due slot
(together with creating the daily question's post)."""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import and_, bindparam, delete, or_, select, update
from sqlalchemy.orm import Session

from bot.domain.daily_pick import PastPost, adaptive_pick
from bot.domain.records import DailyPost, ScheduleInfo
from bot.storage import closing
from bot.storage.base import Store, post_info, rowcount, schedule_info
from bot.storage.db_thread import write_in_one_hop
from bot.storage.models import Channel, DeckSeen, Post, PostVotes, Schedule
from bot.storage.process import PROCESS
from bot.storage.quizzes import draw_in


class ScheduleStore(Store):
    async def set_schedule(
        self,
        channel_id: int,
        kind: str,
        *,
        at_time: str,
        zone: str,
        days: list[int],
        bank: str | None,
        tag: str | None,
        next_fire: datetime,
        created_by: str,
        now: datetime,
    ) -> None:
        """Create the channel's schedule of this kind, or replace its rule."""
        values = {
            "at_time": at_time,
            "zone": zone,
            "days": days,
            "bank": bank,
            "tag": tag,
            "next_fire": next_fire,
            "created_by": created_by,
            "updated_at": now,
        }
        async with self._sessions.begin() as session:
            await session.execute(
                self._insert(Schedule)
                .values(channel_id=channel_id, kind=kind, **values)
                .on_conflict_do_update(index_elements=["channel_id", "kind"], set_=values)
            )

    async def schedules_of(self, channel_id: int) -> list[ScheduleInfo]:
        async with self._reads() as session:
            rows = await session.execute(
                select(Schedule, Channel)
                .join(Channel, Channel.id == Schedule.channel_id)
                .where(Schedule.channel_id == channel_id)
                .order_by(Schedule.kind)
            )
            return [schedule_info(schedule, channel) for schedule, channel in rows]

    async def delete_schedules(self, channel_id: int, kinds: Sequence[str]) -> int:
        async with self._sessions.begin() as session:
            result = await session.execute(
                delete(Schedule).where(Schedule.channel_id == channel_id, Schedule.kind.in_(kinds))
            )
            return rowcount(result)

    def _schedulable(self, platforms: Sequence[str]) -> Any:
        """Schedules of channels on these platforms whose posts the platform accepts."""
        return (
            select(Schedule, Channel)
            .join(Channel, Channel.id == Schedule.channel_id)
            .where(Channel.platform.in_(platforms), Channel.delivery_problem.is_(None))
        )

    async def due_schedules(
        self,
        now: datetime,
        platforms: Sequence[str],
        limit: int,
        after: tuple[datetime, int] | None = None,
    ) -> list[ScheduleInfo]:
        """Schedules whose next fire time has come, earliest first (by fire
        time, then id); `after` (a fire time and id) continues a previous page."""
        query = self._schedulable(platforms).where(Schedule.next_fire <= now)
        if after is not None:
            fired, schedule_id = after
            query = query.where(
                or_(
                    Schedule.next_fire > fired,
                    and_(Schedule.next_fire == fired, Schedule.id > schedule_id),
                )
            )
        async with self._reads() as session:
            rows = await session.execute(
                query.order_by(Schedule.next_fire, Schedule.id).limit(limit)
            )
            return [schedule_info(schedule, channel) for schedule, channel in rows]

    async def next_schedule_fire(self, platforms: Sequence[str]) -> datetime | None:
        rows = await self._read_rows(
            self._schedulable(platforms)
            .with_only_columns(Schedule.next_fire)
            .order_by(Schedule.next_fire)
            .limit(1)
        )
        return rows[0][0] if rows else None

    async def claim_schedule(self, schedule_id: int, fired: datetime, next_fire: datetime) -> bool:
        """Move a due schedule on to its next fire time; true only for the one
        caller (of any process) that did, which is then the one that posts."""
        async with self._sessions.begin() as session:
            result = await session.execute(
                update(Schedule)
                .where(Schedule.id == schedule_id, Schedule.next_fire == fired)
                .values(next_fire=next_fire)
            )
            return bool(rowcount(result))

    async def post_daily(
        self,
        channel_id: int,
        pool: Sequence[str],
        rng: random.Random,
        layout: Callable[[str], tuple[list[int], int]],
        *,
        now: datetime,
        closes_at: datetime,
        publish_by: datetime,
        publish_lease: datetime,
        claim: tuple[int, datetime, datetime] | None = None,
        reading: Callable[[str], int] | None = None,
    ) -> DailyPost | None:
        """Draw the day's question from `pool`, create its post and count it as
        seen, all in one transaction; `layout(question_id)` gives the shuffled
        option order and the slot of the right answer.

        With `claim` (schedule id, due fire time, next fire time), the schedule
        is moved on first, in the same transaction, so a crash can never leave a
        slot claimed without its post; None if another caller claimed it first.
        `reading(question_id)`: seconds to read added to the drawn question's time.
        The same transaction closes the channel's older daily questions still
        open, and claims their reveal for the caller: the result names them
        (their answers are counted by the caller, `PostStore.finish_close`)."""
        insert_seen = (
            self._insert(DeckSeen)
            .values(channel_id=channel_id, question_id=bindparam("question_id"))
            .on_conflict_do_nothing()
        )

        def transaction(session: Session) -> DailyPost | None:
            # Synchronous, one hand-off to SQLite's write thread (db_thread.py):
            # a fan-out of thousands of these holds the write lock briefly.
            if claim is not None:
                schedule_id, fired, following = claim
                claimed = session.execute(
                    update(Schedule)
                    .where(Schedule.id == schedule_id, Schedule.next_fire == fired)
                    .values(next_fire=following)
                )
                if not rowcount(claimed):
                    return None
            channel = session.get_one(Channel, channel_id)
            review: tuple[float | None, datetime | None] = (None, None)
            if channel.daily_pick == "adaptive":
                pick = adaptive_pick(pool, daily_history(session, channel_id), now, rng)
                question_id, review = pick.question_id, (pick.due_share, pick.due_posted)
            else:
                [question_id] = draw_in(session, channel_id, pool, 1, rng)
            option_order, correct_slot = layout(question_id)
            closes = closes_at + timedelta(seconds=reading(question_id) if reading else 0)
            post = Post(
                channel_id=channel_id,
                kind="daily",
                question_id=question_id,
                option_order=option_order,
                correct_slot=correct_slot,
                seconds=int((closes - now).total_seconds()),
                posted_at=now,
                closes_at=closes,
                publish_retry_at=publish_lease,
                publish_by=publish_by,
                owner=PROCESS,
                review_share=review[0],
                review_of=review[1],
            )
            session.add(post)
            session.execute(insert_seen, {"question_id": question_id})
            session.flush()
            older = session.execute(
                select(Post.id).where(
                    Post.channel_id == channel_id,
                    Post.kind == "daily",
                    Post.closed_at.is_(None),
                    Post.id < post.id,
                )
            )
            # Today's post closes them, here: one hand-off less per channel.
            closed = [
                older_id
                for older_id in older.scalars().all()
                if closing.claim(session, older_id, now, reveal=True)
            ]
            return DailyPost(post_info(post, channel), closed)

        return await write_in_one_hop(self._sessions, transaction)


def daily_history(session: Session, channel_id: int) -> list[PastPost]:
    """The channel's daily posts with how right it was on each closed one
    (`post_votes`; an open post or one nobody answered has no share)."""
    rows = session.execute(
        select(Post.question_id, Post.posted_at, PostVotes.answered, PostVotes.correct)
        .outerjoin(PostVotes, PostVotes.post_id == Post.id)
        .where(Post.channel_id == channel_id, Post.kind == "daily")
    )
    return [
        PastPost(question_id, posted_at, correct / answered if answered else None)
        for question_id, posted_at, answered, correct in rows
    ]
