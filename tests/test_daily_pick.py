"""The adaptive daily pick over weeks of daily posts with an injected clock,
on SQLite and PostgreSQL: a question the channel missed comes back after 3
days (never sooner) and before any it got right, its interval grows each
time the channel gets it right, its footer says why, and `shuffle` stays
the default."""

from __future__ import annotations

import itertools
import random
from datetime import UTC, datetime, timedelta

from bot.domain.daily_pick import PastPost, adaptive_pick
from tests.conftest import Host, run_until

START = datetime(2026, 11, 2, 8, 0, tzinfo=UTC)  # a Monday, before the 09:00 post
MEMBERS = ("ana", "bo", "cy")


async def daily_run(host: Host, days: int, wrong: dict[str, int]) -> list[tuple[int, str, str]]:
    """`days` days of a 09:00 UTC daily question; everyone answers it, wrongly
    while the question's entry in `wrong` (times still to miss) is above zero.
    Returns (day, question id, footer) of each post."""
    host.clock.set(START)
    await host.command("schedule", options={"action": "daily", "time": "09:00"})
    posts = []
    first_seen: dict[str, int] = {}
    for day in range(days):
        await run_until(host, START + timedelta(days=day, hours=2))
        sent = host.current()
        question = host.question_of(sent)
        posts.append((day, question.id, sent.message.footer or ""))
        if not first_seen:
            # The first question of the run is the one the channel keeps missing.
            wrong.setdefault(question.id, 99)
        if day == 1:
            wrong.setdefault(question.id, 1)  # missed once, then got right
        first_seen.setdefault(question.id, day)
        miss = wrong.get(question.id, 0) > 0
        if miss:
            wrong[question.id] -= 1
        letter = host.wrong_letter() if miss else host.correct_letter()
        for user in MEMBERS:
            await host.click(user, letter)
    return posts


def days_of(posts: list[tuple[int, str, str]], question_id: str) -> list[int]:
    return [day for day, shown, _ in posts if shown == question_id]


async def test_a_missed_question_comes_back_after_three_days_and_before_known_ones(
    host: Host,
) -> None:
    changed = await host.command("config", key="daily-pick", value="adaptive")
    assert "adaptive" in changed.text
    wrong: dict[str, int] = {}
    posts = await daily_run(host, 56, wrong)
    always, once = posts[0][1], posts[1][1]

    # Missed every time: back 3 days after each post, never sooner.
    assert days_of(posts, always)[:5] == [0, 3, 6, 9, 12]
    # Missed once, then right each time: 3, then 6, then 12 days; then it fades.
    assert days_of(posts, once)[:4] == [1, 4, 10, 22]
    # Nothing is ever posted within 3 days of its last post.
    for question_id in {shown for _, shown, _ in posts}:
        shown_on = days_of(posts, question_id)
        gaps = [b - a for a, b in itertools.pairwise(shown_on)]
        assert all(gap >= 3 for gap in gaps), (question_id, gaps)
    # A question the channel got right comes back only once no unseen one is left.
    first_repeat = next(
        day
        for day, question_id, _ in posts
        if question_id not in wrong and days_of(posts, question_id)[0] < day
    )
    assert {q for day, q, _ in posts if day < first_repeat} == set(host.catalog.pool())
    # The post says why it is back.
    returned = next(footer for day, shown, footer in posts if shown == always and day == 3)
    assert returned.startswith("back for review: 0 % right on 2 Nov")
    assert "back for review" not in posts[2][2]
    shown = await host.command("schedule", options={"action": "show"}, moderator=False)
    assert "Daily pick: adaptive" in shown.text


async def test_shuffle_stays_the_default_and_deals_every_question_once(host: Host) -> None:
    settings = await host.command("config", options={})
    assert "Daily pick: shuffle" in settings.text
    posts = await daily_run(host, 12, {})
    seen = [question_id for _, question_id, _ in posts]
    assert len(set(seen)) == len(seen)
    assert not any("back for review" in footer for _, _, footer in posts)


def test_the_rule_waits_three_days_and_doubles_after_each_right_return() -> None:
    day = timedelta(days=1)
    history = [PastPost("missed", START, 0.0), PastPost("fine", START + day, 1.0)]
    pool = ["missed", "fine", "new"]
    rng = random.Random(1)
    assert adaptive_pick(pool, history, START + 2 * day, rng).question_id == "new"
    due = adaptive_pick(pool, history, START + 3 * day, rng)
    assert (due.question_id, due.due_share) == ("missed", 0.0)
    history.append(PastPost("missed", START + 3 * day, 0.8))
    assert adaptive_pick(pool, history, START + 8 * day, rng).question_id == "new"
    assert adaptive_pick(pool, history, START + 9 * day, rng).question_id == "missed"
