"""Live quizzes, and the per-channel deck their questions are drawn from."""

from __future__ import annotations

import random
from collections.abc import Sequence
from datetime import datetime
from functools import cache
from typing import Any

from sqlalchemy import bindparam, delete, exists, insert, or_, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from bot.domain.records import ChannelInfo, PostInfo, QuizInfo
from bot.storage.base import RUNNING, Store, quiz_info, rowcount
from bot.storage.db_thread import write_in_one_hop
from bot.storage.models import DeckSeen, Post, Quiz
from bot.storage.process import PROCESS
from bot.storage.sql import insert_for


class QuizStore(Store):
    async def draw(
        self, channel_id: int, pool: Sequence[str], count: int, rng: random.Random
    ) -> list[str]:
        """Draw `count` questions from `pool` for the channel (see `draw_in`)."""
        return await write_in_one_hop(
            self._sessions, lambda session: draw_in(session, channel_id, pool, count, rng)
        )

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
        teams: int | None = None,
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
                    teams=teams,
                    started_by=started_by,
                    started_at=now,
                )
                session.add(quiz)
                await session.flush()
                return quiz_info(quiz)
        except IntegrityError:
            return None

    async def quiz(self, quiz_id: int) -> QuizInfo | None:
        rows = await self._read_rows(_QUIZ, {"quiz": quiz_id})
        return quiz_info(rows[0]) if rows else None

    async def running_quiz(self, channel_id: int) -> QuizInfo | None:
        async with self._reads() as session:
            quiz = (
                await session.execute(
                    select(Quiz).where(Quiz.channel_id == channel_id, Quiz.status == RUNNING)
                )
            ).scalar_one_or_none()
            return quiz_info(quiz) if quiz else None

    async def end_quiz(self, quiz_id: int, status: str, now: datetime) -> bool:
        """Move a running quiz to `status`; true for the one caller that did it."""
        async with self._sessions.begin() as session:
            result = await session.execute(
                update(Quiz)
                .where(Quiz.id == quiz_id, Quiz.status == RUNNING)
                .values(status=status, ended_at=now)
            )
            return bool(rowcount(result))

    async def stalled_quizzes(self, others_closed_before: datetime) -> list[int]:
        """Running quizzes with no open question: a restart (or a crash) came
        between closing one question and posting the next. A question another
        process closed at or after `others_closed_before` is still that one's
        to follow up (it posts the next one unless it died)."""
        async with self._reads() as session:
            open_post = exists().where(Post.quiz_id == Quiz.id, Post.closed_at.is_(None))
            followed_up_elsewhere = exists().where(
                Post.quiz_id == Quiz.id,
                Post.closed_at >= others_closed_before,
                or_(Post.owner.is_(None), Post.owner != PROCESS),
            )
            rows = await session.execute(
                select(Quiz.id).where(Quiz.status == RUNNING, ~open_post, ~followed_up_elsewhere)
            )
            return list(rows.scalars())

    async def post_next(
        self,
        quiz: QuizInfo,
        channel: ChannelInfo,
        *,
        option_order: list[int],
        correct_slot: int,
        now: datetime,
        closes_at: datetime,
        publish_by: datetime,
        publish_lease: datetime,
        seconds: int | None = None,
    ) -> PostInfo | None:
        """Claim the quiz's next question (the one after `quiz.posted`) and
        create its post in one transaction.

        Returns None if another caller already advanced the quiz, it is not
        running any more, or it has no questions left. `quiz` and `channel`
        are as the caller read them: what a post takes from them (questions,
        time, channel settings) does not change while the quiz runs; the claim
        itself is checked against the stored quiz.
        """
        expected = quiz.posted
        if expected >= quiz.total:
            return None
        question_id = quiz.question_ids[expected]
        seconds = quiz.seconds if seconds is None else seconds
        values = {
            "channel_id": quiz.channel_id,
            "quiz_id": quiz.id,
            "kind": "live",
            "sequence": expected + 1,
            "question_id": question_id,
            "option_order": option_order,
            "correct_slot": correct_slot,
            "seconds": seconds,
            "posted_at": now,
            "closes_at": closes_at,
            "publish_retry_at": publish_lease,
            "publish_by": publish_by,
            "owner": PROCESS,
        }
        claim = {"quiz": quiz.id, "expected": expected, "next": expected + 1}
        seen = {"channel_id": quiz.channel_id, "question_id": question_id}

        def write(session: Session) -> int | None:
            connection = session.connection()  # Core: no ORM bookkeeping
            if not rowcount(connection.execute(_CLAIM_NEXT, claim)):
                return None
            post_id: int = connection.execute(_NEW_POST, values).scalar_one()
            connection.execute(_seen(self._dialect), seen)
            return post_id

        post_id = await write_in_one_hop(self._sessions, write)
        if post_id is None:
            return None
        return PostInfo(
            id=post_id,
            channel_id=quiz.channel_id,
            target=channel.target,
            quiz_id=quiz.id,
            kind="live",
            sequence=expected + 1,
            question_id=question_id,
            option_order=list(option_order),
            correct_slot=correct_slot,
            seconds=seconds,
            posted_at=now,
            closes_at=closes_at,
            closed_at=None,
            message_id=None,
            expected_players=quiz.expected_players,
            teams=quiz.teams,
            quiz_total=quiz.total,
            study=channel.study,
            publish_by=publish_by,
            zone=channel.timezone,
        )


# The statements of every next question, built once.
_QUIZ = select(Quiz.__table__).where(Quiz.__table__.c.id == bindparam("quiz"))
_CLAIM_NEXT = (
    update(Quiz)
    .where(
        Quiz.id == bindparam("quiz"),
        Quiz.posted == bindparam("expected"),
        Quiz.status == RUNNING,
    )
    .values(posted=bindparam("next"))
)
_NEW_POST = insert(Post).returning(Post.id)


@cache
def _seen(dialect: str) -> Any:
    """Marks a question seen in a channel (its deck), once."""
    return insert_for(dialect, DeckSeen).on_conflict_do_nothing()


def draw_in(
    session: Session, channel_id: int, pool: Sequence[str], count: int, rng: random.Random
) -> list[str]:
    """Draw `count` questions from `pool` that the channel has not seen in this
    pass; when the pass runs out, start a new one. The deck is persisted; a
    question counts as seen once it is posted (`post_next`, `post_daily`), so
    questions of a quiz stopped early that were never shown stay in the deck.
    Runs in the caller's transaction (synchronous, so a daily post can draw,
    claim its slot and be created in one hand-off to SQLite's thread)."""
    seen = set(
        session.execute(
            select(DeckSeen.question_id).where(DeckSeen.channel_id == channel_id)
        ).scalars()
    )
    pool_set = set(pool)
    unseen = [q for q in pool if q not in seen]
    rng.shuffle(unseen)
    drawn = unseen[:count]
    if len(drawn) < count:
        # The pass is over: forget this pool's questions and deal again,
        # without repeating one already drawn for this quiz.
        session.execute(
            delete(DeckSeen).where(
                DeckSeen.channel_id == channel_id, DeckSeen.question_id.in_(pool_set)
            )
        )
        rest = [q for q in pool if q not in drawn]
        rng.shuffle(rest)
        drawn += rest[: count - len(drawn)]
    return drawn
