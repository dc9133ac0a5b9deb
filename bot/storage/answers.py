"""Answers to posts: storing them (in one place, `record_answers`, which also
keeps the read models), the per-post reads the answer path and reveals need,
and forgetting a member."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from datetime import datetime
from functools import cache, cached_property
from typing import Any

from sqlalchemy import (
    Connection,
    Dialect,
    Integer,
    bindparam,
    cast,
    column,
    delete,
    func,
    literal_column,
    select,
    table,
)
from sqlalchemy.dialects import sqlite
from sqlalchemy.ext.asyncio import AsyncSession

from bot.domain.records import MemberPoints, NewAnswer, PostInfo, PostTally, TopPoints
from bot.domain.rules import zone_or_utc
from bot.storage import autocommit, item_analysis, post_votes, read_models
from bot.storage.base import Store, rowcount
from bot.storage.db_thread import on_pooled_connection, read_in_one_hop
from bot.storage.models import (
    Answer,
    Channel,
    DailyStreak,
    HintTaken,
    Post,
    Quiz,
    QuizTeamMember,
    ReviewCard,
)
from bot.storage.prepared import PreparedRead, PreparedRows

# Answer transactions in flight at once on PostgreSQL: enough to overlap one
# batch's commit with the next one's inserts, well under the pool's 10.
CONCURRENT_WRITES = 4


def _streak_and_due() -> PreparedRead:
    user = bindparam("user_id", type_=DailyStreak.user_id.type)
    streak = select(DailyStreak.current).where(
        DailyStreak.channel_id == bindparam("channel_id", type_=DailyStreak.channel_id.type),
        DailyStreak.user_id == user,
    )
    due = (
        select(func.count())
        .select_from(ReviewCard)
        .where(
            ReviewCard.platform == bindparam("platform", type_=ReviewCard.platform.type),
            ReviewCard.user_id == user,
            ReviewCard.due <= bindparam("now", type_=ReviewCard.due.type),
        )
    )
    return PreparedRead(
        select(streak.scalar_subquery(), due.scalar_subquery()),
        ["channel_id", "platform", "user_id", "now"],
    )


_STREAK_AND_DUE = _streak_and_due()


class AnswerStore(Store):
    _insert_answers: PreparedRows | None = None

    @property
    def concurrent_writes(self) -> int:
        """How many answer transactions may run at once: SQLite takes one
        writer at a time, PostgreSQL overlaps them (rows locked in key order)."""
        return 1 if self._dialect == "sqlite" else CONCURRENT_WRITES

    async def record_answers(self, rows: Sequence[NewAnswer]) -> list[bool]:
        """Store answers in one short transaction; for each row, whether it counted.

        A row counts when its post is still open and it is the member's first
        answer to that post: the unique (post, user) constraint settles
        concurrent clicks, even from several bot processes, and the open check
        runs in the same transaction that writes.
        """
        batch = _Batch(rows)
        if self._dialect == "sqlite":
            dialect = self._engine.dialect
            return await on_pooled_connection(
                self._engine, lambda db: self._store_in_one_hop(db, dialect, batch)
            )
        if not batch.any_daily:
            return await self._store_in_one_statement(batch, _INSERT_WHERE_OPEN)
        if batch.one_streak_step_each:
            return await self._store_in_one_statement(batch, _INSERT_WHERE_OPEN_WITH_STREAKS)
        # A Core connection, not an ORM session: this runs for every batch of
        # clicks, and the session's own bookkeeping cost more than its SQL.
        async with self._engine.begin() as connection:
            found = await connection.execute(self._open_posts, {"ids": batch.post_ids})
            values = batch.accepted({post_id: closes_at for post_id, closes_at in found})
            if values:
                batch.inserted(await self._new_answers(connection.dialect).run(connection, values))
                await read_models.add_streaks(connection, batch.daily())
        return batch.counted

    async def _store_in_one_statement(self, batch: _Batch, sql: str) -> list[bool]:
        """PostgreSQL: the open check, the insert and any streaks as one
        statement in its own transaction, one round trip instead of five
        (BEGIN, the check, the insert, the streaks, COMMIT). The posts are
        share-locked in it as in the transaction, so a close waits for these
        answers and counts them."""
        rows = batch.candidates()
        columns = [[row[name] for row in rows] for name in _ANSWER_COLUMNS]
        found = await autocommit.fetch(self._engine, sql, batch.post_ids, *columns)
        batch.inserted(found)
        return batch.counted

    def _store_in_one_hop(
        self, db: sqlite3.Connection, dialect: Dialect, batch: _Batch
    ) -> list[bool]:
        """The same transaction, run whole in aiosqlite's worker thread: a
        dozen hand-offs between threads (cursor, execute, fetch, close per
        statement, and the commit) were most of a small batch's cost."""
        db.execute("BEGIN IMMEDIATE")
        try:
            found = db.execute(_open_posts_sqlite(len(batch.post_ids)), batch.post_ids)
            closes = _closes_at(dialect)
            values = batch.accepted({post_id: closes(raw) for post_id, raw in found})
            if values:
                inserted: list[tuple[Any, ...]] = []
                for sql, parameters in self._new_answers(dialect).chunks(values):
                    inserted += db.execute(sql, parameters).fetchall()
                batch.inserted(inserted)
                for sql, streak_rows in read_models.streak_updates(dialect, batch.daily()):
                    db.executemany(sql, streak_rows)
            db.execute("COMMIT")
        except BaseException:
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise
        return batch.counted

    @cached_property
    def _open_posts(self) -> Any:
        """Which of the posts (`ids`) are open, and until when; built once."""
        is_open = select(Post.id, Post.closes_at).where(
            Post.id.in_(bindparam("ids", expanding=True)), Post.closed_at.is_(None)
        )
        if self._dialect == "postgresql":
            # Hold the posts against a concurrent close until these answers
            # commit, so a reveal counts every answer that was accepted.
            is_open = is_open.with_for_update(read=True)
        return is_open

    def _new_answers(self, dialect: Dialect) -> PreparedRows:
        """The batch INSERT, compiled once per chunk size; a second click by the
        same member is skipped by the database and missing from what it returns."""
        if self._insert_answers is None:
            table = Answer.__table__

            def statement(rows: list[dict[str, Any]]) -> Any:
                return (
                    self._insert(table)
                    .values(rows)
                    .on_conflict_do_nothing(index_elements=["post_id", "user_id"])
                    .returning(table.c.post_id, table.c.user_id)
                )

            self._insert_answers = PreparedRows(statement, dialect, table)
        return self._insert_answers

    async def streak_and_due(
        self, channel_id: int, platform: str, user_id: str, now: datetime
    ) -> tuple[int, int]:
        """The member's current daily streak in the channel and how many of
        their review cards are due: what the reply to a daily answer says, in
        one read."""
        [(streak, due)] = await _STREAK_AND_DUE.rows(
            self._reader,
            {"channel_id": channel_id, "platform": platform, "user_id": user_id, "now": now},
        )
        return int(streak or 0), int(due)

    async def answer_slot(self, post_id: int, user_id: str) -> int | None:
        async with self._reads() as session:
            found = await session.execute(
                select(Answer.slot).where(Answer.post_id == post_id, Answer.user_id == user_id)
            )
            return found.scalar_one_or_none()

    async def answer_count(self, post_id: int) -> int:
        async with self._reads() as session:
            found = await session.execute(
                select(func.count(Answer.id)).where(Answer.post_id == post_id)
            )
            return int(found.scalar_one())

    async def take_hint(self, post_id: int, user_id: str, at: datetime) -> None:
        """Remember that the member read the post's hint (once; a second look is free)."""
        async with self._sessions.begin() as session:
            await session.execute(
                self._insert(HintTaken)
                .values(post_id=post_id, user_id=user_id, taken_at=at)
                .on_conflict_do_nothing()
            )

    async def hint_taken(self, post_id: int, user_id: str) -> bool:
        async with self._reads() as session:
            found = await session.execute(
                select(HintTaken.post_id).where(
                    HintTaken.post_id == post_id, HintTaken.user_id == user_id
                )
            )
            return found.first() is not None

    async def points(self, post_id: int, shown: int) -> TopPoints:
        """The `shown` members who earned most on the post, highest first (then
        quickest), and how many earned any, for the reveal. The database
        picks the few and counts the rest: every scorer of a 10,000-answer
        post (about 7,500) was fetched and wrapped, on the event loop, to
        show ten."""
        values = {"post": post_id, "shown": shown}

        def read(connection: Connection) -> TopPoints:
            top = connection.execute(_TOP_POINTS, values).all()
            scorers = connection.execute(_SCORERS, values).scalar_one()
            members = (MemberPoints(user, int(won), bool(hinted)) for user, won, hinted in top)
            return TopPoints(tuple(members), int(scorers))

        return await read_in_one_hop(self._reader, read)

    async def tally(self, post: PostInfo) -> PostTally:
        values = {"post": post.id}

        def read(connection: Connection) -> tuple[Sequence[Any], str | None]:
            by_slot = connection.execute(_VOTES_BY_SLOT, values).all()
            return by_slot, connection.execute(_FIRST_CORRECT, values).scalar()

        # One hand-off to a read connection (every reveal makes this read).
        slots, first_correct = await read_in_one_hop(self._reader, read)
        counts = [0] * len(post.option_order)
        for slot, count in slots:
            if 0 <= slot < len(counts):
                counts[slot] = int(count)
        return PostTally(counts, sum(counts), first_correct)

    async def forget_user(self, platform: str, user_id: str) -> int:
        """Delete every answer of the user on the platform; returns how many."""
        async with self._sessions.begin() as session:
            return await forget_answers(session, platform, user_id)


async def forget_answers(session: AsyncSession, platform: str, user_id: str) -> int:
    """In `session`: the member's answers on the platform, the hints they took
    and their team places, their rows in the read models, the recounted votes
    of the posts they answered and the analysis of their communities."""
    on_platform = select(Channel.id).where(Channel.platform == platform)
    answered = await session.execute(
        select(Answer.post_id).where(Answer.user_id == user_id, Answer.channel_id.in_(on_platform))
    )
    post_ids = list(answered.scalars())
    communities = (
        await session.execute(
            select(Channel.platform, Channel.community)
            .distinct()
            .join(Answer, Answer.channel_id == Channel.id)
            .where(Answer.user_id == user_id, Channel.platform == platform)
        )
    ).all()
    result = await session.execute(
        delete(Answer).where(Answer.user_id == user_id, Answer.channel_id.in_(on_platform))
    )
    # What they looked at and which team they played for go with the answers.
    platform_posts = select(Post.id).where(Post.channel_id.in_(on_platform))
    await session.execute(
        delete(HintTaken).where(HintTaken.user_id == user_id, HintTaken.post_id.in_(platform_posts))
    )
    platform_quizzes = select(Quiz.id).where(Quiz.channel_id.in_(on_platform))
    await session.execute(
        delete(QuizTeamMember).where(
            QuizTeamMember.user_id == user_id,
            QuizTeamMember.quiz_id.in_(platform_quizzes),
        )
    )
    await read_models.forget(session, platform, user_id)
    await post_votes.count_post_votes(session, post_ids)
    # Their answers leave the analysis, and others move between groups.
    pairs = [(p, c) for p, c in communities]
    await session.run_sync(lambda sync: item_analysis.recount_communities(sync.connection(), pairs))
    return rowcount(result)


class _Batch:
    """What one answer transaction decides, apart from the SQL that asks."""

    def __init__(self, rows: Sequence[NewAnswer]) -> None:
        self.rows = rows
        self.counted = [False] * len(rows)
        self.firsts: dict[tuple[int, str], int] = {}
        for index, row in enumerate(rows):
            self.firsts.setdefault((row.post.id, row.user_id), index)  # a double click
        self.post_ids = sorted({row.post.id for row in rows})

    @property
    def any_daily(self) -> bool:
        return any(row.post.kind == "daily" for row in self.rows)

    @property
    def one_streak_step_each(self) -> bool:
        """No member has two first answers to daily questions of one channel
        here (two open dailies), so each streak moves at most once."""
        keys = [
            (row.post.channel_id, row.user_id)
            for index, row in enumerate(self.rows)
            if row.post.kind == "daily" and self.firsts[(row.post.id, row.user_id)] == index
        ]
        return len(keys) == len(set(keys))

    def candidates(self) -> list[dict[str, Any]]:
        """Each member's first click on each post, in key order, whether the
        post is open or not (for a statement that checks that itself)."""
        return self.accepted(None)

    def accepted(self, deadlines: dict[int, datetime] | None) -> list[dict[str, Any]]:
        """The rows to insert: each member's first click on a post that is open
        (in `deadlines`, the open posts' closing times; None: not checked here)
        and before it closes, in key order, so concurrent writers on
        PostgreSQL lock in one order."""
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
                "hinted": row.hinted,
            }
            for index, row in enumerate(self.rows)
            if self.firsts[(row.post.id, row.user_id)] == index
            and (
                deadlines is None or (row.post.id in deadlines and row.at < deadlines[row.post.id])
            )
        ]
        values.sort(key=lambda value: (value["post_id"], value["user_id"]))
        return values

    def inserted(self, keys: Sequence[Sequence[Any]]) -> None:
        """The (post, user) pairs the database stored: those rows counted."""
        for post_id, user_id in keys:
            self.counted[self.firsts[(post_id, user_id)]] = True

    def daily(self) -> list[read_models.ScoredAnswer]:
        """Stored answers to daily questions: their streaks move now, for the
        reply to the click (scores count when the question closes)."""
        return [
            _scored(row)
            for row, ok in zip(self.rows, self.counted, strict=True)
            if ok and row.post.kind == "daily"
        ]


# The reveal's reads, built once (every close makes them).
_VOTES_BY_SLOT = (
    select(Answer.slot, func.count(Answer.id))
    .where(Answer.post_id == bindparam("post"))
    .group_by(Answer.slot)
)
_FIRST_CORRECT = (
    select(Answer.user_id)
    .where(Answer.post_id == bindparam("post"), Answer.correct.is_(True))
    .order_by(Answer.answered_at, Answer.id)
    .limit(1)
)
_TOP_POINTS = (
    select(Answer.user_id, Answer.points, Answer.hinted)
    .where(Answer.post_id == bindparam("post"), Answer.points > 0)
    .order_by(Answer.points.desc(), Answer.answered_at, Answer.id)
    .limit(bindparam("shown"))
)
_SCORERS = select(func.count(Answer.id)).where(
    Answer.post_id == bindparam("post"), Answer.points > 0
)

_ANSWER_COLUMNS = (
    "post_id",
    "channel_id",
    "user_id",
    "slot",
    "correct",
    "points",
    "answered_at",
    "latency_ms",
    "hinted",
)

# PostgreSQL's one-statement answer batch: the rows come as one array per
# column ($2…$10), so the SQL is the same for every batch size and asyncpg
# prepares it once per connection. Rows whose post is closed, or that came
# after its closing time, join nothing; a second answer of a member is skipped
# by the unique (post, user) constraint. RETURNING names what was stored.
_OPEN_POSTS = """open AS (
    SELECT id, closes_at, kind FROM posts
    WHERE id = ANY($1::integer[]) AND closed_at IS NULL
    ORDER BY id
    FOR SHARE
)"""
_STORE_ANSWERS = """INSERT INTO answers (
    post_id, channel_id, user_id, slot, correct, points, answered_at, latency_ms, hinted
)
SELECT new.post_id, new.channel_id, new.user_id, new.slot, new.correct, new.points,
       new.answered_at, new.latency_ms, new.hinted
FROM unnest(
    $2::integer[], $3::integer[], $4::varchar[], $5::integer[], $6::boolean[],
    $7::integer[], $8::timestamptz[], $9::integer[], $10::boolean[]
) AS new(post_id, channel_id, user_id, slot, correct, points, answered_at, latency_ms, hinted)
JOIN open ON open.id = new.post_id AND new.answered_at < open.closes_at
ORDER BY new.post_id, new.user_id
ON CONFLICT (post_id, user_id) DO NOTHING"""
_INSERT_WHERE_OPEN = f"""
WITH {_OPEN_POSTS}
{_STORE_ANSWERS}
RETURNING post_id, user_id
"""


def _insert_where_open_with_streaks() -> str:
    """With daily answers: their streaks move in the same statement (a
    data-changing WITH runs whether or not the final SELECT reads it), by the
    rule of read_models' streak upsert. One member's two daily answers in a
    channel would update one streak row twice, which one statement cannot:
    such a batch takes the transaction instead."""
    stored = table(
        "stored", column("post_id"), column("channel_id"), column("user_id"), column("correct")
    )
    opened = table("open", column("id"), column("kind"))
    right = cast(stored.c.correct, Integer)
    daily_answers = (
        select(stored.c.channel_id, stored.c.user_id, right, right)
        .select_from(stored.join(opened, opened.c.id == stored.c.post_id))
        .where(opened.c.kind == literal_column("'daily'"))
        .order_by(stored.c.channel_id, stored.c.user_id)
    )
    return f"""
WITH {_OPEN_POSTS},
stored AS (
{_STORE_ANSWERS}
RETURNING post_id, channel_id, user_id, correct
),
streaks AS (
{read_models.streak_step_sql(daily_answers)}
)
SELECT post_id, user_id FROM stored
"""


_INSERT_WHERE_OPEN_WITH_STREAKS = _insert_where_open_with_streaks()


@cache
def _open_posts_sqlite(count: int) -> str:
    """Which of `count` posts are open, and until when (the one-hop path's SQL)."""
    ids: list[Any] = [bindparam(f"id_{index}") for index in range(count)]
    statement = select(Post.id, Post.closes_at).where(Post.id.in_(ids), Post.closed_at.is_(None))
    return str(statement.compile(dialect=sqlite.dialect()))


@cache
def _closes_at(dialect: Dialect) -> Callable[[Any], Any]:
    """The closes_at column's conversion of what the driver returns."""
    process = Post.__table__.c.closes_at.type.dialect_impl(dialect).result_processor(dialect, None)
    assert process is not None
    return process


def _scored(row: NewAnswer) -> read_models.ScoredAnswer:
    post = row.post
    return read_models.ScoredAnswer(
        channel_id=post.channel_id,
        platform=post.target.platform,
        community=post.target.community,
        zone=zone_or_utc(post.zone),
        daily=post.kind == "daily",
        question_id=post.question_id,
        user_id=row.user_id,
        correct=row.correct,
        points=row.points,
        at=row.at,
    )
