"""What every store shares: the session factories, the backend's INSERT, and the
conversions from rows to the plain records the quiz logic sees.

Each store method is one short transaction and returns plain data, so no
session outlives a call (SQLite keeps one write connection).

Two factories: `_sessions` for transactions that write (always with
`.begin()`, on SQLite under the write lock from their first statement), and
`_reads` for read-only ones, which on SQLite run on read-only connections and
see the last committed state without waiting for a write in progress. A
read whose answer decides a write belongs in the writing transaction."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import Row, and_, or_
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from bot.chat import Target
from bot.domain.records import ChannelInfo, PostInfo, QuizInfo, ScheduleInfo
from bot.storage.db_thread import read_in_one_hop, write_in_one_hop
from bot.storage.models import Channel, Post, Quiz, Schedule
from bot.storage.sql import insert_for

RUNNING = "running"

# A post still being delivered: no message yet, not closed, another try planned.
UNPUBLISHED = and_(
    Post.message_id.is_(None), Post.closed_at.is_(None), Post.publish_retry_at.is_not(None)
)
PUBLISHED_OR_GIVEN_UP = or_(Post.message_id.is_not(None), Post.publish_retry_at.is_(None))


class Store:
    """Base of the per-area stores: all of them share the same two session factories."""

    def __init__(
        self,
        sessions: async_sessionmaker[AsyncSession],
        reads: async_sessionmaker[AsyncSession],
        dialect: str,
    ) -> None:
        self._sessions = sessions
        self._reads = reads
        self._engine: AsyncEngine = sessions.kw["bind"]
        self._reader: AsyncEngine = reads.kw["bind"]
        self._dialect = dialect

    async def _read_rows(self, query: Any, values: dict[str, Any] | None = None) -> Sequence[Any]:
        """The rows of one read-only query, on a Core connection of the read
        engine: for the reads every leaderboard makes, the ORM session's
        bookkeeping cost more than the query. On SQLite the whole read is one
        hand-off to the connection's thread (each hand-off is a thread wake-up
        and a turn of the event loop; a read made eight)."""
        return await read_in_one_hop(
            self._reader, lambda connection: connection.execute(query, values).all()
        )

    async def _write_one(self, statement: Any, values: dict[str, Any] | None = None) -> None:
        """One write statement, as a transaction of its own. On PostgreSQL it
        runs on an autocommit connection: a single statement is atomic by
        itself, and a BEGIN and a COMMIT around it are two more round trips
        (every close and every post makes such writes). On SQLite it is one
        hand-off to the write thread."""
        if self._dialect == "sqlite":
            await write_in_one_hop(
                self._sessions, lambda session: session.connection().execute(statement, values)
            )
            return
        async with self._engine.connect() as connection:
            autocommit = await connection.execution_options(isolation_level="AUTOCOMMIT")
            await autocommit.execute(statement, values)

    def _insert(self, table: Any) -> Any:
        """An INSERT that supports ON CONFLICT on this backend."""
        return insert_for(self._dialect, table)


def rowcount(result: Any) -> int:
    """Rows an UPDATE or DELETE touched (a CursorResult attribute)."""
    return int(result.rowcount)


def channel_info(row: Channel) -> ChannelInfo:
    return ChannelInfo(
        row.id,
        Target(row.platform, row.community, row.channel),
        row.timezone,
        row.moderator_role,
        row.mentions,
        row.delivery_problem,
        row.daily_window_hours,
        row.grace_minutes,
        row.mode,
        row.reading_time,
        row.daily_pick,
    )


def post_info(
    post: Post | Row[Any],
    channel: Channel | Row[Any],
    expected_players: int | None = None,
    teams: int | None = None,
    quiz_total: int | None = None,
) -> PostInfo:
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
        teams=teams,
        quiz_total=quiz_total,
        study=channel.mode == "study",
        publish_attempts=post.publish_attempts or 0,
        publish_by=post.publish_by,
        zone=channel.timezone,
        review_share=post.review_share,
        review_of=post.review_of,
    )


def quiz_info(quiz: Quiz | Row[Any]) -> QuizInfo:
    """From the ORM object or a row of the `quizzes` table."""
    return QuizInfo(
        id=quiz.id,
        channel_id=quiz.channel_id,
        status=quiz.status,
        question_ids=list(quiz.question_ids),
        posted=quiz.posted,
        seconds=quiz.seconds,
        expected_players=quiz.expected_players,
        teams=quiz.teams,
    )


def schedule_info(row: Schedule, channel: Channel) -> ScheduleInfo:
    return ScheduleInfo(
        id=row.id,
        channel=channel_info(channel),
        kind=row.kind,
        at_time=row.at_time,
        zone=row.zone,
        days=list(row.days),
        bank=row.bank,
        tag=row.tag,
        next_fire=row.next_fire,
    )
