"""Database tables. Answers are append-only and the source of truth; the read
models at the end (scores, per-question counts, streaks) are kept from them by
the write path and can always be recomputed (`quizmaster db check`)."""

from __future__ import annotations

from datetime import UTC, date, datetime
from typing import Any

from sqlalchemy import (
    JSON,
    Boolean,
    Date,
    DateTime,
    Dialect,
    Float,
    ForeignKey,
    Index,
    Integer,
    String,
    TypeDecorator,
    UniqueConstraint,
    text,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column


class UTCDateTime(TypeDecorator[datetime]):
    """Aware UTC datetimes on every backend (SQLite has no time zones)."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("naive datetime given to the database")
        value = value.astimezone(UTC)
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def process_result_value(self, value: Any, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        assert isinstance(value, datetime)
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


class Base(DeclarativeBase):
    type_annotation_map = {datetime: UTCDateTime}  # noqa: RUF012 (SQLAlchemy's own hook)


class Channel(Base):
    """A channel the bot has posted in, with its settings."""

    __tablename__ = "channels"
    __table_args__ = (UniqueConstraint("platform", "channel", name="uq_channels_platform_channel"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    platform: Mapped[str] = mapped_column(String(16))
    community: Mapped[str] = mapped_column(String(64), index=True)
    channel: Mapped[str] = mapped_column(String(64))
    timezone: Mapped[str] = mapped_column(String(64), default="UTC", server_default="UTC")
    # Discord role name or Slack user group handle whose members may moderate.
    moderator_role: Mapped[str | None] = mapped_column(String(100), default=None)
    # Off: channel posts name members in plain text instead of pinging mentions.
    mentions: Mapped[bool] = mapped_column(Boolean, default=True, server_default=text("true"))
    # Why the platform last refused a post here (deleted channel, no permission);
    # set, the channel gets no timed posts until a moderator posts again.
    delivery_problem: Mapped[str | None] = mapped_column(String(300), default=None)
    # How long a daily question stays open if the next one does not close it first.
    daily_window_hours: Mapped[int] = mapped_column(Integer, default=24, server_default="24")
    # How late a scheduled post missed during downtime may still be made.
    grace_minutes: Mapped[int] = mapped_column(Integer, default=120, server_default="120")
    # "compete" (speed points) or "study" (the same points however fast, the
    # explanation with the private reply).
    mode: Mapped[str] = mapped_column(String(16), default="compete", server_default="compete")
    # On: each question gets a second per 15 words of its text on top (see rules.reading_seconds).
    reading_time: Mapped[bool] = mapped_column(Boolean, default=False, server_default=text("false"))
    # How the daily question is drawn: "shuffle" (the deck) or "adaptive"
    # (what the channel missed comes back, see bot/domain/daily_pick.py).
    daily_pick: Mapped[str] = mapped_column(String(16), default="shuffle", server_default="shuffle")
    created_at: Mapped[datetime]


class Community(Base):
    """A Discord server or Slack workspace, with the settings that hold for all
    its channels (a row only once one is set)."""

    __tablename__ = "communities"

    platform: Mapped[str] = mapped_column(String(16), primary_key=True)
    community: Mapped[str] = mapped_column(String(64), primary_key=True)
    # The language of channel posts (bot/i18n.py LANGUAGES); private replies
    # follow each member's own.
    language: Mapped[str] = mapped_column(String(16), default="en", server_default="en")


class Quiz(Base):
    """A live quiz: its questions are chosen at start, `posted` counts those sent."""

    __tablename__ = "quizzes"
    __table_args__ = (
        # One running quiz per channel, enforced by the database.
        Index(
            "uq_quizzes_one_running",
            "channel_id",
            unique=True,
            sqlite_where=text("status = 'running'"),
            postgresql_where=text("status = 'running'"),
        ),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    channel_id: Mapped[int] = mapped_column(ForeignKey("channels.id", ondelete="CASCADE"))
    status: Mapped[str] = mapped_column(String(16))
    question_ids: Mapped[list[str]] = mapped_column(JSON)
    posted: Mapped[int] = mapped_column(Integer, default=0)
    seconds: Mapped[int] = mapped_column(Integer)
    bank: Mapped[str | None] = mapped_column(String(64), default=None)
    tag: Mapped[str | None] = mapped_column(String(40), default=None)
    expected_players: Mapped[int | None] = mapped_column(Integer, default=None)
    # A team game: how many teams (None: everyone for themselves), and once it
    # ended, each team's result as the scoreboard showed it.
    teams: Mapped[int | None] = mapped_column(Integer, default=None)
    team_results: Mapped[list[dict[str, Any]] | None] = mapped_column(JSON, default=None)
    started_by: Mapped[str] = mapped_column(String(64))
    started_at: Mapped[datetime]
    ended_at: Mapped[datetime | None] = mapped_column(default=None)


class QuizTeamMember(Base):
    """Which team a member plays for in a team quiz (set on their first answer)."""

    __tablename__ = "quiz_team_members"

    quiz_id: Mapped[int] = mapped_column(
        ForeignKey("quizzes.id", ondelete="CASCADE"), primary_key=True
    )
    user_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    team: Mapped[int] = mapped_column(Integer)


# A closed post whose answers are not in the review cards yet.
CARDS_PENDING = "cards_applied_at IS NULL AND closed_at IS NOT NULL"


class Post(Base):
    """One posting of a question in a channel, with its shuffled option order."""

    __tablename__ = "posts"
    __table_args__ = (
        Index(
            "ix_posts_open_closes_at",
            "closes_at",
            sqlite_where=text("closed_at IS NULL"),
            postgresql_where=text("closed_at IS NULL"),
        ),
        Index("ix_posts_quiz", "quiz_id"),
        Index(
            "ix_posts_unrevealed_closed_at",
            "closed_at",
            sqlite_where=text("revealed_at IS NULL"),
            postgresql_where=text("revealed_at IS NULL"),
        ),
        Index("ix_posts_channel_kind", "channel_id", "kind", "posted_at"),
        Index(
            "ix_posts_unpublished_retry_at",
            "publish_retry_at",
            sqlite_where=text("message_id IS NULL AND closed_at IS NULL"),
            postgresql_where=text("message_id IS NULL AND closed_at IS NULL"),
        ),
        Index(
            "ix_posts_cards_pending",
            "closed_at",
            sqlite_where=text(CARDS_PENDING),
            postgresql_where=text(CARDS_PENDING),
        ),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    channel_id: Mapped[int] = mapped_column(ForeignKey("channels.id", ondelete="CASCADE"))
    quiz_id: Mapped[int | None] = mapped_column(
        ForeignKey("quizzes.id", ondelete="CASCADE"), default=None
    )
    kind: Mapped[str] = mapped_column(String(16))
    sequence: Mapped[int | None] = mapped_column(Integer, default=None)
    question_id: Mapped[str] = mapped_column(String(64))
    # option_order[slot] is the bank index of the option shown at that slot.
    option_order: Mapped[list[int]] = mapped_column(JSON)
    correct_slot: Mapped[int] = mapped_column(Integer)
    seconds: Mapped[int] = mapped_column(Integer)
    posted_at: Mapped[datetime]
    closes_at: Mapped[datetime]
    closed_at: Mapped[datetime | None] = mapped_column(default=None)
    message_id: Mapped[str | None] = mapped_column(String(64), default=None)
    # Set once the platform message shows the answer; a closed post without it
    # is revealed again by the timer loop (after a crash or a platform error).
    revealed_at: Mapped[datetime | None] = mapped_column(default=None)
    # Who is revealing it: set by the one caller that may edit the message, and
    # taken over by another only once this lease is old (the editor crashed).
    reveal_claimed_at: Mapped[datetime | None] = mapped_column(default=None)
    # The process that made it (bot/storage/process.py): it closes the post at
    # its deadline; the others take it only once it is late (that one died).
    owner: Mapped[str | None] = mapped_column(String(40), default=None)
    # An unpublished post (no message yet) waits for its next try at
    # `publish_retry_at`, until `publish_by`; then it is given up (the daily
    # slot is skipped, the live quiz ends). A crash between creating the post
    # and sending it leaves this set, so a restart sends it.
    publish_attempts: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    publish_retry_at: Mapped[datetime | None] = mapped_column(default=None)
    publish_by: Mapped[datetime | None] = mapped_column(default=None)
    # Set in the transaction that took the post's answers into the members'
    # review cards, after it closed; a closed post without it is applied by
    # the timer loop (after a crash between the close and the cards).
    cards_applied_at: Mapped[datetime | None] = mapped_column(default=None)
    # An adaptive daily pick that brings a missed question back: how right the
    # channel was last time, and when (the post's footer says so).
    review_share: Mapped[float | None] = mapped_column(Float, default=None)
    review_of: Mapped[datetime | None] = mapped_column(default=None)


class Answer(Base):
    """One member's answer to one post. The unique constraint makes the first click the only one."""

    __tablename__ = "answers"
    __table_args__ = (
        UniqueConstraint("post_id", "user_id", name="uq_answers_post_user"),
        Index("ix_answers_channel_time", "channel_id", "answered_at"),
        Index("ix_answers_user", "user_id"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    post_id: Mapped[int] = mapped_column(ForeignKey("posts.id", ondelete="CASCADE"))
    channel_id: Mapped[int] = mapped_column(ForeignKey("channels.id", ondelete="CASCADE"))
    user_id: Mapped[str] = mapped_column(String(64))
    slot: Mapped[int] = mapped_column(Integer)
    correct: Mapped[bool] = mapped_column(Boolean)
    points: Mapped[int] = mapped_column(Integer)
    answered_at: Mapped[datetime]
    latency_ms: Mapped[int] = mapped_column(Integer)
    # The member read the question's hint before answering (half points).
    hinted: Mapped[bool] = mapped_column(Boolean, default=False, server_default=text("false"))


class HintTaken(Base):
    """A member opened a question's hint; their answer then earns half its points."""

    __tablename__ = "hints_taken"

    post_id: Mapped[int] = mapped_column(
        ForeignKey("posts.id", ondelete="CASCADE"), primary_key=True
    )
    user_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    taken_at: Mapped[datetime]


class Schedule(Base):
    """A channel's timed post: the daily question or the weekly leaderboard.

    The rule (local time, zone, days) is stored as the moderator gave it; the
    next fire time is derived from it and persisted, so a restart knows what it
    missed, and claimed by a conditional UPDATE so only one process posts it.
    """

    __tablename__ = "schedules"
    __table_args__ = (
        UniqueConstraint("channel_id", "kind", name="uq_schedules_channel_kind"),
        Index("ix_schedules_next_fire", "next_fire"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    channel_id: Mapped[int] = mapped_column(ForeignKey("channels.id", ondelete="CASCADE"))
    kind: Mapped[str] = mapped_column(String(16))  # "daily" or "leaderboard"
    at_time: Mapped[str] = mapped_column(String(5))  # local HH:MM
    zone: Mapped[str] = mapped_column(String(64))
    days: Mapped[list[int]] = mapped_column(JSON)  # 0 = Monday … 6 = Sunday
    bank: Mapped[str | None] = mapped_column(String(64), default=None)
    tag: Mapped[str | None] = mapped_column(String(40), default=None)
    next_fire: Mapped[datetime]
    created_by: Mapped[str] = mapped_column(String(64))
    updated_at: Mapped[datetime]


class DeckSeen(Base):
    """Questions a channel has already been shown in the current pass through its pool."""

    __tablename__ = "deck_seen"

    channel_id: Mapped[int] = mapped_column(
        ForeignKey("channels.id", ondelete="CASCADE"), primary_key=True
    )
    question_id: Mapped[str] = mapped_column(String(64), primary_key=True)


# -- read models ------------------------------------------------------------------
# Kept by the write path, in the transaction that stores answers or closes a
# daily question, so leaderboards, stats and streaks read a few rows instead of
# every answer. `quizmaster db check` recomputes them from the answers.

# Bucket keys: an ISO week like "2026-W49" or a month like "2026-12", in the
# zone of the channel the answer was given in.
PERIOD_LENGTH = 8


class ScoreColumns:
    """A member's points on one board: all time, the week and month of their
    latest answer there, and (for the Monday post) the week before that.

    One row per member and board keeps an answer to one upsert per board; a
    week or month that is not the current one is simply not on its board."""

    points: Mapped[int] = mapped_column(Integer)
    correct: Mapped[int] = mapped_column(Integer)
    answered: Mapped[int] = mapped_column(Integer)
    # Ties rank the member who got there first higher.
    last_correct_at: Mapped[datetime | None] = mapped_column(default=None)
    week: Mapped[str] = mapped_column(String(PERIOD_LENGTH))
    week_points: Mapped[int] = mapped_column(Integer)
    week_correct: Mapped[int] = mapped_column(Integer)
    week_answered: Mapped[int] = mapped_column(Integer)
    week_last_correct_at: Mapped[datetime | None] = mapped_column(default=None)
    month: Mapped[str] = mapped_column(String(PERIOD_LENGTH))
    month_points: Mapped[int] = mapped_column(Integer)
    month_correct: Mapped[int] = mapped_column(Integer)
    month_answered: Mapped[int] = mapped_column(Integer)
    month_last_correct_at: Mapped[datetime | None] = mapped_column(default=None)
    prev_week: Mapped[str | None] = mapped_column(String(PERIOD_LENGTH), default=None)
    prev_week_points: Mapped[int] = mapped_column(Integer, default=0)
    prev_week_correct: Mapped[int] = mapped_column(Integer, default=0)
    prev_week_answered: Mapped[int] = mapped_column(Integer, default=0)
    prev_week_last_correct_at: Mapped[datetime | None] = mapped_column(default=None)


class ChannelScore(ScoreColumns, Base):
    """A member's points in one channel."""

    __tablename__ = "channel_scores"
    __table_args__ = (Index("ix_channel_scores_user", "user_id"), {"sqlite_with_rowid": False})

    channel_id: Mapped[int] = mapped_column(
        ForeignKey("channels.id", ondelete="CASCADE"), primary_key=True
    )
    user_id: Mapped[str] = mapped_column(String(64), primary_key=True)


class CommunityScore(ScoreColumns, Base):
    """A member's points in all channels of one server or workspace."""

    __tablename__ = "community_scores"
    __table_args__ = (Index("ix_community_scores_user", "user_id"), {"sqlite_with_rowid": False})

    platform: Mapped[str] = mapped_column(String(16), primary_key=True)
    community: Mapped[str] = mapped_column(String(64), primary_key=True)
    user_id: Mapped[str] = mapped_column(String(64), primary_key=True)


def _ranked_indexes(model: Any, table: str, *keys: str) -> None:
    """Each board (all time, the week, the month) read in rank order from an
    index: its top ten is ten index entries, however many members it has.

    The order is rank_order's without its NULLS LAST, which each backend's
    default then matches in index and query alike: a member with no right
    answer (no last_correct_at) has fewer right answers than anyone with one,
    so the NULLs never meet a time in the comparison."""
    for period, prefix in (("all", ""), ("week", "week_"), ("month", "month_")):
        columns = [getattr(model, key) for key in keys]
        if prefix:
            columns.append(getattr(model, period))
        Index(
            f"ix_{table}_{period}_rank",
            *columns,
            getattr(model, f"{prefix}points").desc(),
            getattr(model, f"{prefix}correct").desc(),
            getattr(model, f"{prefix}last_correct_at"),
            model.user_id,
        )


_ranked_indexes(ChannelScore, "channel_scores", "channel_id")
_ranked_indexes(CommunityScore, "community_scores", "platform", "community")


class MemberQuestion(Base):
    """How often a member answered one question on a platform, and how well (for stats)."""

    __tablename__ = "member_questions"
    __table_args__ = ({"sqlite_with_rowid": False},)

    platform: Mapped[str] = mapped_column(String(16), primary_key=True)
    user_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    question_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    answered: Mapped[int] = mapped_column(Integer)
    correct: Mapped[int] = mapped_column(Integer)
    points: Mapped[int] = mapped_column(Integer)


class DailyStreak(Base):
    """A member's current and best run of daily questions answered right in a channel."""

    __tablename__ = "daily_streaks"
    __table_args__ = (Index("ix_daily_streaks_user", "user_id"), {"sqlite_with_rowid": False})

    channel_id: Mapped[int] = mapped_column(
        ForeignKey("channels.id", ondelete="CASCADE"), primary_key=True
    )
    user_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    current: Mapped[int] = mapped_column(Integer)
    best: Mapped[int] = mapped_column(Integer)


# The streak board, in its order (current, then best, then user id).
Index(
    "ix_daily_streaks_rank",
    DailyStreak.channel_id,
    DailyStreak.current.desc(),
    DailyStreak.best.desc(),
    DailyStreak.user_id,
)


# -- study ------------------------------------------------------------------------
# Spaced repetition: each member's card per question, scheduled by FSRS from
# their answers (applied when a post closes) and their `/quiz review` answers.


class ReviewCard(Base):
    """A member's card for one question on one platform; due when to review it."""

    __tablename__ = "review_cards"
    __table_args__ = (
        Index("ix_review_cards_due", "platform", "user_id", "due"),
        {"sqlite_with_rowid": False},
    )

    platform: Mapped[str] = mapped_column(String(16), primary_key=True)
    user_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    question_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    due: Mapped[datetime]
    # FSRS: state (learning, review, relearning), learning step, memory state.
    state: Mapped[int] = mapped_column(Integer)
    step: Mapped[int | None] = mapped_column(Integer, default=None)
    stability: Mapped[float | None] = mapped_column(Float, default=None)
    difficulty: Mapped[float | None] = mapped_column(Float, default=None)
    last_review: Mapped[datetime | None] = mapped_column(default=None)
    reviews: Mapped[int] = mapped_column(Integer, default=0)
    misses: Mapped[int] = mapped_column(Integer, default=0)


class CardReview(Base):
    """An answer already taken into its member's card, so none counts twice."""

    __tablename__ = "card_reviews"

    answer_id: Mapped[int] = mapped_column(
        ForeignKey("answers.id", ondelete="CASCADE"), primary_key=True
    )


class ReviewSession(Base):
    """A member's `/quiz review` run. Buttons name the session and its step, so
    a click works after a restart and an old card's click is recognised."""

    __tablename__ = "review_sessions"
    # AUTOINCREMENT: SQLite would otherwise hand a deleted session's id to the
    # next one, and an old card's buttons would then act on the new run.
    __table_args__ = (
        Index("ix_review_sessions_user", "platform", "user_id"),
        {"sqlite_autoincrement": True},
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    platform: Mapped[str] = mapped_column(String(16))
    community: Mapped[str] = mapped_column(String(64))
    channel: Mapped[str] = mapped_column(String(64))
    user_id: Mapped[str] = mapped_column(String(64))
    step: Mapped[int] = mapped_column(Integer, default=0)
    remaining: Mapped[int] = mapped_column(Integer)
    question_id: Mapped[str | None] = mapped_column(String(64), default=None)
    option_order: Mapped[list[int]] = mapped_column(JSON)
    correct_slot: Mapped[int] = mapped_column(Integer)
    shown_at: Mapped[datetime]
    # The card answered last (its verdict is on screen): what "Report a problem" reports.
    last_question_id: Mapped[str | None] = mapped_column(String(64), default=None)


class Submission(Base):
    """A question a member proposed for their community's bank, and its review.

    `status` moves draft → pending → accepted | rejected, and accepted →
    removed. A draft keeps what a member typed into a form that failed
    validation (so they can fix it); an accepted row is a question of the
    community bank, with the question id `community-<id>`. `question` holds the
    bank schema's fields (a draft: the raw form values)."""

    __tablename__ = "submissions"
    __table_args__ = (
        # The review queue and the community bank: one community's rows by status, oldest first.
        Index("ix_submissions_community_status", "platform", "community", "status", "id"),
        # The pending limit per member.
        Index("ix_submissions_author", "platform", "community", "author_id", "status"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    platform: Mapped[str] = mapped_column(String(16))
    community: Mapped[str] = mapped_column(String(64))
    # Where it was submitted: Slack replies privately there.
    channel: Mapped[str] = mapped_column(String(64))
    author_id: Mapped[str] = mapped_column(String(64))
    author_name: Mapped[str | None] = mapped_column(String(100), default=None)
    status: Mapped[str] = mapped_column(String(16))
    question: Mapped[dict[str, Any]] = mapped_column(JSON)
    reason: Mapped[str | None] = mapped_column(String(500), default=None)
    reviewed_by: Mapped[str | None] = mapped_column(String(64), default=None)
    created_at: Mapped[datetime]
    reviewed_at: Mapped[datetime | None] = mapped_column(default=None)


class PostVotes(Base):
    """How a closed post was answered: answers, right answers and votes per
    option in bank order. Written by the close transaction, so the dashboard's
    question pages add up one small row per post, never an answer, and never
    see an open question's votes."""

    __tablename__ = "post_votes"
    __table_args__ = (Index("ix_post_votes_community", "platform", "community", "closed_at"),)

    post_id: Mapped[int] = mapped_column(
        ForeignKey("posts.id", ondelete="CASCADE"), primary_key=True
    )
    platform: Mapped[str] = mapped_column(String(16))
    community: Mapped[str] = mapped_column(String(64))
    question_id: Mapped[str] = mapped_column(String(64))
    closed_at: Mapped[datetime]
    answered: Mapped[int] = mapped_column(Integer)
    correct: Mapped[int] = mapped_column(Integer)
    option_0: Mapped[int] = mapped_column(Integer)
    option_1: Mapped[int] = mapped_column(Integer)
    option_2: Mapped[int] = mapped_column(Integer)
    option_3: Mapped[int] = mapped_column(Integer)
    option_4: Mapped[int] = mapped_column(Integer)


class ClosingPost(Base):
    """A closed post whose answers are still being added to the read models, a
    slice of answerers at a time (bot/storage/closing.py). `step` says how far:
    0 before the item analysis, 1 once it is in; `after_user` is the last
    answerer whose rows are in ("" for none). The row goes in the transaction
    that adds the last slice; one left by a crash is finished by the next process."""

    __tablename__ = "closing_posts"

    post_id: Mapped[int] = mapped_column(
        ForeignKey("posts.id", ondelete="CASCADE"), primary_key=True
    )
    platform: Mapped[str] = mapped_column(String(16))
    community: Mapped[str] = mapped_column(String(64))
    closed_at: Mapped[datetime]
    step: Mapped[int] = mapped_column(Integer, default=0)
    after_user: Mapped[str] = mapped_column(String(64), default="")


class MemberDay(Base):
    """A member's closed answers in a community on one UTC day: the member
    page's points over time, one row a day, never an answer."""

    __tablename__ = "member_days"
    __table_args__ = ({"sqlite_with_rowid": False},)

    platform: Mapped[str] = mapped_column(String(16), primary_key=True)
    user_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    community: Mapped[str] = mapped_column(String(64), primary_key=True)
    day: Mapped[date] = mapped_column(Date, primary_key=True)
    points: Mapped[int] = mapped_column(Integer)
    answered: Mapped[int] = mapped_column(Integer)
    correct: Mapped[int] = mapped_column(Integer)


class CommunityMemberQuestion(Base):
    """How often a member answered one question in one community, and how
    well: the member page's accuracy per tag (`member_questions` is the same
    count over the whole platform, for `/quiz stats`)."""

    __tablename__ = "community_member_questions"
    __table_args__ = ({"sqlite_with_rowid": False},)

    platform: Mapped[str] = mapped_column(String(16), primary_key=True)
    user_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    community: Mapped[str] = mapped_column(String(64), primary_key=True)
    question_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    answered: Mapped[int] = mapped_column(Integer)
    correct: Mapped[int] = mapped_column(Integer)


class SeenRequest(Base):
    """A signed Slack request already acted on, kept for its five-minute
    window: claimed with INSERT … ON CONFLICT DO NOTHING, so of several
    processes on one database exactly one acts on it (the others answer 200)."""

    __tablename__ = "seen_requests"
    __table_args__ = ({"sqlite_with_rowid": False},)

    signature: Mapped[str] = mapped_column(String(80), primary_key=True)
    expires_at: Mapped[float] = mapped_column(Float, index=True)


class QuestionAnalysis(Base):
    """Item analysis of one question in one community, added to by each close
    (bot/storage/item_analysis.py): answers, right answers and votes per bank
    option, overall and in the upper and lower 27 % of each post's answerers
    (ranked by their community record before that post). Never an answer is
    read for /quiz health."""

    __tablename__ = "question_analysis"
    __table_args__ = (
        Index("ix_question_analysis_severity", "platform", "community", "severity"),
        {"sqlite_with_rowid": False},
    )

    platform: Mapped[str] = mapped_column(String(16), primary_key=True)
    community: Mapped[str] = mapped_column(String(64), primary_key=True)
    question_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    answered: Mapped[int] = mapped_column(Integer)
    correct: Mapped[int] = mapped_column(Integer)
    option_0: Mapped[int] = mapped_column(Integer)
    option_1: Mapped[int] = mapped_column(Integer)
    option_2: Mapped[int] = mapped_column(Integer)
    option_3: Mapped[int] = mapped_column(Integer)
    option_4: Mapped[int] = mapped_column(Integer)
    upper_answered: Mapped[int] = mapped_column(Integer)
    upper_correct: Mapped[int] = mapped_column(Integer)
    upper_0: Mapped[int] = mapped_column(Integer)
    upper_1: Mapped[int] = mapped_column(Integer)
    upper_2: Mapped[int] = mapped_column(Integer)
    upper_3: Mapped[int] = mapped_column(Integer)
    upper_4: Mapped[int] = mapped_column(Integer)
    lower_answered: Mapped[int] = mapped_column(Integer)
    lower_correct: Mapped[int] = mapped_column(Integer)
    lower_0: Mapped[int] = mapped_column(Integer)
    lower_1: Mapped[int] = mapped_column(Integer)
    lower_2: Mapped[int] = mapped_column(Integer)
    lower_3: Mapped[int] = mapped_column(Integer)
    lower_4: Mapped[int] = mapped_column(Integer)
    # As of the latest close: the question's option count and key (bank
    # order), and the flags its counts earn (bot/domain/item_analysis.py,
    # reports aside), so /quiz health reads the worst ten by an index.
    options: Mapped[int] = mapped_column(Integer)
    answer: Mapped[int] = mapped_column(Integer)
    severity: Mapped[int] = mapped_column(Integer)
    flags: Mapped[str] = mapped_column(String(120))


class QuestionReport(Base):
    """A member's "Report a problem" on a revealed question; open until a
    moderator dismisses it, marks it fixed or removes the question."""

    __tablename__ = "question_reports"
    __table_args__ = (Index("ix_question_reports_open", "platform", "community", "status", "id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    platform: Mapped[str] = mapped_column(String(16))
    community: Mapped[str] = mapped_column(String(64))
    channel: Mapped[str] = mapped_column(String(64))
    question_id: Mapped[str] = mapped_column(String(64))
    user_id: Mapped[str] = mapped_column(String(64))
    reason: Mapped[str] = mapped_column(String(16))
    text: Mapped[str | None] = mapped_column(String(500), default=None)
    status: Mapped[str] = mapped_column(String(16))  # open, dismissed, fixed, removed
    created_at: Mapped[datetime]
    resolved_by: Mapped[str | None] = mapped_column(String(64), default=None)
    resolved_at: Mapped[datetime | None] = mapped_column(default=None)


class WithdrawnQuestion(Base):
    """A question a moderator removed from one community's draw (the bank file
    itself is never edited)."""

    __tablename__ = "withdrawn_questions"
    __table_args__ = ({"sqlite_with_rowid": False},)

    platform: Mapped[str] = mapped_column(String(16), primary_key=True)
    community: Mapped[str] = mapped_column(String(64), primary_key=True)
    question_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    withdrawn_by: Mapped[str] = mapped_column(String(64))
    withdrawn_at: Mapped[datetime]


class ForgottenMember(Base):
    """A member who used forget-me, for as long as a dashboard link issued
    before could still be honoured (24 h): such links are refused. Only a hash
    of the platform and id is kept, never the id itself."""

    __tablename__ = "forgotten_members"
    __table_args__ = ({"sqlite_with_rowid": False},)

    member_hash: Mapped[str] = mapped_column(String(64), primary_key=True)
    forgotten_at: Mapped[datetime] = mapped_column(index=True)


# The OAuth installation tables live in their own module; importing it here puts
# them in Base.metadata wherever the models are (migrations, checks, tests).
from bot.storage import installations as _installations  # noqa: E402, F401
