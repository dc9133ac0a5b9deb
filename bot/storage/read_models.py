"""Read models kept by the write path: score totals, per-question counts and streaks.

Every function here runs inside the caller's transaction, so a stored answer
and its totals, or a closed daily question and the streaks it breaks, commit
together or not at all. Rows are written in key order: two processes updating
the same members on PostgreSQL then lock rows in the same order and cannot
deadlock.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from functools import cache, lru_cache
from typing import Any
from zoneinfo import ZoneInfo

from sqlalchemy import (
    Dialect,
    Integer,
    bindparam,
    case,
    cast,
    delete,
    literal_column,
    null,
    select,
)
from sqlalchemy.dialects import postgresql
from sqlalchemy.engine import Connection
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession

from bot.domain.rules import Period, period_key
from bot.storage import member_activity
from bot.storage.models import (
    Answer,
    Channel,
    ChannelScore,
    CommunityScore,
    DailyStreak,
    MemberQuestion,
)
from bot.storage.prepared import Prepared
from bot.storage.sql import insert_for, text_param

# Every read-model table (the recount replaces them all).
SCORE_TABLES = (ChannelScore, CommunityScore, MemberQuestion, DailyStreak)


@dataclass(frozen=True, slots=True)
class ScoredAnswer:
    """A stored answer with what its read models are keyed by."""

    channel_id: int
    platform: str
    community: str
    zone: ZoneInfo
    daily: bool
    question_id: str
    user_id: str
    correct: bool
    points: int
    at: datetime


@dataclass
class Tally:
    """Points, right answers, answers and the latest right answer of some answers."""

    points: int = 0
    correct: int = 0
    answered: int = 0
    last_correct_at: datetime | None = None

    def add(self, correct: bool, points: int, at: datetime) -> None:
        self.points += points
        self.answered += 1
        if correct:
            self.correct += 1
            if self.last_correct_at is None or at > self.last_correct_at:
                self.last_correct_at = at

    def plus(self, other: Tally) -> Tally:
        latest = [at for at in (self.last_correct_at, other.last_correct_at) if at is not None]
        return Tally(
            self.points + other.points,
            self.correct + other.correct,
            self.answered + other.answered,
            max(latest, default=None),
        )


@dataclass(frozen=True)
class Step:
    """Answers of one member on one board that fall in one week and one month."""

    week: str
    month: str
    tally: Tally


@dataclass
class ScoreRow:
    """One member's row on one board, as the `channel_scores` and
    `community_scores` tables hold it. `add` is the rule the upsert applies."""

    total: Tally
    week: str
    week_tally: Tally
    month: str
    month_tally: Tally
    prev_week: str | None = None
    prev_week_tally: Tally = field(default_factory=Tally)

    @classmethod
    def first(cls, step: Step) -> ScoreRow:
        return cls(step.tally, step.week, step.tally, step.month, step.tally)

    def add(self, step: Step) -> None:
        """Answers arrive in the order their questions close, not the order
        they were given in, so the rule does not depend on order: the row keeps
        the latest week with answers, the latest week before it, and the latest
        month."""
        self.total = self.total.plus(step.tally)
        if step.week == self.week:
            self.week_tally = self.week_tally.plus(step.tally)
        elif step.week > self.week:
            self.prev_week, self.prev_week_tally = self.week, self.week_tally
            self.week, self.week_tally = step.week, step.tally
        elif step.week == self.prev_week:
            self.prev_week_tally = self.prev_week_tally.plus(step.tally)
        elif self.prev_week is None or step.week > self.prev_week:
            self.prev_week, self.prev_week_tally = step.week, step.tally
        if step.month == self.month:
            self.month_tally = self.month_tally.plus(step.tally)
        elif step.month > self.month:
            self.month, self.month_tally = step.month, step.tally


ChannelKey = tuple[int, str]  # channel id, user
CommunityKey = tuple[str, str, str]  # platform, community, user
QuestionKey = tuple[str, str, str]  # platform, user, question


@dataclass
class ScoreSteps:
    """What some answers, in time order, do to each score row: for each row the
    steps in order (usually one; two when the answers straddle a week or month)."""

    channels: dict[ChannelKey, list[Step]]
    communities: dict[CommunityKey, list[Step]]
    questions: dict[QuestionKey, Tally]

    @classmethod
    def of(cls, answers: Iterable[ScoredAnswer]) -> ScoreSteps:
        steps = cls({}, {}, {})
        for answer in answers:
            at = answer.at
            quarter = at.replace(minute=at.minute - at.minute % 15, second=0, microsecond=0)
            week, month = _week_and_month(answer.zone, quarter)
            _step(steps.channels, (answer.channel_id, answer.user_id), week, month, answer)
            wide = (answer.platform, answer.community, answer.user_id)
            _step(steps.communities, wide, week, month, answer)
            mine = (answer.platform, answer.user_id, answer.question_id)
            steps.questions.setdefault(mine, Tally()).add(answer.correct, answer.points, answer.at)
        return steps


@lru_cache(maxsize=1 << 16)
def _week_and_month(zone: ZoneInfo, quarter: datetime) -> tuple[str, str]:
    """Cached per zone and quarter hour: every zone's offset is a whole number
    of quarter hours, so local weeks and months begin on one, and a burst of
    answers (or a recount of 90 days) shares few of them."""
    return period_key(Period.WEEK, quarter, zone), period_key(Period.MONTH, quarter, zone)


def _step(
    rows: dict[Any, list[Step]], key: Any, week: str, month: str, answer: ScoredAnswer
) -> None:
    steps = rows.get(key)
    if steps is None:
        rows[key] = steps = []
    elif steps[-1].week == week and steps[-1].month == month:
        steps[-1].tally.add(answer.correct, answer.points, answer.at)
        return
    last = answer.at if answer.correct else None
    steps.append(Step(week, month, Tally(answer.points, int(answer.correct), 1, last)))


def fold(steps: dict[Any, list[Step]]) -> dict[Any, ScoreRow]:
    """The rows these steps make from nothing (the recount's way)."""
    rows: dict[Any, ScoreRow] = {}
    for key, row_steps in steps.items():
        row = ScoreRow.first(row_steps[0])
        for step in row_steps[1:]:
            row.add(step)
        rows[key] = row
    return rows


# -- keeping them -------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ClosedPost:
    """A post that just closed, with what its answers' read-model rows are keyed by."""

    id: int
    channel_id: int
    platform: str
    community: str
    question_id: str
    zone: ZoneInfo
    posted_at: datetime
    closed_at: datetime


def score_answers(connection: Connection, post: ClosedPost, after: str, upto: str | None) -> None:
    """Count one slice of a closed post's answers (its answerers after `after`
    up to `upto`, or all the rest when None) on every score board, in the
    members' per-question counts and in the member page's days, in the
    caller's transaction (bot/storage/closing.py).

    Answers count when their question closes, not when they are clicked: the
    click path then stores the answer alone, and nobody can read from their
    points or stats whether an open question's answer was right. Each member
    has one answer per post, so each board gets one step per member, added by
    the database from the answers table in one statement per board (and per
    week or month the answers fall in, in the channel's zone)."""
    statements = _close_statements(connection.dialect.name, upto is not None)
    for start, end, week, month in period_segments(post.zone, post.posted_at, post.closed_at):
        values = {
            "post_id": post.id,
            "platform": post.platform,
            "community": post.community,
            "question_id": post.question_id,
            "week": week,
            "month": month,
            "start": start,
            "end": end,
            "after": after,
            "upto": upto,
        }
        connection.execute(statements.channel_scores, values)
        connection.execute(statements.community_scores, values)
        connection.execute(statements.member_questions, values)
    member_activity.count_answers(
        connection, post.id, post.platform, post.community, post.question_id, after, upto
    )


# Bounds of the first and last segment: no answer is older or newer.
_EARLIEST = datetime(1970, 1, 1, tzinfo=UTC)
_LATEST = datetime(9999, 1, 1, tzinfo=UTC)
_QUARTER = timedelta(minutes=15)


def period_segments(
    zone: ZoneInfo, start: datetime, end: datetime
) -> list[tuple[datetime, datetime, str, str]]:
    """The stretches of [start, end] that fall in one week and one month in
    `zone`, as (from, until, week, month); the first reaches back and the last
    forward without limit. Weeks and months begin on a local quarter hour."""
    quarter = start.replace(minute=start.minute - start.minute % 15, second=0, microsecond=0)
    week, month = _week_and_month(zone, quarter)
    segments: list[tuple[datetime, datetime, str, str]] = []
    since = _EARLIEST
    quarter += _QUARTER
    while quarter <= end:
        keys = _week_and_month(zone, quarter)
        if keys != (week, month):
            segments.append((since, quarter, week, month))
            since, (week, month) = quarter, keys
        quarter += _QUARTER
    segments.append((since, _LATEST, week, month))
    return segments


async def add_streaks(connection: AsyncConnection, answers: Sequence[ScoredAnswer]) -> None:
    """Move the daily streaks of newly stored answers to daily questions, in
    the caller's (storing) transaction: the private reply to the click shows
    the new streak at once."""
    for sql, rows in streak_updates(connection.dialect, answers):
        await connection.exec_driver_sql(sql, rows)


def streak_updates(
    dialect: Dialect, answers: Sequence[ScoredAnswer]
) -> list[tuple[str, list[tuple[Any, ...]]]]:
    """The upserts (SQL and rows, for an executemany each) that move these
    answers' streaks, in order."""
    daily: dict[tuple[int, str], list[Step]] = {}
    # A member's streak moves one daily question at a time, in answer order;
    # two answers by one member in one batch (two open dailies) take two rounds.
    for answer in sorted(answers, key=lambda a: a.at):
        if answer.daily:
            mark = Tally(answered=1, correct=int(answer.correct))
            daily.setdefault((answer.channel_id, answer.user_id), []).append(Step("", "", mark))
    if not daily:
        return []
    streaks = _streak_statement(dialect)
    return [
        (
            streaks.sql,
            [
                streaks.row(
                    {
                        "channel_id": channel_id,
                        "user_id": user_id,
                        "current": step.tally.correct,
                        "best": step.tally.correct,
                    }
                )
                for (channel_id, user_id), step in round_rows
            ],
        )
        for round_rows in _rounds(daily)
    ]


def _rounds(rows: dict[Any, list[Step]]) -> list[list[tuple[Any, Step]]]:
    """Round i holds each row's i-th step, in key order (so concurrent writers
    lock rows in the same order)."""
    rounds: list[list[tuple[Any, Step]]] = []
    for key in sorted(rows):
        for index, step in enumerate(rows[key]):
            if index == len(rounds):
                rounds.append([])
            rounds[index].append((key, step))
    for round_rows in rounds:
        round_rows.sort(key=lambda entry: entry[0])
    return rounds


async def forget(session: AsyncSession, platform: str, user_id: str) -> None:
    """Remove a member's rows on one platform from every read model."""
    on_platform = select(Channel.id).where(Channel.platform == platform)
    await session.execute(
        delete(ChannelScore).where(
            ChannelScore.user_id == user_id, ChannelScore.channel_id.in_(on_platform)
        )
    )
    await session.execute(
        delete(CommunityScore).where(
            CommunityScore.user_id == user_id, CommunityScore.platform == platform
        )
    )
    await session.execute(
        delete(MemberQuestion).where(
            MemberQuestion.user_id == user_id, MemberQuestion.platform == platform
        )
    )
    await session.execute(
        delete(DailyStreak).where(
            DailyStreak.user_id == user_id, DailyStreak.channel_id.in_(on_platform)
        )
    )
    await member_activity.forget(session, platform, user_id)


def score_row(row: ScoreRow, **key: Any) -> dict[str, Any]:
    """The table columns of a score row."""
    values = {**key, "week": row.week, "month": row.month, "prev_week": row.prev_week}
    for prefix, tally in (
        ("", row.total),
        ("week_", row.week_tally),
        ("month_", row.month_tally),
        ("prev_week_", row.prev_week_tally),
    ):
        values[f"{prefix}points"] = tally.points
        values[f"{prefix}correct"] = tally.correct
        values[f"{prefix}answered"] = tally.answered
        values[f"{prefix}last_correct_at"] = tally.last_correct_at
    return values


@dataclass(frozen=True)
class _CloseStatements:
    channel_scores: Any
    community_scores: Any
    member_questions: Any


@cache
def _close_statements(dialect: str, bounded: bool) -> _CloseStatements:
    """The closing upserts, built once per backend: for a slice of answerers
    with an upper bound, or for the last slice."""
    return _CloseStatements(
        channel_scores=_scores_from_answers(
            dialect, ChannelScore, ["channel_id", "user_id"], [_ANSWERS.channel_id], bounded
        ),
        community_scores=_scores_from_answers(
            dialect,
            CommunityScore,
            ["platform", "community", "user_id"],
            [text_param("platform", 16), text_param("community", 64)],
            bounded,
        ),
        member_questions=_counts_from_answers(dialect, bounded),
    )


_ANSWERS = Answer.__table__.c
_STREAKS: dict[str, Prepared] = {}


def _streak_statement(dialect: Dialect) -> Prepared:
    if dialect.name not in _STREAKS:
        columns = [c.name for c in DailyStreak.__table__.c]
        _STREAKS[dialect.name] = Prepared(_step_streak(dialect.name), dialect, columns)
    return _STREAKS[dialect.name]


def _post_answers(bounded: bool, *columns: Any) -> Any:
    """One slice of the closing post's answers in one week-and-month segment,
    in key order (so concurrent writers on PostgreSQL lock rows in one order)."""
    answered_at = Answer.__table__.c.answered_at
    return (
        select(*columns)
        .where(
            *member_activity.answers_in_slice(bounded),
            answered_at >= bindparam("start", type_=answered_at.type),
            answered_at < bindparam("end", type_=answered_at.type),
        )
        .order_by(_ANSWERS.user_id)
    )


def _scores_from_answers(
    dialect: str, model: Any, keys: list[str], key_values: list[Any], bounded: bool
) -> Any:
    """INSERT … SELECT of one step per member from the post's answers, added
    to each existing row by ScoreRow.add's rule."""
    correct = cast(_ANSWERS.correct, Integer)
    last = case((_ANSWERS.correct, _ANSWERS.answered_at), else_=null())
    one: Any = literal_column("1")
    zero: Any = literal_column("0")
    tally = [_ANSWERS.points, correct, one, last]
    values = [
        *key_values,
        _ANSWERS.user_id,
        text_param("week", 8),
        text_param("month", 8),
        null(),
        *tally,
        *tally,
        *tally,
        zero,
        zero,
        zero,
        null(),
    ]
    names = [*keys, "week", "month", "prev_week"]
    for prefix in ("", "week_", "month_", "prev_week_"):
        names += [f"{prefix}{n}" for n in ("points", "correct", "answered", "last_correct_at")]
    stmt = insert_for(dialect, model).from_select(names, _post_answers(bounded, *values))
    return stmt.on_conflict_do_update(index_elements=keys, set_=_merged(model, stmt.excluded))


def _merged(model: Any, new: Any) -> dict[str, Any]:
    """ScoreRow.add in SQL. Every column on the right of SET is the row's old
    value, on SQLite as on PostgreSQL."""
    row = model.__table__.c
    names = ("points", "correct", "answered", "last_correct_at")

    def added(old: str, step: str, name: str) -> Any:
        if name == "last_correct_at":
            return _later(row[f"{old}{name}"], new[f"{step}{name}"])
        return row[f"{old}{name}"] + new[f"{step}{name}"]

    same_week, later_week = row.week == new.week, new.week > row.week
    same_prev = new.week == row.prev_week
    later_prev = row.prev_week.is_(None) | (new.week > row.prev_week)
    same_month, later_month = row.month == new.month, new.month > row.month
    merged: dict[str, Any] = {}
    for name in names:
        merged[name] = added("", "", name)
        merged[f"week_{name}"] = case(
            (same_week, added("week_", "week_", name)),
            (later_week, new[f"week_{name}"]),
            else_=row[f"week_{name}"],
        )
        merged[f"prev_week_{name}"] = case(
            (same_week, row[f"prev_week_{name}"]),
            (later_week, row[f"week_{name}"]),
            (same_prev, added("prev_week_", "week_", name)),
            (later_prev, new[f"week_{name}"]),
            else_=row[f"prev_week_{name}"],
        )
        merged[f"month_{name}"] = case(
            (same_month, added("month_", "month_", name)),
            (later_month, new[f"month_{name}"]),
            else_=row[f"month_{name}"],
        )
    merged["prev_week"] = case(
        (same_week, row.prev_week),
        (later_week, row.week),
        (same_prev, row.prev_week),
        (later_prev, new.week),
        else_=row.prev_week,
    )
    merged["week"] = case((later_week, new.week), else_=row.week)
    merged["month"] = case((later_month, new.month), else_=row.month)
    return merged


def _later(old: Any, new: Any) -> Any:
    return case(
        (new.is_(None), old),
        (old.is_(None), new),
        (new > old, new),
        else_=old,
    )


def _counts_from_answers(dialect: str, bounded: bool) -> Any:
    stmt = insert_for(dialect, MemberQuestion)
    answers = _post_answers(
        bounded,
        text_param("platform", 16),
        _ANSWERS.user_id,
        text_param("question_id", 64),
        literal_column("1"),
        cast(_ANSWERS.correct, Integer),
        _ANSWERS.points,
    )
    stmt = stmt.from_select(
        ["platform", "user_id", "question_id", "answered", "correct", "points"], answers
    )
    row, new = MemberQuestion.__table__.c, stmt.excluded
    return stmt.on_conflict_do_update(
        index_elements=["platform", "user_id", "question_id"],
        set_={
            "answered": row.answered + new.answered,
            "correct": row.correct + new.correct,
            "points": row.points + new.points,
        },
    )


def streak_step_sql(source: Any) -> str:
    """PostgreSQL's streak upsert of the rows `source` selects (channel, user,
    current, best), by the same rule, as SQL text with no parameters (for a
    statement written around it: the answer batch's)."""
    statement = _step_streak("postgresql", source)
    return str(statement.compile(dialect=postgresql.dialect()))  # type: ignore[no-untyped-call]


def _step_streak(dialect: str, source: Any = None) -> Any:
    """Insert (1, 1) for a right first answer, (0, 0) for a wrong one; on an
    existing row a right answer extends the run and a wrong one ends it.
    The rows are bound values, or those `source` selects."""
    stmt = insert_for(dialect, DailyStreak)
    if source is not None:
        stmt = stmt.from_select(["channel_id", "user_id", "current", "best"], source)
    row, new = DailyStreak.__table__.c, stmt.excluded
    # Literals in the SQL text: a Prepared statement binds column values only.
    one: Any = literal_column("1")
    zero: Any = literal_column("0")
    extended = row.current + one
    right = new.current == one
    return stmt.on_conflict_do_update(
        index_elements=["channel_id", "user_id"],
        set_={
            "current": case((right, extended), else_=zero),
            "best": case((right & (extended > row.best), extended), else_=row.best),
        },
    )
