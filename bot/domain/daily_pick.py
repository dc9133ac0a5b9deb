"""The adaptive daily pick: the channel as a learner.

A simpler rule than FSRS, since a channel's "answer" is a share of members:
- a daily post the channel answered under half right is a *miss*;
- a missed question comes back `3 · 2^s` days after its last post, where `s`
  counts its posts at half right or better since the last miss (3, 6, 12
  days); after three such posts in a row it has faded out;
- nothing is ever posted within 3 days of its last post;
- on a day with nothing due, a question the channel has not seen; when none
  is left, the one seen longest ago (questions it keeps getting right last).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

MISSED_BELOW = 0.5
MIN_GAP = timedelta(days=3)
FADED_AFTER = 3  # posts at half right or better since the last miss


@dataclass(frozen=True)
class PastPost:
    question_id: str
    posted_at: datetime
    share: float | None  # right answers / answers; None: open, or nobody answered


@dataclass(frozen=True)
class Pick:
    question_id: str
    due_share: float | None = None  # set when it is back for review: its last share right
    due_posted: datetime | None = None  # and when that post was made


@dataclass
class _Record:
    last_posted: datetime
    missed: bool = False
    since_miss: int = 0
    last_share: float | None = None
    last_scored: datetime | None = None

    def due_at(self) -> datetime | None:
        if not self.missed or self.since_miss >= FADED_AFTER:
            return None
        return self.last_posted + MIN_GAP * (1 << self.since_miss)


def _records(history: Sequence[PastPost]) -> dict[str, _Record]:
    records: dict[str, _Record] = {}
    for post in sorted(history, key=lambda p: p.posted_at):
        record = records.get(post.question_id)
        if record is None:
            record = records[post.question_id] = _Record(post.posted_at)
        record.last_posted = max(record.last_posted, post.posted_at)
        if post.share is None:
            continue
        record.last_share, record.last_scored = post.share, post.posted_at
        if post.share < MISSED_BELOW:
            record.missed, record.since_miss = True, 0
        elif record.missed:
            record.since_miss += 1
    return records


def adaptive_pick(
    pool: Sequence[str], history: Sequence[PastPost], now: datetime, rng: random.Random
) -> Pick:
    """Today's question from `pool` (not empty) for a channel with this history."""
    records = _records(history)
    rested = [q for q in pool if q not in records or now - records[q].last_posted >= MIN_GAP]
    due = []
    for question_id in rested:
        record = records.get(question_id)
        when = record.due_at() if record else None
        if record is not None and when is not None and when <= now:
            due.append((record.last_share or 0.0, when, question_id))
    if due:
        share, _, question_id = min(due)  # the worst known first, then the longest due
        return Pick(question_id, share, records[question_id].last_scored)
    unseen = [q for q in pool if q not in records]
    if unseen:
        return Pick(rng.choice(unseen))
    # Everything seen: not the ones waiting for their review date, the longest rested first.
    waiting = {q for q in rested if (records[q].due_at() or now) > now}
    candidates = [q for q in rested if q not in waiting] or rested or list(pool)
    return Pick(min(candidates, key=lambda q: (records[q].last_posted, q)))
