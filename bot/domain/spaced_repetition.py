"""Study rules as pure functions: how an answer rates a member's review card, and
the card's next due time by FSRS (the `fsrs` package).

Wrong is Again, right is Good, and right within the first fifth of the time
is Easy. Every time comes from the recall (the injected clock), never from
the wall clock.
"""

from __future__ import annotations

from datetime import timedelta

from fsrs import Card, Rating, Scheduler, State

from bot.domain.records import CardState, Recall

MIN_REVIEW_COUNT, MAX_REVIEW_COUNT = 1, 50
DEFAULT_REVIEW_COUNT = 10
# A review card has no deadline; this is the time its Easy fifth is taken from
# (the default seconds of a live question).
REVIEW_SECONDS = 30.0
EASY_SHARE = 0.2

# One short learning step: a miss comes back within minutes, a first right
# answer graduates at once and is due days later. No fuzzing, so members who
# answered alike see the same schedule (and the tests can say when).
SCHEDULER = Scheduler(
    learning_steps=(timedelta(minutes=10),),
    relearning_steps=(timedelta(minutes=10),),
    enable_fuzzing=False,
)


def rating(correct: bool, seconds_taken: float, time_limit: float) -> Rating:
    if not correct:
        return Rating.Again
    if time_limit > 0 and seconds_taken <= EASY_SHARE * time_limit:
        return Rating.Easy
    return Rating.Good


def _fsrs_card(card: CardState | None, recall: Recall) -> Card:
    if card is None:
        # An explicit id and due time: fsrs would otherwise read the wall clock.
        return Card(card_id=0, due=recall.at)
    return Card(
        card_id=0,
        state=State(card.state),
        step=card.step,
        stability=card.stability,
        difficulty=card.difficulty,
        due=card.due,
        last_review=card.last_review,
    )


def review(card: CardState | None, recall: Recall) -> CardState:
    """The card after this recall (a new card for a first answer)."""
    at = recall.at
    if card is not None and card.last_review is not None and card.last_review > at:
        # Answers can be applied out of order (a daily question closing after
        # a later live one): never schedule backwards in time.
        at = card.last_review
    grade = rating(recall.correct, recall.seconds_taken, recall.time_limit)
    scheduled, _ = SCHEDULER.review_card(_fsrs_card(card, recall), grade, at)
    return CardState(
        question_id=recall.question_id,
        due=scheduled.due,
        state=int(scheduled.state),
        step=scheduled.step,
        stability=scheduled.stability,
        difficulty=scheduled.difficulty,
        last_review=scheduled.last_review,
        reviews=(card.reviews if card else 0) + 1,
        misses=(card.misses if card else 0) + (0 if recall.correct else 1),
    )


def review_count(value: str | None) -> int | None:
    """`/quiz review [count]`: 1–50, 10 if not given; None if out of range or not a number."""
    if value is None or not value.strip():
        return DEFAULT_REVIEW_COUNT
    try:
        count = int(value)
    except ValueError:
        return None
    return count if MIN_REVIEW_COUNT <= count <= MAX_REVIEW_COUNT else None
