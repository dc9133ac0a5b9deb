"""Every query the quiz service runs. Each method is one short transaction and
returns plain data, so no session outlives a call (SQLite keeps one connection)."""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import and_, case, delete, exists, func, or_, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from bot.chat import Target
from bot.quiz.rules import Window
from bot.storage.db import session_factory
from bot.storage.models import Answer, Channel, DeckSeen, Post, Quiz, Schedule

RUNNING = "running"


@dataclass(frozen=True)
class ChannelInfo:
    id: int
    target: Target
    timezone: str
    moderator_role: str | None
    mentions: bool = True
    delivery_problem: str | None = None
    daily_window_hours: int = 24
    grace_minutes: int = 120


@dataclass(frozen=True)
class ScheduleInfo:
    """A channel's timed post as stored, with the channel settings it needs."""

    id: int
    channel: ChannelInfo
    kind: str
    at_time: str
    zone: str
    days: list[int]
    bank: str | None
    tag: str | None
    next_fire: datetime


@dataclass(frozen=True)
class DailyHistory:
    """A channel's daily questions, oldest first, and who answered them how."""

    posts: list[tuple[int, bool]]  # (post id, closed)
    answers: dict[str, dict[int, bool]]  # user → post id → correct


@dataclass(frozen=True)
class QuestionScore:
    question_id: str
    answered: int
    correct: int


@dataclass(frozen=True)
class QuizInfo:
    id: int
    channel_id: int
    status: str
    question_ids: list[str]
    posted: int
    seconds: int
    expected_players: int | None

    @property
    def total(self) -> int:
        return len(self.question_ids)


@dataclass(frozen=True)
class PostInfo:
    """What the answer path needs about a post; all of it is fixed at posting."""

    id: int
    channel_id: int
    target: Target
    quiz_id: int | None
    kind: str
    sequence: int | None
    question_id: str
    option_order: list[int]
    correct_slot: int
    seconds: int
    posted_at: datetime
    closes_at: datetime
    closed_at: datetime | None
    message_id: str | None
    # A live quiz may close a question early once this many members answered.
    expected_players: int | None = None
    # Delivery: tries that failed so far, and when to stop trying.
    publish_attempts: int = 0
    publish_by: datetime | None = None


@dataclass(frozen=True)
class NewAnswer:
    post: PostInfo
    user_id: str
    slot: int
    correct: bool
    points: int
    at: datetime


@dataclass(frozen=True)
class PostTally:
    counts: list[int]  # answers per slot
    total: int
    first_correct_user: str | None


@dataclass(frozen=True)
class RankRow:
    user_id: str
    points: int
    correct: int
    answered: int


@dataclass(frozen=True)
class QuizResult:
    rows: list[RankRow]
    participants: int
    answers: int
    correct: int


@dataclass(frozen=True)
class UserTotals:
    answered: int
    correct: int
    points: int
    per_question: list[tuple[str, int, int]]  # (question id, answered, correct)


def _post_info(post: Post, channel: Channel, expected_players: int | None = None) -> PostInfo:
    return PostInfo(
        id=post.id,
        channel_id=post.channel_id,
        target=Target(channel.platform, channel.community, channel.channel),
        quiz_id=post.quiz_id,
        kind=post.kind,
        sequence=post.sequence,
        question_id=post.question_id,
        option_order=list(post.option_order),
        correct_slot=post.correct_slot,
        seconds=post.seconds,
        posted_at=post.posted_at,
        closes_at=post.closes_at,
        closed_at=post.closed_at,
        message_id=post.message_id,
        expected_players=expected_players,
        publish_attempts=post.publish_attempts or 0,
        publish_by=post.publish_by,
    )


def _quiz_info(quiz: Quiz) -> QuizInfo:
    return QuizInfo(
        id=quiz.id,
        channel_id=quiz.channel_id,
        status=quiz.status,
        question_ids=list(quiz.question_ids),
        posted=quiz.posted,
        seconds=quiz.seconds,
        expected_players=quiz.expected_players,
    )


# A post still being delivered: no message yet, not closed, another try planned.
_UNPUBLISHED = and_(
    Post.message_id.is_(None), Post.closed_at.is_(None), Post.publish_retry_at.is_not(None)
)
_PUBLISHED_OR_GIVEN_UP = or_(Post.message_id.is_not(None), Post.publish_retry_at.is_(None))


def _reveal_free(claimed_before: datetime) -> Any:
    return or_(Post.reveal_claimed_at.is_(None), Post.reveal_claimed_at < claimed_before)


def _rowcount(result: Any) -> int:
    """Rows an UPDATE or DELETE touched (a CursorResult attribute)."""
    return int(result.rowcount)


def _rank_order(points: Any, correct: Any, last_correct: Any, user_id: Any) -> list[Any]:
    """Points, then more correct answers, then the earlier last correct answer, then user id."""
    return [points.desc(), correct.desc(), last_correct.asc().nulls_last(), user_id.asc()]


def _channel_info(row: Channel) -> ChannelInfo:
    return ChannelInfo(
        row.id,
        Target(row.platform, row.community, row.channel),
        row.timezone,
        row.moderator_role,
        row.mentions,
        row.delivery_problem,
        row.daily_window_hours,
        row.grace_minutes,
    )


def _schedule_info(row: Schedule, channel: Channel) -> ScheduleInfo:
    return ScheduleInfo(
        id=row.id,
        channel=_channel_info(channel),
        kind=row.kind,
        at_time=row.at_time,
        zone=row.zone,
        days=list(row.days),
        bank=row.bank,
        tag=row.tag,
        next_fire=row.next_fire,
    )


class Repository:
    def __init__(self, engine: AsyncEngine) -> None:
        self.engine = engine
        self._sessions: async_sessionmaker[AsyncSession] = session_factory(engine)
        self._dialect = engine.dialect.name

    def _insert(self, table: Any) -> Any:
        """An INSERT that supports ON CONFLICT on this backend."""
        module = postgresql if self._dialect == "postgresql" else sqlite
        return module.insert(table)

    # -- channels -------------------------------------------------------------

    async def channel(self, target: Target, now: datetime) -> ChannelInfo:
        """The channel's row, created on first use."""
        async with self._sessions.begin() as session:
            await session.execute(
                self._insert(Channel)
                .values(
                    platform=target.platform,
                    community=target.community,
                    channel=target.channel,
                    created_at=now,
                )
                .on_conflict_do_nothing(index_elements=["platform", "channel"])
            )
            row = (
                await session.execute(
                    select(Channel).where(
                        Channel.platform == target.platform, Channel.channel == target.channel
                    )
                )
            ).scalar_one()
            return _channel_info(row)

    async def channel_target(self, channel_id: int) -> Target:
        async with self._sessions() as session:
            row = await session.get_one(Channel, channel_id)
            return Target(row.platform, row.community, row.channel)

    async def set_channel_timezone(self, channel_id: int, zone: str) -> None:
        await self.update_channel(channel_id, timezone=zone)

    async def update_channel(
        self, channel_id: int, **values: str | bool | int | None
    ) -> ChannelInfo:
        """Change channel settings (any of the `channels` columns ChannelInfo shows)."""
        async with self._sessions.begin() as session:
            await session.execute(update(Channel).where(Channel.id == channel_id).values(**values))
            return _channel_info(await session.get_one(Channel, channel_id))

    # -- decks ----------------------------------------------------------------

    async def draw(
        self, channel_id: int, pool: Sequence[str], count: int, rng: random.Random
    ) -> list[str]:
        """Draw `count` questions from `pool` that the channel has not seen in this
        pass; when the pass runs out, start a new one. The deck is persisted; a
        question counts as seen once it is posted (`post_next`), so questions of
        a quiz stopped early that were never shown stay in the deck."""
        async with self._sessions.begin() as session:
            seen = set(
                (
                    await session.execute(
                        select(DeckSeen.question_id).where(DeckSeen.channel_id == channel_id)
                    )
                ).scalars()
            )
            pool_set = set(pool)
            unseen = [q for q in pool if q not in seen]
            rng.shuffle(unseen)
            drawn = unseen[:count]
            if len(drawn) < count:
                # The pass is over: forget this pool's questions and deal again,
                # without repeating one already drawn for this quiz.
                await session.execute(
                    delete(DeckSeen).where(
                        DeckSeen.channel_id == channel_id, DeckSeen.question_id.in_(pool_set)
                    )
                )
                rest = [q for q in pool if q not in drawn]
                rng.shuffle(rest)
                drawn += rest[: count - len(drawn)]
            return drawn

    # -- quizzes --------------------------------------------------------------

    async def create_quiz(
        self,
        channel_id: int,
        question_ids: list[str],
        *,
        seconds: int,
        bank: str | None,
        tag: str | None,
        started_by: str,
        expected_players: int | None,
        now: datetime,
    ) -> QuizInfo | None:
        """The new quiz, or None when the channel already runs one."""
        try:
            async with self._sessions.begin() as session:
                quiz = Quiz(
                    channel_id=channel_id,
                    status=RUNNING,
                    question_ids=question_ids,
                    posted=0,
                    seconds=seconds,
                    bank=bank,
                    tag=tag,
                    expected_players=expected_players,
                    started_by=started_by,
                    started_at=now,
                )
                session.add(quiz)
                await session.flush()
                return _quiz_info(quiz)
        except IntegrityError:
            return None

    async def quiz(self, quiz_id: int) -> QuizInfo | None:
        async with self._sessions() as session:
            quiz = await session.get(Quiz, quiz_id)
            return _quiz_info(quiz) if quiz else None

    async def running_quiz(self, channel_id: int) -> QuizInfo | None:
        async with self._sessions() as session:
            quiz = (
                await session.execute(
                    select(Quiz).where(Quiz.channel_id == channel_id, Quiz.status == RUNNING)
                )
            ).scalar_one_or_none()
            return _quiz_info(quiz) if quiz else None

    async def end_quiz(self, quiz_id: int, status: str, now: datetime) -> bool:
        """Move a running quiz to `status`; true for the one caller that did it."""
        async with self._sessions.begin() as session:
            result = await session.execute(
                update(Quiz)
                .where(Quiz.id == quiz_id, Quiz.status == RUNNING)
                .values(status=status, ended_at=now)
            )
            return bool(_rowcount(result))

    async def stalled_quizzes(self) -> list[int]:
        """Running quizzes with no open question: a restart (or a crash) came
        between closing one question and posting the next."""
        async with self._sessions() as session:
            open_post = exists().where(Post.quiz_id == Quiz.id, Post.closed_at.is_(None))
            rows = await session.execute(select(Quiz.id).where(Quiz.status == RUNNING, ~open_post))
            return list(rows.scalars())

    async def post_next(
        self,
        quiz_id: int,
        expected_posted: int,
        *,
        option_order: list[int],
        correct_slot: int,
        now: datetime,
        closes_at: datetime,
        publish_by: datetime,
        publish_lease: datetime,
    ) -> PostInfo | None:
        """Claim the quiz's next question and create its post in one transaction.

        Returns None if another caller already advanced the quiz, it is not
        running, or it has no questions left.
        """
        async with self._sessions.begin() as session:
            quiz = await session.get(Quiz, quiz_id)
            if quiz is None or quiz.status != RUNNING or quiz.posted != expected_posted:
                return None
            if quiz.posted >= len(quiz.question_ids):
                return None
            claimed = await session.execute(
                update(Quiz)
                .where(Quiz.id == quiz_id, Quiz.posted == expected_posted, Quiz.status == RUNNING)
                .values(posted=expected_posted + 1)
            )
            if not _rowcount(claimed):
                return None
            post = Post(
                channel_id=quiz.channel_id,
                quiz_id=quiz_id,
                kind="live",
                sequence=expected_posted + 1,
                question_id=quiz.question_ids[expected_posted],
                option_order=option_order,
                correct_slot=correct_slot,
                seconds=quiz.seconds,
                posted_at=now,
                closes_at=closes_at,
                publish_retry_at=publish_lease,
                publish_by=publish_by,
            )
            session.add(post)
            await session.execute(
                self._insert(DeckSeen)
                .values(channel_id=quiz.channel_id, question_id=post.question_id)
                .on_conflict_do_nothing()
            )
            await session.flush()
            channel = await session.get_one(Channel, quiz.channel_id)
            return _post_info(post, channel, quiz.expected_players)

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
                .order_by(*_rank_order(points, correct, last_correct, Answer.user_id))
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

    # -- posts ----------------------------------------------------------------

    async def post(self, post_id: int) -> PostInfo | None:
        async with self._sessions() as session:
            row = (
                await session.execute(
                    select(Post, Channel, Quiz.expected_players)
                    .join(Channel, Channel.id == Post.channel_id)
                    .outerjoin(Quiz, Quiz.id == Post.quiz_id)
                    .where(Post.id == post_id)
                )
            ).one_or_none()
            return _post_info(row[0], row[1], row[2]) if row else None

    async def set_message_id(self, post_id: int, message_id: str) -> None:
        async with self._sessions.begin() as session:
            await session.execute(
                update(Post).where(Post.id == post_id).values(message_id=message_id)
            )

    async def open_posts(self, quiz_id: int) -> list[int]:
        async with self._sessions() as session:
            rows = await session.execute(
                select(Post.id).where(Post.quiz_id == quiz_id, Post.closed_at.is_(None))
            )
            return list(rows.scalars())

    async def open_post_in_channel(self, channel_id: int) -> int | None:
        async with self._sessions() as session:
            rows = await session.execute(
                select(Post.id)
                .where(Post.channel_id == channel_id, Post.closed_at.is_(None), Post.kind == "live")
                .order_by(Post.id.desc())
                .limit(1)
            )
            return rows.scalar_one_or_none()

    async def next_deadline(self) -> datetime | None:
        async with self._sessions() as session:
            found = await session.execute(
                select(Post.closes_at)
                .where(Post.closed_at.is_(None), _PUBLISHED_OR_GIVEN_UP)
                .order_by(Post.closes_at)
                .limit(1)
            )
            return found.scalar_one_or_none()

    async def due_posts(self, now: datetime) -> list[tuple[int, int | None]]:
        """(post, quiz) of open posts past their deadline (a post still being
        delivered has no deadline yet)."""
        async with self._sessions() as session:
            rows = await session.execute(
                select(Post.id, Post.quiz_id)
                .where(Post.closed_at.is_(None), Post.closes_at <= now, _PUBLISHED_OR_GIVEN_UP)
                .order_by(Post.closes_at)
            )
            return [(post_id, quiz_id) for post_id, quiz_id in rows]

    # -- delivery of new posts ----------------------------------------------------

    async def next_publish_retry(self, platforms: Sequence[str]) -> datetime | None:
        async with self._sessions() as session:
            found = await session.execute(
                select(Post.publish_retry_at)
                .join(Channel, Channel.id == Post.channel_id)
                .where(_UNPUBLISHED, Channel.platform.in_(platforms))
                .order_by(Post.publish_retry_at)
                .limit(1)
            )
            return found.scalar_one_or_none()

    async def due_publishes(
        self, now: datetime, platforms: Sequence[str]
    ) -> list[tuple[int, int | None]]:
        """(post, quiz) of posts not yet delivered whose next try (or whose
        sender's lease) is due."""
        async with self._sessions() as session:
            rows = await session.execute(
                select(Post.id, Post.quiz_id)
                .join(Channel, Channel.id == Post.channel_id)
                .where(_UNPUBLISHED, Post.publish_retry_at <= now, Channel.platform.in_(platforms))
                .order_by(Post.publish_retry_at)
            )
            return [(post_id, quiz_id) for post_id, quiz_id in rows]

    async def claim_publish(self, post_id: int, now: datetime, lease: datetime) -> int | None:
        """Take a due post for one delivery try; its attempt count, or None if
        someone else holds it, it was delivered, or it was given up."""
        async with self._sessions.begin() as session:
            result = await session.execute(
                update(Post)
                .where(Post.id == post_id, _UNPUBLISHED, Post.publish_retry_at <= now)
                .values(publish_retry_at=lease)
                .returning(Post.publish_attempts)
            )
            attempts = result.scalar_one_or_none()
            return None if attempts is None else int(attempts)

    async def published(
        self, post_id: int, message_id: str, posted_at: datetime, closes_at: datetime
    ) -> None:
        """Record the delivered message; the post's clock starts now."""
        async with self._sessions.begin() as session:
            await session.execute(
                update(Post)
                .where(Post.id == post_id)
                .values(
                    message_id=message_id,
                    posted_at=posted_at,
                    closes_at=closes_at,
                    publish_retry_at=None,
                )
            )

    async def publish_failed(self, post_id: int, retry_at: datetime) -> None:
        async with self._sessions.begin() as session:
            await session.execute(
                update(Post)
                .where(Post.id == post_id, Post.message_id.is_(None))
                .values(
                    publish_attempts=Post.publish_attempts + 1,
                    publish_retry_at=retry_at,
                )
            )

    async def publish_given_up(self, post_id: int) -> None:
        """Stop trying to deliver the post (its owner then discards or closes it)."""
        async with self._sessions.begin() as session:
            await session.execute(
                update(Post).where(Post.id == post_id).values(publish_retry_at=None)
            )

    async def close_early(self, post_id: int, now: datetime) -> None:
        """Bring an open post's deadline forward to now."""
        async with self._sessions.begin() as session:
            await session.execute(
                update(Post)
                .where(Post.id == post_id, Post.closed_at.is_(None), Post.closes_at > now)
                .values(closes_at=now)
            )

    async def unrevealed_posts(self, closed_since: datetime, claimed_before: datetime) -> list[int]:
        """Posts closed since `closed_since` whose message does not show the answer
        yet, and that nobody is revealing (no claim, or one older than `claimed_before`)."""
        async with self._sessions() as session:
            rows = await session.execute(
                select(Post.id)
                .where(
                    Post.revealed_at.is_(None),
                    Post.closed_at >= closed_since,
                    Post.message_id.is_not(None),
                    _reveal_free(claimed_before),
                )
                .order_by(Post.closed_at)
            )
            return list(rows.scalars())

    async def claim_reveal(self, post_id: int, now: datetime, claimed_before: datetime) -> bool:
        """Become the one caller that edits the post's message to show the answer."""
        async with self._sessions.begin() as session:
            result = await session.execute(
                update(Post)
                .where(Post.id == post_id, Post.revealed_at.is_(None), _reveal_free(claimed_before))
                .values(reveal_claimed_at=now)
            )
            return bool(_rowcount(result))

    async def release_reveal(self, post_id: int) -> None:
        """The reveal failed for now: let the next timer tick try again."""
        async with self._sessions.begin() as session:
            await session.execute(
                update(Post)
                .where(Post.id == post_id, Post.revealed_at.is_(None))
                .values(reveal_claimed_at=None)
            )

    async def mark_revealed(self, post_id: int, now: datetime) -> None:
        async with self._sessions.begin() as session:
            await session.execute(
                update(Post)
                .where(Post.id == post_id, Post.revealed_at.is_(None))
                .values(revealed_at=now)
            )

    async def claim_close(self, post_id: int, now: datetime) -> bool:
        """Mark the post closed; true only for the one caller that closed it."""
        async with self._sessions.begin() as session:
            result = await session.execute(
                update(Post)
                .where(Post.id == post_id, Post.closed_at.is_(None))
                .values(closed_at=now)
            )
            return bool(_rowcount(result))

    async def tally(self, post: PostInfo) -> PostTally:
        async with self._sessions() as session:
            by_slot = await session.execute(
                select(Answer.slot, func.count(Answer.id))
                .where(Answer.post_id == post.id)
                .group_by(Answer.slot)
            )
            counts = [0] * len(post.option_order)
            for slot, count in by_slot:
                if 0 <= slot < len(counts):
                    counts[slot] = int(count)
            first = await session.execute(
                select(Answer.user_id)
                .where(Answer.post_id == post.id, Answer.correct.is_(True))
                .order_by(Answer.answered_at, Answer.id)
                .limit(1)
            )
            return PostTally(counts, sum(counts), first.scalar_one_or_none())

    # -- answers --------------------------------------------------------------

    async def record_answers(self, rows: Sequence[NewAnswer]) -> list[bool]:
        """Store answers in one short transaction; for each row, whether it counted.

        A row counts when its post is still open and it is the member's first
        answer to that post: the unique (post, user) constraint settles
        concurrent clicks, even from several bot processes, and the open check
        runs in the same transaction that writes.
        """
        counted = [False] * len(rows)
        firsts: dict[tuple[int, str], int] = {}
        for index, row in enumerate(rows):
            firsts.setdefault((row.post.id, row.user_id), index)  # a double click in one batch
        post_ids = sorted({row.post.id for row in rows})
        async with self._sessions.begin() as session:
            is_open = select(Post.id, Post.closes_at).where(
                Post.id.in_(post_ids), Post.closed_at.is_(None)
            )
            if self._dialect == "postgresql":
                # Hold the posts against a concurrent close until these answers
                # commit, so a reveal counts every answer that was accepted.
                is_open = is_open.with_for_update(read=True)
            found = await session.execute(is_open)
            deadlines = {post_id: closes_at for post_id, closes_at in found}
            values = [
                {
                    "post_id": row.post.id,
                    "channel_id": row.post.channel_id,
                    "user_id": row.user_id,
                    "slot": row.slot,
                    "correct": row.correct,
                    "points": row.points,
                    "answered_at": row.at,
                    "latency_ms": max(0, int((row.at - row.post.posted_at).total_seconds() * 1000)),
                }
                for index, row in enumerate(rows)
                if firsts[(row.post.id, row.user_id)] == index
                and row.post.id in deadlines
                and row.at < deadlines[row.post.id]
            ]
            if not values:
                return counted
            inserted = await session.execute(
                self._insert(Answer)
                .values(values)
                .on_conflict_do_nothing(index_elements=["post_id", "user_id"])
                .returning(Answer.post_id, Answer.user_id)
            )
            for post_id, user_id in inserted:
                counted[firsts[(post_id, user_id)]] = True
        return counted

    async def answer_slot(self, post_id: int, user_id: str) -> int | None:
        async with self._sessions() as session:
            found = await session.execute(
                select(Answer.slot).where(Answer.post_id == post_id, Answer.user_id == user_id)
            )
            return found.scalar_one_or_none()

    async def answer_count(self, post_id: int) -> int:
        async with self._sessions() as session:
            found = await session.execute(
                select(func.count(Answer.id)).where(Answer.post_id == post_id)
            )
            return int(found.scalar_one())

    # -- leaderboards and statistics -------------------------------------------

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
            .order_by(*_rank_order(points, correct, last_correct, Answer.user_id))
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

    async def forget_user(self, platform: str, user_id: str) -> int:
        """Delete every answer of the user on the platform; returns how many."""
        async with self._sessions.begin() as session:
            on_platform = select(Channel.id).where(Channel.platform == platform)
            result = await session.execute(
                delete(Answer).where(Answer.user_id == user_id, Answer.channel_id.in_(on_platform))
            )
            return _rowcount(result)

    # -- schedules --------------------------------------------------------------

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
        async with self._sessions() as session:
            rows = await session.execute(
                select(Schedule, Channel)
                .join(Channel, Channel.id == Schedule.channel_id)
                .where(Schedule.channel_id == channel_id)
                .order_by(Schedule.kind)
            )
            return [_schedule_info(schedule, channel) for schedule, channel in rows]

    async def delete_schedules(self, channel_id: int, kinds: Sequence[str]) -> int:
        async with self._sessions.begin() as session:
            result = await session.execute(
                delete(Schedule).where(Schedule.channel_id == channel_id, Schedule.kind.in_(kinds))
            )
            return _rowcount(result)

    def _schedulable(self, platforms: Sequence[str]) -> Any:
        """Schedules of channels on these platforms whose posts the platform accepts."""
        return (
            select(Schedule, Channel)
            .join(Channel, Channel.id == Schedule.channel_id)
            .where(Channel.platform.in_(platforms), Channel.delivery_problem.is_(None))
        )

    async def due_schedules(
        self, now: datetime, platforms: Sequence[str], limit: int = 1000
    ) -> list[ScheduleInfo]:
        """Schedules whose next fire time has come, earliest first."""
        async with self._sessions() as session:
            rows = await session.execute(
                self._schedulable(platforms)
                .where(Schedule.next_fire <= now)
                .order_by(Schedule.next_fire, Schedule.id)
                .limit(limit)
            )
            return [_schedule_info(schedule, channel) for schedule, channel in rows]

    async def next_schedule_fire(self, platforms: Sequence[str]) -> datetime | None:
        async with self._sessions() as session:
            found = await session.execute(
                self._schedulable(platforms)
                .with_only_columns(Schedule.next_fire)
                .order_by(Schedule.next_fire)
                .limit(1)
            )
            return found.scalar_one_or_none()

    async def claim_schedule(self, schedule_id: int, fired: datetime, next_fire: datetime) -> bool:
        """Move a due schedule on to its next fire time; true only for the one
        caller (of any process) that did, which is then the one that posts."""
        async with self._sessions.begin() as session:
            result = await session.execute(
                update(Schedule)
                .where(Schedule.id == schedule_id, Schedule.next_fire == fired)
                .values(next_fire=next_fire)
            )
            return bool(_rowcount(result))

    async def post_daily(
        self,
        channel_id: int,
        question_id: str,
        *,
        option_order: list[int],
        correct_slot: int,
        now: datetime,
        closes_at: datetime,
        publish_by: datetime,
        publish_lease: datetime,
        claim: tuple[int, datetime, datetime] | None = None,
    ) -> PostInfo | None:
        """Create a daily question's post and count the question as seen.

        With `claim` (schedule id, due fire time, next fire time), the schedule
        is moved on in the same transaction, so a crash can never leave a slot
        claimed without its post; None if another caller claimed it first."""
        async with self._sessions.begin() as session:
            if claim is not None:
                schedule_id, fired, following = claim
                claimed = await session.execute(
                    update(Schedule)
                    .where(Schedule.id == schedule_id, Schedule.next_fire == fired)
                    .values(next_fire=following)
                )
                if not _rowcount(claimed):
                    return None
            post = Post(
                channel_id=channel_id,
                kind="daily",
                question_id=question_id,
                option_order=option_order,
                correct_slot=correct_slot,
                seconds=int((closes_at - now).total_seconds()),
                posted_at=now,
                closes_at=closes_at,
                publish_retry_at=publish_lease,
                publish_by=publish_by,
            )
            session.add(post)
            await session.execute(
                self._insert(DeckSeen)
                .values(channel_id=channel_id, question_id=question_id)
                .on_conflict_do_nothing()
            )
            await session.flush()
            return _post_info(post, await session.get_one(Channel, channel_id))

    async def open_daily_posts(self, channel_id: int, before: int | None = None) -> list[int]:
        """The channel's open daily questions (older than post `before`, if given)."""
        query = select(Post.id).where(
            Post.channel_id == channel_id, Post.kind == "daily", Post.closed_at.is_(None)
        )
        if before is not None:
            query = query.where(Post.id < before)
        async with self._sessions() as session:
            return list((await session.execute(query)).scalars())

    async def discard_post(self, post_id: int) -> None:
        """Remove a post that never reached the channel, so it counts for nobody."""
        async with self._sessions.begin() as session:
            await session.execute(delete(Post).where(Post.id == post_id))


__all__ = [
    "ChannelInfo",
    "DailyHistory",
    "PostInfo",
    "PostTally",
    "QuestionScore",
    "QuizInfo",
    "QuizResult",
    "RankRow",
    "Repository",
    "ScheduleInfo",
    "UserTotals",
]
