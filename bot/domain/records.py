"""Plain data the stores return and take: no session or ORM object leaves storage."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from bot.chat import Target


@dataclass(frozen=True)
class ChannelInfo:
    id: int
    target: Target
    timezone: str
    moderator_role: str | None
    mentions: bool = True
    delivery_problem: str | None = None
    daily_window_hours: int = 24
    grace_minutes: int = 120
    mode: str = "compete"  # or "study": no speed points, the explanation at once
    reading_time: bool = False
    daily_pick: str = "shuffle"  # or "adaptive" (bot/domain/daily_pick.py)

    @property
    def study(self) -> bool:
        return self.mode == "study"


@dataclass(frozen=True)
class ScheduleInfo:
    """A channel's timed post as stored, with the channel settings it needs."""

    id: int
    channel: ChannelInfo
    kind: str
    at_time: str
    zone: str
    days: list[int]
    bank: str | None
    tag: str | None
    next_fire: datetime


@dataclass(frozen=True)
class QuestionScore:
    question_id: str
    answered: int
    correct: int


@dataclass(frozen=True)
class QuizInfo:
    id: int
    channel_id: int
    status: str
    question_ids: list[str]
    posted: int
    seconds: int
    expected_players: int | None
    teams: int | None = None

    @property
    def total(self) -> int:
        return len(self.question_ids)


@dataclass(frozen=True)
class PostInfo:
    """What the answer path needs about a post; all of it is fixed at posting."""

    id: int
    channel_id: int
    target: Target
    quiz_id: int | None
    kind: str
    sequence: int | None
    question_id: str
    option_order: list[int]
    correct_slot: int
    seconds: int
    posted_at: datetime
    closes_at: datetime
    closed_at: datetime | None
    message_id: str | None
    # A live quiz may close a question early once this many members answered.
    expected_players: int | None = None
    # A team quiz's number of teams (None: no teams).
    teams: int | None = None
    # A live quiz's number of questions, for "question 3/10" (None: no quiz).
    quiz_total: int | None = None
    # The channel was in study mode when the post was read (no speed points).
    study: bool = False
    # Delivery: tries that failed so far, and when to stop trying.
    publish_attempts: int = 0
    publish_by: datetime | None = None
    # The channel's zone when the post was made: its answers count for that
    # zone's week and month.
    zone: str = "UTC"
    # Set when an adaptive daily pick brought it back: last time's share right and date.
    review_share: float | None = None
    review_of: datetime | None = None


@dataclass(frozen=True)
class NewAnswer:
    post: PostInfo
    user_id: str
    slot: int
    correct: bool
    points: int
    at: datetime
    hinted: bool = False  # the member read the hint first (the points are halved already)


@dataclass(frozen=True)
class MemberPoints:
    """What one member's answer to a post earned, for the reveal."""

    user_id: str
    points: int
    hinted: bool


@dataclass(frozen=True)
class TopPoints:
    """The reveal's points: the members who earned most (highest first, then
    quickest) and how many earned any."""

    top: tuple[MemberPoints, ...] = ()
    scorers: int = 0


@dataclass(frozen=True)
class TeamRow:
    """A team in a team quiz: how many members answered, and their points."""

    team: int
    members: int
    points: int

    @property
    def average(self) -> float:
        """Points per member who answered, so a bigger team has no edge."""
        return self.points / self.members if self.members else 0.0


@dataclass(frozen=True)
class RevealClaim:
    """The right to edit a closed post's message to show the answer.

    `again` is true when an earlier try may already have made the edit: its
    claimer died with the claim, or its reply was lost (a timeout, a 5xx)."""

    again: bool


@dataclass(frozen=True)
class PostTally:
    counts: list[int]  # answers per slot
    total: int
    first_correct_user: str | None


@dataclass(frozen=True)
class RankRow:
    user_id: str
    points: int
    correct: int
    answered: int


@dataclass(frozen=True)
class QuizResult:
    rows: list[RankRow]
    participants: int
    answers: int
    correct: int


@dataclass(frozen=True)
class UserTotals:
    answered: int
    correct: int
    points: int
    per_question: list[tuple[str, int, int]]  # (question id, answered, correct)


@dataclass(frozen=True)
class DailyPost:
    """A daily question's new post, and the channel's older daily questions
    that its transaction closed (the caller reveals them and counts them)."""

    post: PostInfo
    older_closed: list[int]


@dataclass(frozen=True)
class CardState:
    """A member's spaced-repetition card for one question (FSRS fields, plus
    how often it was reviewed and missed)."""

    question_id: str
    due: datetime
    state: int
    step: int | None
    stability: float | None
    difficulty: float | None
    last_review: datetime | None
    reviews: int = 0
    misses: int = 0


@dataclass(frozen=True)
class Recall:
    """One attempt at recalling a question: an answer in a quiz or a review."""

    question_id: str
    correct: bool
    seconds_taken: float
    time_limit: float
    at: datetime


@dataclass(frozen=True)
class ReviewSessionInfo:
    """A member's `/quiz review` run: the card on screen and how many are left."""

    id: int
    target: Target
    user_id: str
    step: int
    remaining: int
    question_id: str | None
    option_order: list[int]
    correct_slot: int
    shown_at: datetime
