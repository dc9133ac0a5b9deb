"""Answer clicks: one answer per member, closed and unknown questions, scoring."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest

from bot.chat import Interaction, Target
from bot.domain.records import NewAnswer
from bot.quiz import buttons
from bot.quiz.buttons import parse_answer_custom_id
from tests.conftest import CHANNEL, OTHER_CHANNEL, Host, ranking
from tests.fakes.clock import FakeClock


async def test_twenty_simultaneous_clicks_by_one_member_count_once(host: Host) -> None:
    await host.start(questions=1, seconds=20)
    sent = host.current()
    right = host.correct_letter()

    replies = await asyncio.gather(*(host.click("eager", right) for _ in range(20)))

    texts = [reply.text for reply in replies]
    assert sum(text.startswith("Locked in") for text in texts) == 1, texts
    assert sum("already answered" in text for text in texts) == 19, texts
    await host.close_current()
    assert "1 answer." in sent.latest.text
    stats = await host.stats("eager")
    assert (stats.answered, stats.correct, stats.points) == (1, 1, 15)


async def test_the_first_of_simultaneous_clicks_on_different_letters_is_the_answer(
    host: Host,
) -> None:
    await host.start(questions=1, seconds=20)
    sent = host.current()

    replies = await asyncio.gather(*(host.click("torn", letter) for letter in "ABCD" * 5))

    [locked] = [reply.text for reply in replies if reply.text.startswith("Locked in")]
    kept = locked.removeprefix("Locked in ")[0]
    assert kept == "A", "the first click sent is the one that counts"
    others = [reply.text for reply in replies if reply.text != locked]
    assert len(others) == 19
    assert all(f"already answered {kept}" in text for text in others), others
    await host.close_current()
    assert "1 answer." in sent.latest.text
    stats = await host.stats("torn")
    assert stats.correct == (1 if kept == host.correct_letter(sent=sent) else 0)


async def test_a_second_click_does_not_change_the_answer(host: Host) -> None:
    await host.start(questions=1, seconds=20)
    wrong, right = host.wrong_letter(), host.correct_letter()

    await host.answer("fickle", correct=False)
    again = await host.click("fickle", right)

    assert f"already answered {wrong}" in again.text
    await host.close_current()
    stats = await host.stats("fickle")
    assert (stats.answered, stats.correct, stats.points) == (1, 0, 0)


async def test_fifty_members_clicking_at_once_are_all_counted(host: Host) -> None:
    await host.start(questions=1, seconds=20)
    sent = host.current()
    users = [f"user-{n:02d}" for n in range(50)]
    letters = ["ABCD"[n % 4] for n in range(50)]

    replies = await asyncio.gather(
        *(host.click(user, letter) for user, letter in zip(users, letters, strict=True))
    )

    for reply, letter in zip(replies, letters, strict=True):
        assert reply.text.startswith(f"Locked in {letter}"), reply.text
    await host.close_current()
    assert "50 answers" in sent.latest.text
    for letter, count in (("A", 13), ("B", 13), ("C", 12), ("D", 12)):
        assert f" {count} (" in _line(sent.latest.text, letter)
    assert "50 players" in host.adapter.sent[-1].message.text


def _line(text: str, letter: str) -> str:
    """The distribution line for a letter in a reveal."""
    [line] = [line for line in text.splitlines() if line.startswith(f"{letter} ")]
    return line


# -- closed, unknown and forged ----------------------------------------------------


async def test_click_after_the_reveal_is_closed_and_not_stored(host: Host) -> None:
    await host.start(questions=2, seconds=20)
    first = host.current()
    right = host.correct_letter()
    await host.close_current()

    reply = await host.click_on(first, "latecomer", right)

    assert "closed" in reply.text
    assert right in reply.text, "the reply tells the right answer once it is public"
    stats = await host.stats("latecomer")
    assert (stats.answered, stats.points) == (0, 0)


async def test_click_after_the_deadline_but_before_the_timer_fired_is_closed(
    host: Host, clock: FakeClock
) -> None:
    await host.start(questions=1, seconds=20)
    sent = host.current()
    clock.advance(20)

    reply = await host.click("slow", host.correct_letter())

    assert "closed" in reply.text
    await host.service.tick()
    assert "0 answers" in sent.latest.text
    assert (await host.stats("slow")).answered == 0


async def test_click_after_the_quiz_was_stopped_is_closed(host: Host) -> None:
    await host.start(questions=3, seconds=20)
    sent = host.current()
    await host.command("stop")

    reply = await host.click_on(sent, "after-stop", "A")

    assert "closed" in reply.text
    assert (await host.stats("after-stop")).answered == 0


async def test_forged_or_unknown_button_ids_are_unknown_questions(host: Host) -> None:
    await host.start(questions=1, seconds=20)
    real = host.current().message.buttons[0].custom_id
    parsed = buttons.parse_answer_custom_id(real)
    assert parsed is not None
    post_id, _ = parsed
    forged = [
        "",
        "garbage",
        real + ":1",
        real.replace(str(post_id), "x"),
        buttons.answer_custom_id(post_id + 1000, 0),
        buttons.answer_custom_id(post_id, 4),
        buttons.answer_custom_id(post_id, 99),
        buttons.answer_custom_id(10**30, 0),
    ]

    for custom_id in forged:
        reply = await host.service.handle_click(Interaction(CHANNEL, "forger", custom_id))
        assert "don't know that question" in reply.text, custom_id

    assert (await host.stats("forger")).answered == 0
    # The forgeries did not use up the member's one answer.
    assert (await host.answer("forger", correct=True)).text.startswith("Locked in")


@pytest.mark.parametrize(
    "elsewhere", [OTHER_CHANNEL, Target("slack", "guild-1", CHANNEL.channel)], ids=str
)
async def test_a_button_clicked_from_another_channel_is_unknown(
    host: Host, elsewhere: Target
) -> None:
    await host.start(questions=1, seconds=20)
    custom_id = host.adapter.button_id(CHANNEL, host.correct_letter())

    reply = await host.service.handle_click(Interaction(elsewhere, "roamer", custom_id))

    assert "don't know that question" in reply.text
    await host.close_current()
    assert "0 answers" in host.adapter.questions(CHANNEL)[0].latest.text


# -- scoring ------------------------------------------------------------------------


# Seconds after posting → points, with 20 seconds to answer: 10 + round(5 × left / 20).
SPEED_TABLE = {
    0.0: 15,  # 20 s left: 5
    1.0: 15,  # 19 s left: 4.75 rounds to 5
    4.0: 14,  # 16 s left: 4
    8.0: 13,  # 12 s left: 3
    12.0: 12,  # 8 s left: 2
    13.0: 12,  # 7 s left: 1.75 rounds to 2
    16.0: 11,  # 4 s left: 1
    19.0: 10,  # 1 s left: 0.25 rounds to 0
    19.9: 10,
}


async def test_a_right_answer_scores_ten_plus_a_speed_bonus(host: Host, clock: FakeClock) -> None:
    await host.start(questions=1, seconds=20)
    posted = clock.now()
    for after in SPEED_TABLE:
        clock.set(posted + timedelta(seconds=after))
        await host.answer(f"after-{after}", correct=True)
    await host.close_current()

    for after, points in SPEED_TABLE.items():
        stats = await host.stats(f"after-{after}")
        assert (stats.correct, stats.points) == (1, points), f"{after} s after posting"
    board = dict(await host.leaderboard())
    assert board == {f"after-{after}": points for after, points in SPEED_TABLE.items()}


async def test_a_wrong_answer_scores_nothing_however_fast(host: Host) -> None:
    await host.start(questions=1, seconds=20)
    await host.answer("hasty", correct=False)
    await host.close_current()

    stats = await host.stats("hasty")
    assert (stats.answered, stats.correct, stats.points) == (1, 0, 0)
    assert await host.leaderboard() == [("hasty", 0)]


async def test_points_add_up_over_a_quiz(host: Host, clock: FakeClock) -> None:
    await host.start(questions=3, seconds=10)
    await host.answer("steady", correct=True)  # 10 s left: 15
    await host.close_current()
    clock.advance(4)
    await host.answer("steady", correct=True)  # 6 s left: 10 + 3
    await host.close_current()
    await host.answer("steady", correct=False)  # 0
    await host.close_current()

    stats = await host.stats("steady")
    assert (stats.answered, stats.correct, stats.points) == (3, 2, 28)
    assert ranking(host.adapter.sent[-1].message) == [("steady", 28)]


async def test_one_batch_stores_only_first_clicks_on_open_posts_before_they_close(
    host: Host,
) -> None:
    """The store's own rule for a batch, the same on SQLite (checked in its
    transaction) and on PostgreSQL (checked inside the one INSERT)."""
    repository = host.service.repository
    await host.start(questions=1, seconds=20)
    closed_id, _ = parse_answer_custom_id(host.adapter.button_id(CHANNEL, "A")) or (0, 0)
    await host.close_current()
    await host.start(questions=1, seconds=20)
    open_id, _ = parse_answer_custom_id(host.adapter.button_id(CHANNEL, "A")) or (0, 0)
    closed, still_open = (
        await repository.posts.post(closed_id),
        await repository.posts.post(open_id),
    )
    assert closed is not None and still_open is not None and closed_id != open_id
    now = host.clock.now()
    late = still_open.closes_at + timedelta(seconds=1)
    rows = [
        NewAnswer(still_open, "ann", 0, True, 10, now),
        NewAnswer(still_open, "ann", 1, False, 0, now),  # a double click: the first counts
        NewAnswer(closed, "bob", 0, True, 10, now),  # its question has closed
        NewAnswer(still_open, "cy", 0, True, 10, late),  # after the closing time
        NewAnswer(still_open, "dee", 2, False, 0, now),
    ]
    assert await repository.answers.record_answers(rows) == [True, False, False, False, True]
    assert await repository.answers.answer_count(open_id) == 2
    assert await repository.answers.answer_slot(open_id, "ann") == 0
    assert await repository.answers.answer_count(closed_id) == 0
    # Stored once: the same clicks again count for nobody.
    assert await repository.answers.record_answers(rows) == [False] * 5
