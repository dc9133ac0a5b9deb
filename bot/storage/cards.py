"""Review cards: each member's spaced-repetition card per question, the answers
taken into them, and `/quiz review` sessions.

The scheduling itself is a quiz rule: callers pass it in as `Reviewer` (a card
and a recall in, the next card out), and this store runs it inside the
transaction that writes its result, so a card is never updated from a stale read.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from functools import cache, partial
from typing import Any, Literal

from sqlalchemy import bindparam, delete, func, select, update
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import Session

from bot.chat import Target
from bot.domain.records import CardState, Recall, ReviewSessionInfo
from bot.storage.answerer_slices import slice_end
from bot.storage.base import Store, rowcount
from bot.storage.db_thread import write_in_one_hop
from bot.storage.models import (
    Answer,
    CardReview,
    Channel,
    Post,
    ReviewCard,
    ReviewSession,
)
from bot.storage.preemption import checkpoint
from bot.storage.sql import insert_for

Reviewer = Callable[[CardState | None, Recall], CardState]

_CARD_COLUMNS = (
    "due",
    "state",
    "step",
    "stability",
    "difficulty",
    "last_review",
    "reviews",
    "misses",
)


def _card(row: ReviewCard) -> CardState:
    return CardState(
        question_id=row.question_id,
        due=row.due,
        state=row.state,
        step=row.step,
        stability=row.stability,
        difficulty=row.difficulty,
        last_review=row.last_review,
        reviews=row.reviews,
        misses=row.misses,
    )


def _session(row: ReviewSession) -> ReviewSessionInfo:
    return ReviewSessionInfo(
        id=row.id,
        target=Target(row.platform, row.community, row.channel),
        user_id=row.user_id,
        step=row.step,
        remaining=row.remaining,
        question_id=row.question_id,
        option_order=list(row.option_order),
        correct_slot=row.correct_slot,
        shown_at=row.shown_at,
    )


# Rows per statement where a question's answers are read or marked in bulk,
# and members per slice of a post taken into the cards (each slice one short
# hold of SQLite's writer).
SLICE = 100
# SQLite: 40 members a slice hold its one writer about 7 ms (100: 11 ms).
# PostgreSQL: a slice's reviews are worked out on the event loop, about
# 35 us a card; 400 a slice stalled every channel's clicks 13 ms at a time.
SLICES = {"sqlite": 40, "postgresql": SLICE}


class CardStore(Store):
    # -- answers into cards ------------------------------------------------------------

    async def pending_posts(self, closed_before: datetime, limit: int = 100) -> list[int]:
        """Closed posts whose answers are not in the cards yet (oldest first)."""
        rows = await self._read_rows(
            select(Post.id)
            .where(Post.cards_applied_at.is_(None), Post.closed_at.is_not(None))
            .where(Post.closed_at < closed_before)
            .order_by(Post.closed_at)
            .limit(limit)
        )
        return [post_id for (post_id,) in rows]

    async def apply_post(self, post_id: int, now: datetime, reviewer: Reviewer) -> bool:
        """Take a closed post's answers into its members' cards, once, a slice
        of members at a time (each one hand-off to SQLite's write thread, so
        a 10,000-answer post never holds the writer long). An answer is taken
        in with its `card_reviews` row, so a slice done twice (a crash, or two
        processes) counts once; the marker on the post goes with the last
        slice. False if the post is open, gone, or already applied."""
        after: str | None = ""
        first = True
        while after is not None:
            done = await write_in_one_hop(
                self._sessions,
                partial(_apply_slice, post_id=post_id, after=after, now=now, reviewer=reviewer),
                preemptible=True,
            )
            if done is False:
                return not first
            first = False
            after = done
        return True

    async def apply_open_answers(self, platform: str, user_id: str, reviewer: Reviewer) -> int:
        """Take the member's answers to questions still open (a daily question
        that stays up for a day) into their cards now, so today's misses can be
        reviewed today; the close then skips them. How many were taken."""
        open_posts = (
            select(Post.id)
            .join(Channel, Channel.id == Post.channel_id)
            .where(Post.closed_at.is_(None), Channel.platform == platform)
        )
        which = _to_review((Answer.user_id == user_id) & Answer.post_id.in_(open_posts))
        return await write_in_one_hop(
            self._sessions, lambda session: _apply_answers(session, which, {}, reviewer)
        )

    async def _review(
        self,
        session: AsyncSession,
        platform: str,
        user_id: str,
        recall: Recall,
        reviewer: Reviewer,
    ) -> CardState:
        key = (ReviewCard.platform == platform, ReviewCard.user_id == user_id)
        found = await session.execute(
            select(ReviewCard)
            .where(*key, ReviewCard.question_id == recall.question_id)
            .with_for_update()
        )
        row = found.scalar_one_or_none()
        card = reviewer(_card(row) if row is not None else None, recall)
        values = {name: getattr(card, name) for name in _CARD_COLUMNS}
        statement = (
            self._insert(ReviewCard)
            .values(platform=platform, user_id=user_id, question_id=recall.question_id, **values)
            .on_conflict_do_update(
                index_elements=["platform", "user_id", "question_id"], set_=values
            )
        )
        await session.execute(statement)
        return card

    # -- reading cards ---------------------------------------------------------------

    async def due_cards(
        self, platform: str, user_id: str, now: datetime, limit: int
    ) -> list[CardState]:
        """The member's due cards, most overdue first."""
        async with self._reads() as session:
            rows = await session.execute(
                select(ReviewCard)
                .where(ReviewCard.platform == platform, ReviewCard.user_id == user_id)
                .where(ReviewCard.due <= now)
                .order_by(ReviewCard.due, ReviewCard.question_id)
                .limit(limit)
            )
            return [_card(row) for row in rows.scalars()]

    async def due_count(self, platform: str, user_id: str, now: datetime) -> int:
        # A Core read: `/quiz stats` and every daily click's reply ask for it.
        [(count,)] = await self._read_rows(
            select(func.count())
            .select_from(ReviewCard)
            .where(ReviewCard.platform == platform, ReviewCard.user_id == user_id)
            .where(ReviewCard.due <= now)
        )
        return int(count)

    async def next_due(self, platform: str, user_id: str) -> datetime | None:
        async with self._reads() as session:
            found = await session.execute(
                select(func.min(ReviewCard.due)).where(
                    ReviewCard.platform == platform, ReviewCard.user_id == user_id
                )
            )
            return found.scalar_one_or_none()

    async def cards(self, platform: str, user_id: str, *, missed_only: bool) -> list[CardState]:
        """Every card of the member (or those answered wrong at least once)."""
        query = select(ReviewCard).where(
            ReviewCard.platform == platform, ReviewCard.user_id == user_id
        )
        if missed_only:
            query = query.where(ReviewCard.misses > 0)
        async with self._reads() as session:
            rows = await session.execute(query.order_by(ReviewCard.question_id))
            return [_card(row) for row in rows.scalars()]

    async def forget(self, platform: str, user_id: str) -> int:
        """Delete the member's cards and review sessions; how many cards."""
        async with self._sessions.begin() as session:
            return await forget_cards(session, platform, user_id)

    # -- review sessions -----------------------------------------------------------------

    async def start_session(
        self,
        target: Target,
        user_id: str,
        remaining: int,
        question_id: str,
        option_order: Sequence[int],
        correct_slot: int,
        now: datetime,
    ) -> int:
        """A new review run for the member; it replaces their earlier one (whose
        buttons then say the review has ended), so each member keeps one row."""
        async with self._sessions.begin() as session:
            await session.execute(
                delete(ReviewSession).where(
                    ReviewSession.platform == target.platform, ReviewSession.user_id == user_id
                )
            )
            made = await session.execute(
                self._insert(ReviewSession)
                .values(
                    platform=target.platform,
                    community=target.community,
                    channel=target.channel,
                    user_id=user_id,
                    step=0,
                    remaining=remaining,
                    question_id=question_id,
                    option_order=list(option_order),
                    correct_slot=correct_slot,
                    shown_at=now,
                )
                .returning(ReviewSession.id)
            )
            return int(made.scalar_one())

    async def session(self, session_id: int) -> ReviewSessionInfo | None:
        async with self._reads() as session:
            row = await session.get(ReviewSession, session_id)
            return _session(row) if row is not None else None

    async def answer_card(
        self, review: ReviewSessionInfo, recall: Recall, reviewer: Reviewer
    ) -> CardState | None:
        """Rate the card on screen, once: the step moves on in the same
        transaction as the card's update. None if this step was answered already."""
        async with self._sessions.begin() as session:
            moved = await session.execute(
                update(ReviewSession)
                .where(ReviewSession.id == review.id, ReviewSession.step == review.step)
                .values(
                    step=review.step + 1,
                    remaining=ReviewSession.remaining - 1,
                    last_question_id=ReviewSession.question_id,
                )
            )
            if not rowcount(moved):
                return None
            return await self._review(
                session, review.target.platform, review.user_id, recall, reviewer
            )

    async def show_next(
        self,
        session_id: int,
        question_id: str | None,
        option_order: Sequence[int],
        correct_slot: int,
        now: datetime,
    ) -> None:
        """Put the next card on screen (None: the session is over)."""
        async with self._sessions.begin() as session:
            await session.execute(
                update(ReviewSession)
                .where(ReviewSession.id == session_id)
                .values(
                    question_id=question_id,
                    option_order=list(option_order),
                    correct_slot=correct_slot,
                    shown_at=now,
                )
            )


async def forget_cards(session: AsyncSession, platform: str, user_id: str) -> int:
    """In `session`: the member's review cards and sessions; how many cards."""
    await session.execute(
        delete(ReviewSession).where(
            ReviewSession.platform == platform, ReviewSession.user_id == user_id
        )
    )
    result = await session.execute(
        delete(ReviewCard).where(ReviewCard.platform == platform, ReviewCard.user_id == user_id)
    )
    return rowcount(result)


def _to_review(which: Any) -> Any:
    """The answers chosen by `which` not yet taken into their cards, with what
    a review needs, in the order they were given."""
    return (
        select(
            Answer.id,
            Answer.user_id,
            Answer.correct,
            Answer.latency_ms,
            Answer.answered_at,
            Post.question_id,
            Post.seconds,
            Channel.platform,
        )
        .join(Post, Post.id == Answer.post_id)
        .join(Channel, Channel.id == Answer.channel_id)
        .outerjoin(CardReview, CardReview.answer_id == Answer.id)
        .where(which, CardReview.answer_id.is_(None))
        .order_by(Answer.answered_at, Answer.id)
    )


# A closed post's slices, built once (every close runs them).
_WAITING = select(Post.id).where(
    Post.id == bindparam("post"), Post.cards_applied_at.is_(None), Post.closed_at.is_not(None)
)
_IN_SLICE = (Answer.post_id == bindparam("post")) & (Answer.user_id > bindparam("after"))
_SLICE_UPTO = _to_review(_IN_SLICE & (Answer.user_id <= bindparam("upto")))
_SLICE_REST = _to_review(_IN_SLICE)
_APPLIED = (
    update(Post)
    .where(Post.id == bindparam("post"), Post.cards_applied_at.is_(None))
    .values(cards_applied_at=bindparam("now"))
)


@cache
def _take_answers(dialect: str) -> Any:
    """Marks answers taken into their cards; returns those this call marked."""
    return (
        insert_for(dialect, CardReview)
        .on_conflict_do_nothing(index_elements=["answer_id"])
        .returning(CardReview.answer_id)
    )


@cache
def _write_cards(dialect: str) -> Any:
    upsert = insert_for(dialect, ReviewCard)
    return upsert.on_conflict_do_update(
        index_elements=["platform", "user_id", "question_id"],
        set_={name: upsert.excluded[name] for name in _CARD_COLUMNS},
    )


_CARDS = (
    select(ReviewCard)
    .where(
        ReviewCard.platform == bindparam("platform"),
        ReviewCard.question_id == bindparam("question"),
        ReviewCard.user_id.in_(bindparam("users", expanding=True)),
    )
    .order_by(ReviewCard.user_id)
    .with_for_update()
)


def _apply_slice(
    session: Session, *, post_id: int, after: str, now: datetime, reviewer: Reviewer
) -> str | Literal[False] | None:
    """One slice of `apply_post`: the answers of members after `after`; the
    last member taken (None once the post is done), or False if the post is
    not waiting for its cards."""
    connection = session.connection()
    if connection.execute(_WAITING, {"post": post_id}).first() is None:
        return False
    values: dict[str, Any] = {"post": post_id, "after": after}
    upto = slice_end(connection, post_id, after, SLICES.get(connection.dialect.name, SLICE))
    if upto is None:
        _apply_answers(session, _SLICE_REST, values, reviewer)
        connection.execute(_APPLIED, {"post": post_id, "now": now})
    else:
        _apply_answers(session, _SLICE_UPTO, {**values, "upto": upto}, reviewer)
    return upto


def _apply_answers(
    session: Session, chosen: Any, values: dict[str, Any], reviewer: Reviewer
) -> int:
    """Take the answers the `chosen` query (see `_to_review`) finds into their cards."""
    rows = session.connection().execute(chosen, values).all()
    if not rows:
        return 0
    # The marker rows decide: an answer another transaction took meanwhile
    # is not returned here, so it never counts twice. One statement, cached,
    # run over the rows (a VALUES list of them was compiled afresh each time).
    dialect = session.get_bind().dialect.name
    taken = session.connection().execute(
        _take_answers(dialect), [{"answer_id": row.id} for row in rows]
    )
    fresh = set(taken.scalars())
    recalls: list[tuple[str, str, Recall]] = [
        (
            row.platform,
            row.user_id,
            Recall(
                question_id=row.question_id,
                correct=row.correct,
                seconds_taken=row.latency_ms / 1000,
                time_limit=float(row.seconds),
                at=row.answered_at,
            ),
        )
        for row in rows
        if row.id in fresh
    ]
    # Card key order, so concurrent writers on PostgreSQL lock rows in one
    # order; a card's own answers stay in the order they were given.
    recalls.sort(key=lambda item: (item[0], item[1], item[2].question_id, item[2].at))
    # Read every card these answers touch, review them in memory, write
    # them back in one executemany: a statement or two per card held
    # SQLite's writer for 30 s after a 10,000-answer question.
    cards = _cards_of(session, {(p, u, r.question_id) for p, u, r in recalls})
    for platform, user_id, recall in recalls:
        checkpoint()  # scheduling is Python that SQLite's progress handler cannot stop
        key = (platform, user_id, recall.question_id)
        cards[key] = reviewer(cards.get(key), recall)
    if cards:
        connection = session.connection()
        connection.execute(
            _write_cards(dialect),
            [
                {
                    "platform": platform,
                    "user_id": user_id,
                    "question_id": question_id,
                    **{name: getattr(card, name) for name in _CARD_COLUMNS},
                }
                for (platform, user_id, question_id), card in sorted(cards.items())
            ],
        )
    return len(recalls)


def _cards_of(
    session: Session, keys: set[tuple[str, str, str]]
) -> dict[tuple[str, str, str], CardState]:
    """The existing cards among (platform, user, question) keys, locked for
    this transaction on PostgreSQL, read a slice of members at a time."""
    by_question: dict[tuple[str, str], list[str]] = {}
    for platform, user_id, question_id in sorted(keys):
        by_question.setdefault((platform, question_id), []).append(user_id)
    found: dict[tuple[str, str, str], CardState] = {}
    for (platform, question_id), users in by_question.items():
        for start in range(0, len(users), SLICE):
            chosen = {
                "platform": platform,
                "question": question_id,
                "users": users[start : start + SLICE],
            }
            rows = session.execute(_CARDS, chosen)
            for row in rows.scalars():
                found[(platform, row.user_id, question_id)] = _card(row)
    return found
