"""The dashboard member page's read models: a member's closed answers in one
community per UTC day (`member_days`) and per question
(`community_member_questions`).

Kept by the transaction that closes a question, like the score boards, so the
member page reads a row per day and per question instead of adding up every
answer of a heavy member on each request. One grouped query over the answers
of closed questions defines each table: the backfill inserts what it returns,
and `quizmaster db check` compares it with what the closing path wrote.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any

from sqlalchemy import (
    Date,
    Integer,
    bindparam,
    cast,
    delete,
    func,
    insert,
    select,
    type_coerce,
)
from sqlalchemy.engine import Connection
from sqlalchemy.ext.asyncio import AsyncSession

from bot.storage.models import Answer, Channel, CommunityMemberQuestion, MemberDay, Post
from bot.storage.sql import insert_for, text_param

_ANSWERS = Answer.__table__.c
# Every table here, as (model, key columns, count columns).
_DAY_KEYS = ("platform", "user_id", "community", "day")
_DAY_COUNTS = ("points", "answered", "correct")
_QUESTION_KEYS = ("platform", "user_id", "community", "question_id")
_QUESTION_COUNTS = ("answered", "correct")
TABLES: tuple[tuple[Any, tuple[str, ...], tuple[str, ...]], ...] = (
    (MemberDay, _DAY_KEYS, _DAY_COUNTS),
    (CommunityMemberQuestion, _QUESTION_KEYS, _QUESTION_COUNTS),
)


def _utc_day(dialect: str) -> Any:
    """The UTC calendar day of an answer, computed by the database."""
    if dialect == "postgresql":
        day = func.date(func.timezone("UTC", _ANSWERS.answered_at))
    else:
        day = func.date(_ANSWERS.answered_at)  # SQLite keeps UTC text: its date part
    # Read back as a date on both backends (SQLite's date() gives text).
    return type_coerce(day, Date)


def _counts(names: tuple[str, ...]) -> list[Any]:
    sums = {
        "points": func.sum(_ANSWERS.points),
        "answered": func.count(),
        "correct": func.sum(cast(_ANSWERS.correct, Integer)),
    }
    return [sums[name] for name in names]


# -- kept at close ---------------------------------------------------------------------


def answers_in_slice(bounded: bool) -> list[Any]:
    """The closing post's answers by members after `:after` (and up to
    `:upto` when bounded): one slice of a close (bot/storage/closing.py)."""
    found = [_ANSWERS.post_id == bindparam("post_id"), _ANSWERS.user_id > bindparam("after")]
    if bounded:
        found.append(_ANSWERS.user_id <= bindparam("upto"))
    return found


@dataclass(frozen=True)
class _CloseStatements:
    days: Any
    questions: Any


def _upsert(
    dialect: str, model: Any, keys: tuple[str, ...], counts: tuple[str, ...], bounded: bool
) -> Any:
    """INSERT … SELECT of the closing post's answers grouped by member (and
    day), each group added to the member's existing row; rows in key order, so
    two closers on PostgreSQL lock them in one order."""
    group: dict[str, Any] = {
        "platform": text_param("platform", 16),
        "user_id": _ANSWERS.user_id,
        "community": text_param("community", 64),
        "day": _utc_day(dialect),
        "question_id": text_param("question_id", 64),
    }
    grouped = [group[key] for key in keys if key in ("user_id", "day")]
    answers = (
        select(*(group[key] for key in keys), *_counts(counts))
        .where(*answers_in_slice(bounded))
        .group_by(*grouped)
        .order_by(*grouped)
    )
    stmt = insert_for(dialect, model).from_select([*keys, *counts], answers)
    row = model.__table__.c
    return stmt.on_conflict_do_update(
        index_elements=list(keys),
        set_={name: row[name] + stmt.excluded[name] for name in counts},
    )


@cache
def _close_statements(dialect: str, bounded: bool) -> _CloseStatements:
    return _CloseStatements(
        days=_upsert(dialect, MemberDay, _DAY_KEYS, _DAY_COUNTS, bounded),
        questions=_upsert(
            dialect, CommunityMemberQuestion, _QUESTION_KEYS, _QUESTION_COUNTS, bounded
        ),
    )


def count_answers(
    connection: Connection,
    post_id: int,
    platform: str,
    community: str,
    question_id: str,
    after: str,
    upto: str | None,
) -> None:
    """Add one slice of a closed post's answerers (after `after`, up to `upto`
    or to the end) to their days and questions, in the caller's (closing)
    transaction: two statements, whatever the answers."""
    statements = _close_statements(connection.dialect.name, upto is not None)
    values = {
        "post_id": post_id,
        "platform": platform,
        "community": community,
        "question_id": question_id,
        "after": after,
        "upto": upto,
    }
    connection.execute(statements.days, values)
    connection.execute(statements.questions, values)


async def forget(session: AsyncSession, platform: str, user_id: str) -> None:
    for model, _, _ in TABLES:
        await session.execute(
            delete(model).where(model.platform == platform, model.user_id == user_id)
        )


# -- recounted from the answers ----------------------------------------------------------


def _recount(dialect: str, keys: tuple[str, ...], counts: tuple[str, ...]) -> Any:
    """Every row of one table as the answers to closed questions say."""
    group: dict[str, Any] = {
        "platform": Channel.platform,
        "user_id": _ANSWERS.user_id,
        "community": Channel.community,
        "day": _utc_day(dialect),
        "question_id": Post.question_id,
    }
    columns = [group[key] for key in keys]
    return (
        select(*columns, *_counts(counts))
        .select_from(Answer)
        .join(Post, Post.id == _ANSWERS.post_id)
        .join(Channel, Channel.id == _ANSWERS.channel_id)
        .where(Post.closed_at.is_not(None))
        .group_by(*columns)
    )


def backfill(connection: Connection) -> None:
    """Replace both tables with what the answers say (migration 0011,
    `quizmaster db rebuild`), each in one INSERT … SELECT."""
    dialect = connection.dialect.name
    for model, keys, counts in TABLES:
        connection.execute(delete(model))
        connection.execute(
            insert(model).from_select([*keys, *counts], _recount(dialect, keys, counts))
        )


def expected_and_stored(
    connection: Connection,
) -> list[
    tuple[str, dict[tuple[Any, ...], tuple[int, ...]], dict[tuple[Any, ...], tuple[int, ...]]]
]:
    """For each table: its name, the rows the answers say and the rows stored,
    keyed alike (for `quizmaster db check`)."""
    dialect = connection.dialect.name
    found = []
    for model, keys, counts in TABLES:
        width = len(keys)
        wanted = {
            tuple(row[:width]): tuple(int(n) for n in row[width:])
            for row in connection.execute(_recount(dialect, keys, counts))
        }
        table = model.__table__.c
        held = {
            tuple(row[:width]): tuple(int(n) for n in row[width:])
            for row in connection.execute(select(*(table[name] for name in (*keys, *counts))))
        }
        found.append((model.__tablename__, wanted, held))
    return found


# -- read by the member page -------------------------------------------------------------


def member_days(platform: str, community: str, user_id: str) -> Any:
    """(day, points) of each UTC day the member answered in the community, oldest first."""
    return (
        select(MemberDay.day, MemberDay.points)
        .where(
            MemberDay.platform == platform,
            MemberDay.user_id == user_id,
            MemberDay.community == community,
        )
        .order_by(MemberDay.day)
    )


def member_questions(platform: str, community: str, user_id: str) -> Any:
    """(question, answered, right) of each question the member answered in the community."""
    model = CommunityMemberQuestion
    return select(model.question_id, model.answered, model.correct).where(
        model.platform == platform, model.user_id == user_id, model.community == community
    )
