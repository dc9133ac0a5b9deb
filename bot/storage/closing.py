"""The close of a question, in slices that each hold the writer briefly.

A 10,000-answer close used to add every answer to every read model in one
transaction: on SQLite it held the only write lock for over a second, and
every other channel's clicks waited behind it. Now:

1. `claim` (one short transaction) marks the post closed, ends the streaks of
   a daily question's non-answerers and, if the post has answers, files it in
   `closing_posts`. The reveal can go out from here.
2. `add_analysis` adds the post to its question's item analysis. The counts
   are read beforehand, outside the write lock (the answers of a closed post
   no longer change); the write is one upsert, done only by the caller that
   moves the post's step from 0 to 1.
3. `score_slice`, again and again: the next `SLICE` answerers in user order go
   into the score boards, per-question counts and the member page's days;
   the progress mark (`after_user`) moves in the same transaction. The last
   slice also counts the post's votes and removes the `closing_posts` row.

Each step checks and moves the mark in its own transaction (on PostgreSQL
under the row's lock), so a slice is added exactly once however many
processes finish the same post, and a crash between two slices leaves the
post for the next process, which goes on from the mark.

The analysis ranks a post's answerers by their community record *before* the
post, and the recount replays a community's posts in closing order. So a post
is analysed only once every post closed before it in its community is
finished (the finisher finishes those first): records then hold exactly the
posts before it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, and_, bindparam, delete, insert, literal, or_, select, update
from sqlalchemy.orm import Session

from bot.domain.rules import zone_or_utc
from bot.storage import item_analysis, post_votes, read_models
from bot.storage.answerer_slices import slice_end
from bot.storage.models import Answer, Channel, ClosingPost, DailyStreak, Post

# Answerers per slice. On SQLite a click in another channel waits for the
# slice in progress: on the idle 2-core development machine a slice holds the
# writer about 6 ms plus 20 us a member (250: 11-20 ms, 100: 7-14 ms), so 100
# keep that wait near 10 ms for a whole close about 0.8 s longer (10,000
# answers: 2.1 s). On PostgreSQL a slice locks only its own members' rows, so
# it can be bigger: fewer round trips (a 10,000-answer close took 20-30 s in
# slices of 250 on a busy machine).
SLICE = 250
SLICES = {"sqlite": 100, "postgresql": 4 * SLICE}

_CLOSING = ClosingPost.__table__.c


@dataclass(frozen=True, slots=True)
class Closing:
    """A closed post whose answers are not all in the read models yet."""

    post_id: int
    platform: str
    community: str
    closed_at: datetime
    step: int
    after_user: str


# The statements every close runs, built once (building one costs about as
# much CPU as running it).
_CLOSE = (
    update(Post)
    .where(Post.id == bindparam("post"), Post.closed_at.is_(None))
    .values(closed_at=bindparam("now"))
    .returning(Post.channel_id, Post.kind)
)
_CLOSE_AND_CLAIM_REVEAL = _CLOSE.values(reveal_claimed_at=bindparam("now"))
_FILE = insert(ClosingPost).from_select(
    ["post_id", "platform", "community", "closed_at", "step", "after_user"],
    select(
        bindparam("post", type_=_CLOSING.post_id.type),
        Channel.platform,
        Channel.community,
        bindparam("now", type_=_CLOSING.closed_at.type),
        literal(0, _CLOSING.step.type),
        literal("", _CLOSING.after_user.type),
    ).where(
        Channel.id == bindparam("channel"),
        select(Answer.id).where(Answer.post_id == bindparam("post")).exists(),
    ),
)
_NO_CARDS = (
    update(Post).where(Post.id == bindparam("post")).values(cards_applied_at=bindparam("now"))
)
_STATE = select(ClosingPost.__table__).where(_CLOSING.post_id == bindparam("post"))
_EARLIER = (
    select(ClosingPost.__table__)
    .where(
        _CLOSING.platform == bindparam("platform"),
        _CLOSING.community == bindparam("community"),
        or_(
            _CLOSING.closed_at < bindparam("closed_at"),
            and_(
                _CLOSING.closed_at == bindparam("closed_at"),
                _CLOSING.post_id < bindparam("post"),
            ),
        ),
    )
    .order_by(_CLOSING.closed_at, _CLOSING.post_id)
    .limit(1)
)
# The closing row, locked, with what the read models key the post's rows by.
_LOCKED = (
    select(
        _CLOSING.step,
        _CLOSING.after_user,
        Post.channel_id,
        _CLOSING.platform,
        _CLOSING.community,
        Post.question_id,
        Post.option_order,
        Channel.timezone,
        Post.posted_at,
        Post.closed_at,
    )
    .join(Post, Post.id == _CLOSING.post_id)
    .join(Channel, Channel.id == Post.channel_id)
    .where(_CLOSING.post_id == bindparam("post"))
    .with_for_update(of=ClosingPost.__table__)
)
_FINISHED = delete(ClosingPost).where(ClosingPost.post_id == bindparam("post"))
_MARK = (
    update(ClosingPost)
    .where(ClosingPost.post_id == bindparam("post"))
    .values(after_user=bindparam("upto"))
)


def claim(session: Session, post_id: int, now: datetime, *, reveal: bool = False) -> bool:
    """Mark the post closed; true only for the one caller that closed it.
    With `reveal`, that caller also holds the reveal (`reveal_claimed_at`)."""
    values = {"post": post_id, "now": now}
    connection = session.connection()  # Core: the ORM adds nothing here
    closed = connection.execute(_CLOSE_AND_CLAIM_REVEAL if reveal else _CLOSE, values).first()
    if closed is None:
        return False
    if closed.kind == "daily":
        # Here, not in a slice: the reveal shows the streak board.
        _end_streaks(session, post_id, closed.channel_id)
    # Filed for counting only if it has answers: one statement for the check,
    # the channel's community and the row.
    if not _rowcount(connection.execute(_FILE, {**values, "channel": closed.channel_id})):
        # Nothing to count, and no review card to move.
        connection.execute(_NO_CARDS, values)
    return True


def _end_streaks(session: Session, post_id: int, channel_id: int) -> None:
    """A daily question closed: everyone in the channel who did not answer it
    loses their current streak (those who answered were counted already)."""
    answered = select(Answer.user_id).where(Answer.post_id == post_id)
    session.execute(
        update(DailyStreak)
        .where(
            DailyStreak.channel_id == channel_id,
            DailyStreak.current > 0,
            DailyStreak.user_id.not_in(answered),
        )
        .values(current=0)
    )


def state(connection: Connection, post_id: int) -> Closing | None:
    found = connection.execute(_STATE, {"post": post_id}).first()
    return None if found is None else Closing(*found)


def earlier_in_community(connection: Connection, closing: Closing) -> Closing | None:
    """The first unfinished post closed before this one in its community."""
    values = {
        "platform": closing.platform,
        "community": closing.community,
        "closed_at": closing.closed_at,
        "post": closing.post_id,
    }
    found = connection.execute(_EARLIER, values).first()
    return None if found is None else Closing(*found)


def unfinished(connection: Connection, closed_before: datetime) -> list[int]:
    """Posts closed before `closed_before` whose close is not finished."""
    return list(
        connection.execute(
            select(_CLOSING.post_id)
            .where(_CLOSING.closed_at < closed_before)
            .order_by(_CLOSING.closed_at, _CLOSING.post_id)
        ).scalars()
    )


def post_analysis(connection: Connection, closing: Closing) -> item_analysis.PostAnalysis | None:
    """What the post adds to its question's analysis, counted by the
    database from the answers and their records (no lock)."""
    return item_analysis.count_post(
        connection, closing.post_id, closing.platform, closing.community
    )


def add_analysis(
    session: Session, closing: Closing, counts: item_analysis.PostAnalysis | None
) -> None:
    """Step 0 to 1: add the counts, unless another caller did already."""
    moved = session.execute(
        update(ClosingPost)
        .where(ClosingPost.post_id == closing.post_id, ClosingPost.step == 0)
        .values(step=1)
    )
    if _rowcount(moved) and counts is not None:
        item_analysis.add_post_analysis(session.connection(), counts)


def score_slice(session: Session, post_id: int) -> bool:
    """Add the next slice of answerers; true once the post is finished."""
    connection = session.connection()
    row = connection.execute(_LOCKED, {"post": post_id}).first()
    if row is None:
        return True
    if row.step != 1:
        return False  # the analysis goes first
    after: str = row.after_user
    upto = slice_end(connection, post_id, after, SLICES.get(connection.dialect.name, SLICE))
    post = read_models.ClosedPost(
        id=post_id,
        channel_id=row.channel_id,
        platform=row.platform,
        community=row.community,
        question_id=row.question_id,
        zone=zone_or_utc(row.timezone),
        posted_at=row.posted_at,
        closed_at=row.closed_at,
    )
    read_models.score_answers(connection, post, after, upto)
    if upto is None:
        post_votes.count_closed_post_votes(connection, post, row.option_order)
        connection.execute(_FINISHED, {"post": post_id})
        return True
    connection.execute(_MARK, {"post": post_id, "upto": upto})
    return False


def _rowcount(result: Any) -> int:
    return int(result.rowcount)
