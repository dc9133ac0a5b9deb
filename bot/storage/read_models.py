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
from datetime import datetime
from functools import lru_cache
from typing import Any
from zoneinfo import ZoneInfo

from sqlalchemy import Dialect, case, delete, literal_column, or_, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncSession

from bot.quiz.rules import Period, period_key
from bot.storage.models import (
    Answer,
    Channel,
    ChannelScore,
    CommunityScore,
    DailyStreak,
    MemberQuestion,
)
from bot.storage.prepared import Prepared

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
        self.total = self.total.plus(step.tally)
        if step.week == self.week:
            self.week_tally = self.week_tally.plus(step.tally)
        else:
            self.prev_week, self.prev_week_tally = self.week, self.week_tally
            self.week, self.week_tally = step.week, step.tally
        if step.month == self.month:
            self.month_tally = self.month_tally.plus(step.tally)
        else:
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


async def add_answers(session: AsyncSession, answers: Sequence[ScoredAnswer]) -> None:
    """Count newly stored answers in every read model, in the caller's transaction."""
    if not answers:
        return
    connection = await session.connection()
    statements = _statements(connection.dialect)
    in_order = sorted(answers, key=lambda a: a.at)
    steps = ScoreSteps.of(in_order)
    for round_rows in _rounds(steps.channels):
        await statements.channel_scores.run(
            connection,
            [_score_values(step, channel_id=c, user_id=u) for (c, u), step in round_rows],
        )
    for round_rows in _rounds(steps.communities):
        await statements.community_scores.run(
            connection,
            [
                _score_values(step, platform=p, community=g, user_id=u)
                for (p, g, u), step in round_rows
            ],
        )
    await statements.member_questions.run(
        connection,
        [
            {
                "platform": platform,
                "user_id": user,
                "question_id": question,
                "answered": tally.answered,
                "correct": tally.correct,
                "points": tally.points,
            }
            for (platform, user, question), tally in sorted(steps.questions.items())
        ],
    )
    # A member's streak moves one daily question at a time, in posting order;
    # two answers by one member in one batch (two open dailies) take two rounds.
    daily: dict[tuple[int, str], list[Step]] = {}
    for answer in in_order:
        if answer.daily:
            mark = Tally(answered=1, correct=int(answer.correct))
            daily.setdefault((answer.channel_id, answer.user_id), []).append(Step("", "", mark))
    for round_rows in _rounds(daily):
        await statements.streaks.run(
            connection,
            [
                {
                    "channel_id": channel_id,
                    "user_id": user_id,
                    "current": step.tally.correct,
                    "best": step.tally.correct,
                }
                for (channel_id, user_id), step in round_rows
            ],
        )


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


async def close_daily(session: AsyncSession, post_id: int, channel_id: int) -> None:
    """A daily question closed: everyone in the channel who did not answer it
    loses their current streak (those who answered were counted already)."""
    answered = select(Answer.user_id).where(Answer.post_id == post_id)
    await session.execute(
        update(DailyStreak)
        .where(
            DailyStreak.channel_id == channel_id,
            DailyStreak.current > 0,
            DailyStreak.user_id.not_in(answered),
        )
        .values(current=0)
    )


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


def _score_values(step: Step, **key: Any) -> dict[str, Any]:
    """A new row for this step (score_row of ScoreRow.first, spelled out: it
    runs for every answer); on an existing row the upsert adds it instead."""
    points, correct, answered, last = (
        step.tally.points,
        step.tally.correct,
        step.tally.answered,
        step.tally.last_correct_at,
    )
    return {
        **key,
        "week": step.week,
        "month": step.month,
        "prev_week": None,
        "points": points,
        "correct": correct,
        "answered": answered,
        "last_correct_at": last,
        "week_points": points,
        "week_correct": correct,
        "week_answered": answered,
        "week_last_correct_at": last,
        "month_points": points,
        "month_correct": correct,
        "month_answered": answered,
        "month_last_correct_at": last,
        "prev_week_points": 0,
        "prev_week_correct": 0,
        "prev_week_answered": 0,
        "prev_week_last_correct_at": None,
    }


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
class _Statements:
    channel_scores: Prepared
    community_scores: Prepared
    member_questions: Prepared
    streaks: Prepared


_BY_BACKEND: dict[str, _Statements] = {}


def _statements(dialect: Dialect) -> _Statements:
    """The upserts, compiled once per backend."""
    if dialect.name not in _BY_BACKEND:
        name = dialect.name

        def prepared(statement: Any, model: Any) -> Prepared:
            return Prepared(statement, dialect, [c.name for c in model.__table__.c])

        _BY_BACKEND[name] = _Statements(
            channel_scores=prepared(
                _add_score(name, ChannelScore, ["channel_id", "user_id"]), ChannelScore
            ),
            community_scores=prepared(
                _add_score(name, CommunityScore, ["platform", "community", "user_id"]),
                CommunityScore,
            ),
            member_questions=prepared(_add_counts(name), MemberQuestion),
            streaks=prepared(_step_streak(name), DailyStreak),
        )
    return _BY_BACKEND[dialect.name]


def _insert(dialect: str, model: Any) -> Any:
    """A Core INSERT on the model's table: executed with a list of rows it is
    one executemany (an ORM insert would go through the ORM's bulk path)."""
    module = postgresql if dialect == "postgresql" else sqlite
    return module.insert(model.__table__)


def _add_score(dialect: str, model: Any, keys: list[str]) -> Any:
    """Add a step to a score row (ScoreRow.add in SQL). Every column on the
    right of SET is the row's old value, on SQLite as on PostgreSQL."""
    stmt = _insert(dialect, model)
    row, new = model.__table__.c, stmt.excluded
    same_week, same_month = row.week == new.week, row.month == new.month

    def added(prefix: str) -> dict[str, Any]:
        return {
            f"{prefix}points": row[f"{prefix}points"] + new.points,
            f"{prefix}correct": row[f"{prefix}correct"] + new.correct,
            f"{prefix}answered": row[f"{prefix}answered"] + new.answered,
            f"{prefix}last_correct_at": _later(
                row[f"{prefix}last_correct_at"], new.last_correct_at
            ),
        }

    def restarted_or_added(prefix: str, same: Any) -> dict[str, Any]:
        return {
            column: case((same, value), else_=new[f"{prefix}{column.removeprefix(prefix)}"])
            for column, value in added(prefix).items()
        }

    moved_back = {
        f"prev_week_{name}": case((same_week, row[f"prev_week_{name}"]), else_=row[f"week_{name}"])
        for name in ("points", "correct", "answered", "last_correct_at")
    }
    return stmt.on_conflict_do_update(
        index_elements=keys,
        set_={
            **added(""),
            **restarted_or_added("week_", same_week),
            **restarted_or_added("month_", same_month),
            **moved_back,
            "prev_week": case((same_week, row.prev_week), else_=row.week),
            "week": new.week,
            "month": new.month,
        },
    )


def _later(old: Any, new: Any) -> Any:
    return case(
        (new.is_(None), old),
        (old.is_(None), new),
        (new > old, new),
        else_=old,
    )


def _add_counts(dialect: str) -> Any:
    stmt = _insert(dialect, MemberQuestion)
    row, new = MemberQuestion.__table__.c, stmt.excluded
    return stmt.on_conflict_do_update(
        index_elements=["platform", "user_id", "question_id"],
        set_={
            "answered": row.answered + new.answered,
            "correct": row.correct + new.correct,
            "points": row.points + new.points,
        },
    )


def _step_streak(dialect: str) -> Any:
    """Insert (1, 1) for a right first answer, (0, 0) for a wrong one; on an
    existing row a right answer extends the run and a wrong one ends it."""
    stmt = _insert(dialect, DailyStreak)
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


# -- reading them ---------------------------------------------------------------


def board(model: Any, period: Period, key: str, limit: int, *where: Any) -> Any:
    """Top rows of a board for a period: all time, or the current week or
    month `key`. Ranked by points, then more right answers, then the earlier
    last right answer, then user id."""
    if period is Period.ALL:
        columns = [model.points, model.correct, model.answered, model.last_correct_at]
    elif period is Period.MONTH:
        where = (*where, model.month == key)
        columns = [model.month_points, model.month_correct, model.month_answered]
        columns.append(model.month_last_correct_at)
    else:
        where = (*where, model.week == key)
        columns = [model.week_points, model.week_correct, model.week_answered]
        columns.append(model.week_last_correct_at)
    return _ranked(model, columns, limit, where)


def past_week_board(channel_id: int, key: str, limit: int) -> Any:
    """A channel's board for a past week `key` (the Monday post): the week of a
    member's latest answer, or the one before it if they answered since."""
    model = ChannelScore
    latest = model.week == key
    columns = [
        case((latest, getattr(model, f"week_{name}")), else_=getattr(model, f"prev_week_{name}"))
        for name in ("points", "correct", "answered", "last_correct_at")
    ]
    where = (model.channel_id == channel_id, or_(latest, model.prev_week == key))
    return _ranked(model, columns, limit, where)


def rank_order(points: Any, correct: Any, last_correct: Any, user_id: Any) -> list[Any]:
    """Points, then more correct answers, then the earlier last correct answer, then user id
    (every leaderboard and quiz scoreboard ranks this way)."""
    return [points.desc(), correct.desc(), last_correct.asc().nulls_last(), user_id.asc()]


def _ranked(model: Any, columns: list[Any], limit: int, where: tuple[Any, ...]) -> Any:
    points, correct, answered, last_correct = columns
    return (
        select(model.user_id, points, correct, answered)
        .where(*where)
        .order_by(*rank_order(points, correct, last_correct, model.user_id))
        .limit(limit)
    )


def channel_board(channel_id: int, period: Period, key: str, limit: int) -> Any:
    return board(ChannelScore, period, key, limit, ChannelScore.channel_id == channel_id)


def community_board(platform: str, community: str, period: Period, key: str, limit: int) -> Any:
    return board(
        CommunityScore,
        period,
        key,
        limit,
        CommunityScore.platform == platform,
        CommunityScore.community == community,
    )


def streak_board(channel_id: int, limit: int) -> Any:
    """Members who ever had a streak: longest current first, then longest best."""
    return (
        select(DailyStreak.user_id, DailyStreak.current, DailyStreak.best)
        .where(DailyStreak.channel_id == channel_id, DailyStreak.best > 0)
        .order_by(DailyStreak.current.desc(), DailyStreak.best.desc(), DailyStreak.user_id)
        .limit(limit)
    )


def streak_leaders(channel_id: int, limit: int) -> Any:
    """Members with the longest current streaks (at least 1), longest first."""
    return (
        select(DailyStreak.user_id, DailyStreak.current)
        .where(DailyStreak.channel_id == channel_id, DailyStreak.current > 0)
        .order_by(DailyStreak.current.desc(), DailyStreak.user_id)
        .limit(limit)
    )


def current_streak(channel_id: int, user_id: str) -> Any:
    return select(DailyStreak.current).where(
        DailyStreak.channel_id == channel_id, DailyStreak.user_id == user_id
    )


def member_streaks(platform: str, user_id: str) -> Any:
    """(channel id, current, best) for each channel where the member has a streak row."""
    return (
        select(DailyStreak.channel_id, DailyStreak.current, DailyStreak.best)
        .join(Channel, Channel.id == DailyStreak.channel_id)
        .where(DailyStreak.user_id == user_id, Channel.platform == platform)
    )


def member_questions(platform: str, user_id: str) -> Any:
    """(question id, answered, right, points) for each question the member answered."""
    return select(
        MemberQuestion.question_id,
        MemberQuestion.answered,
        MemberQuestion.correct,
        MemberQuestion.points,
    ).where(MemberQuestion.platform == platform, MemberQuestion.user_id == user_id)
