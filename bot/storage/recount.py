"""Recomputing the read models from the answers: the migration's backfill and
`quizmaster db check`.

This is the slow, obviously right way (every answer, every daily question),
kept apart from the write path so each can check the other.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any
from zoneinfo import ZoneInfo

from sqlalchemy import Connection, delete, insert, select

from bot.domain.rules import streak_table, zone_or_utc
from bot.storage import item_analysis, member_activity
from bot.storage.models import (
    Answer,
    Channel,
    ChannelScore,
    ClosingPost,
    CommunityScore,
    DailyStreak,
    MemberQuestion,
    Post,
)
from bot.storage.post_votes import expected_post_votes, stored_post_votes
from bot.storage.read_models import (
    SCORE_TABLES,
    ScoredAnswer,
    ScoreRow,
    ScoreSteps,
    Tally,
    fold,
    score_row,
)

BATCH = 5_000


@dataclass
class ReadModels:
    """Every read-model row, keyed as in its table."""

    channels: dict[tuple[int, str], ScoreRow] = field(default_factory=dict)
    communities: dict[tuple[str, str, str], ScoreRow] = field(default_factory=dict)
    questions: dict[tuple[str, str, str], tuple[int, int, int]] = field(default_factory=dict)
    streaks: dict[tuple[int, str], tuple[int, int]] = field(default_factory=dict)


def expected(connection: Connection) -> ReadModels:
    """The read models as the answers say they should be."""
    channels = {
        row.id: (row.platform, row.community, zone_or_utc(row.timezone))
        for row in connection.execute(
            select(Channel.id, Channel.platform, Channel.community, Channel.timezone)
        )
    }
    steps = ScoreSteps.of(_scored_answers(connection, channels))
    return ReadModels(
        channels=fold(steps.channels),
        communities=fold(steps.communities),
        questions={
            key: (tally.answered, tally.correct, tally.points)
            for key, tally in steps.questions.items()
        },
        streaks=_streaks(connection),
    )


def _scored_answers(
    connection: Connection, channels: dict[int, tuple[str, str, ZoneInfo]]
) -> Iterator[ScoredAnswer]:
    # Per statement: Connection.execution_options would change the connection
    # for every later statement, the migration's own included.
    rows = connection.execute(
        select(
            Answer.channel_id,
            Post.kind,
            Post.question_id,
            Answer.user_id,
            Answer.correct,
            Answer.points,
            Answer.answered_at,
        )
        .join(Post, Post.id == Answer.post_id)
        # Scores count an answer once its question has closed.
        .where(Post.closed_at.is_not(None))
        .order_by(Answer.answered_at, Answer.id),
        execution_options={"stream_results": True, "yield_per": BATCH},
    )
    for channel_id, kind, question_id, user_id, correct, points, at in rows:
        platform, community, zone = channels[channel_id]
        yield ScoredAnswer(
            channel_id=channel_id,
            platform=platform,
            community=community,
            zone=zone,
            daily=kind == "daily",
            question_id=question_id,
            user_id=user_id,
            correct=bool(correct),
            points=int(points),
            at=at,
        )


def _streaks(connection: Connection) -> dict[tuple[int, str], tuple[int, int]]:
    """Every member's streak in every channel, from the daily questions in order."""
    posts: dict[int, list[tuple[int, bool]]] = {}
    for channel_id, post_id, closed in connection.execute(
        select(Post.channel_id, Post.id, Post.closed_at.is_not(None))
        .where(Post.kind == "daily")
        .order_by(Post.channel_id, Post.posted_at, Post.id)
    ):
        posts.setdefault(channel_id, []).append((post_id, bool(closed)))
    answers: dict[int, dict[str, dict[int, bool]]] = {}
    for channel_id, user_id, post_id, correct in connection.execute(
        select(Post.channel_id, Answer.user_id, Answer.post_id, Answer.correct)
        .join(Post, Post.id == Answer.post_id)
        .where(Post.kind == "daily")
    ):
        answers.setdefault(channel_id, {}).setdefault(user_id, {})[post_id] = bool(correct)
    streaks: dict[tuple[int, str], tuple[int, int]] = {}
    for channel_id, by_user in answers.items():
        for user_id, run in streak_table(posts.get(channel_id, []), by_user).items():
            streaks[(channel_id, user_id)] = run
    return streaks


_TALLY_PREFIXES = ("", "week_", "month_", "prev_week_")
_TALLY_NAMES = ("points", "correct", "answered", "last_correct_at")


def _score_rows(connection: Connection, model: Any, keys: list[str]) -> dict[Any, ScoreRow]:
    tallies = [f"{prefix}{name}" for prefix in _TALLY_PREFIXES for name in _TALLY_NAMES]
    columns = [*keys, "week", "month", "prev_week", *tallies]
    rows: dict[Any, ScoreRow] = {}
    for found in connection.execute(select(*(model.__table__.c[name] for name in columns))):
        values = dict(zip(columns, found, strict=True))
        total, week, month, prev = (
            Tally(*(values[f"{prefix}{name}"] for name in _TALLY_NAMES))
            for prefix in _TALLY_PREFIXES
        )
        rows[tuple(values[key] for key in keys)] = ScoreRow(
            total, values["week"], week, values["month"], month, values["prev_week"], prev
        )
    return rows


def stored(connection: Connection) -> ReadModels:
    """The read models as the database holds them."""
    models = ReadModels(
        channels=_score_rows(connection, ChannelScore, ["channel_id", "user_id"]),
        communities=_score_rows(connection, CommunityScore, ["platform", "community", "user_id"]),
    )
    for platform, user_id, question_id, answered, correct, points in connection.execute(
        select(
            MemberQuestion.platform,
            MemberQuestion.user_id,
            MemberQuestion.question_id,
            MemberQuestion.answered,
            MemberQuestion.correct,
            MemberQuestion.points,
        )
    ):
        models.questions[(platform, user_id, question_id)] = (answered, correct, points)
    for channel_id, user_id, current, best in connection.execute(
        select(DailyStreak.channel_id, DailyStreak.user_id, DailyStreak.current, DailyStreak.best)
    ):
        models.streaks[(channel_id, user_id)] = (current, best)
    return models


def differences(connection: Connection, limit: int = 50) -> tuple[list[str], int]:
    """Where the stored read models differ from the answers: up to `limit`
    lines saying so, and how many differences there are in all."""
    want, have = expected(connection), stored(connection)
    lines: list[str] = []
    total = 0
    tables: list[tuple[str, dict[Any, Any], dict[Any, Any]]] = [
        ("channel_scores", want.channels, have.channels),
        ("community_scores", want.communities, have.communities),
        ("member_questions", want.questions, have.questions),
        ("daily_streaks", want.streaks, have.streaks),
        # The dashboard's (revision 0010; not part of `rebuild`, which 0007 runs).
        ("post_votes", expected_post_votes(connection), stored_post_votes(connection)),
        # The member page's (revision 0011).
        *member_activity.expected_and_stored(connection),
        # Question health's (revision 0014).
        item_analysis.expected_and_stored(connection),
    ]
    for post_id, after_user in connection.execute(
        select(ClosingPost.post_id, ClosingPost.after_user).order_by(ClosingPost.post_id)
    ):
        # Its answers are reaching the read models a slice at a time: the
        # running bot finishes it (after a crash, the next start does).
        total += 1
        lines.append(
            f"closing_posts ({post_id},): a close still being counted "
            f"(answerers up to {after_user!r} are in); check again once it is finished"
        )
    for table, wanted, held in tables:
        for key in sorted(wanted.keys() | held.keys(), key=repr):
            if wanted.get(key) != held.get(key):
                total += 1
                if len(lines) < limit:
                    lines.append(
                        f"{table} {key}: stored {held.get(key)}, answers say {wanted.get(key)}"
                    )
    return lines, total


def rebuild(connection: Connection) -> None:
    """Replace every read-model row with what the answers say (the backfill)."""
    models = expected(connection)
    for model in SCORE_TABLES:
        connection.execute(delete(model))
    _insert_all(
        connection,
        ChannelScore,
        (
            score_row(row, channel_id=channel_id, user_id=user_id)
            for (channel_id, user_id), row in models.channels.items()
        ),
    )
    _insert_all(
        connection,
        CommunityScore,
        (
            score_row(row, platform=platform, community=community, user_id=user_id)
            for (platform, community, user_id), row in models.communities.items()
        ),
    )
    _insert_all(
        connection,
        MemberQuestion,
        (
            {
                "platform": platform,
                "user_id": user_id,
                "question_id": question_id,
                "answered": answered,
                "correct": correct,
                "points": points,
            }
            for (platform, user_id, question_id), (answered, correct, points) in (
                models.questions.items()
            )
        ),
    )
    _insert_all(
        connection,
        DailyStreak,
        (
            {"channel_id": channel_id, "user_id": user_id, "current": current, "best": best}
            for (channel_id, user_id), (current, best) in models.streaks.items()
        ),
    )


def _insert_all(connection: Connection, model: Any, rows: Iterator[dict[str, Any]]) -> None:
    batch: list[dict[str, Any]] = []
    for row in rows:
        batch.append(row)
        if len(batch) >= BATCH:
            connection.execute(insert(model), batch)
            batch = []
    if batch:
        connection.execute(insert(model), batch)
