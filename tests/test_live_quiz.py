"""Live quizzes as a channel experiences them: starting, questions, stop, skip,
the reveal and the final scoreboard, the per-channel deck and bank filters."""

from __future__ import annotations

import asyncio
import random
import re
from datetime import timedelta

import pytest

from bot.chat import ButtonStyle, Target
from bot.quiz.bank import Catalog
from bot.quiz.service import QuizService
from bot.storage.repository import Repository
from tests.conftest import CHANNEL, OTHER_CHANNEL, Host, ranking, shown_options
from tests.fakes.clock import FakeClock
from tests.fakes.recording import RecordingAdapter

BANK_ID = "pytorch-distributed-training"


async def play(host: Host, target: Target = CHANNEL, **args: str | int) -> list[str]:
    """Start a quiz and skip through it; the ids of the questions it showed, in order."""
    before = len(host.adapter.questions(target))
    await host.start(target, **args)
    while (await host.command("skip", target)).text.startswith("Skipped"):
        pass
    return [host.question_of(sent).id for sent in host.adapter.questions(target)[before:]]


def assert_dealt_like_a_deck(quizzes: list[list[str]], pool: list[str]) -> None:
    """The channel sees the whole pool before any question comes back, and a quiz
    never shows a question twice."""
    shown = [question_id for quiz in quizzes for question_id in quiz]
    assert len(shown) > len(pool)
    assert sorted(shown[: len(pool)]) == sorted(pool), "a repeat before the pool was seen"
    for quiz in quizzes:
        assert len(set(quiz)) == len(quiz), f"a quiz repeated a question: {quiz}"


def common_prefix(texts: list[str]) -> str:
    first, last = min(texts), max(texts)
    size = 0
    while size < len(first) and first[size] == last[size]:
        size += 1
    return first[:size]


def new_host(host: Host, seed: int) -> Host:
    """A fresh service (as after a restart) on the same database and clock."""
    service = QuizService(
        host.service.repository, host.catalog, host.clock, rng=random.Random(seed)
    )
    adapter = host.adapter.restarted()
    service.register(adapter)
    return Host(service, adapter, host.catalog, host.clock)


# -- starting -----------------------------------------------------------------


async def test_start_posts_first_question_with_every_option_in_full(
    host: Host, clock: FakeClock
) -> None:
    reply = await host.start(questions=3, seconds=20)

    assert "3 questions" in reply.text and "20 seconds" in reply.text
    [sent] = host.adapter.questions(CHANNEL)
    message = sent.message
    question = host.question_of(sent)
    assert question.prompt in message.body
    assert "1/3" in (message.title or "")
    options = shown_options(message)
    assert list(options) == ["A", "B", "C", "D"]
    assert sorted(options.values()) == sorted(question.options)
    for text in question.options:
        assert text in message.body, "the rich form shows every option in full too"
    assert [button.label for button in message.buttons] == ["A", "B", "C", "D"]
    assert all(not button.disabled for button in message.buttons)
    assert message.deadline == clock.now() + timedelta(seconds=20)


async def test_option_order_is_shuffled_per_posting(host: Host) -> None:
    await host.start(questions=10)
    for _ in range(9):
        await host.command("skip")
    postings = host.adapter.questions(CHANNEL)
    assert len(postings) == 10

    shuffled = 0
    correct_letters = set()
    for sent in postings:
        question = host.question_of(sent)
        shown = list(shown_options(sent.message).values())
        shuffled += shown != list(question.options)
        correct_letters.add(host.correct_letter(sent=sent))
    assert shuffled > 0, "every posting showed the options in bank order"
    assert len(correct_letters) > 1, "the right answer always sat under the same letter"


async def test_same_question_is_shuffled_differently_across_postings(
    repository: Repository, catalog: Catalog, clock: FakeClock
) -> None:
    """A question's display order is drawn per posting, not fixed per question."""
    orders: dict[str, set[tuple[str, ...]]] = {}
    for seed in range(8):
        adapter = RecordingAdapter()
        service = QuizService(repository, catalog, clock, rng=random.Random(seed))
        service.register(adapter)
        host = Host(service, adapter, catalog, clock)
        target = Target("test", "guild-1", f"chan-seed-{seed}")
        await host.start(target, questions=1, tag="ensembles")
        sent = host.current(target)
        shown = tuple(shown_options(sent.message).values())
        orders.setdefault(host.question_of(sent).id, set()).add(shown)
    assert max(len(seen) for seen in orders.values()) > 1, orders


async def test_correctness_is_decided_server_side_not_by_bank_letter_or_button(host: Host) -> None:
    await host.start(questions=10, seconds=30)
    # Find a posting where the right answer is not under the bank's own letter.
    for _ in range(10):
        question = host.question_of(host.current())
        if host.correct_letter() != question.answer:
            break
        await host.command("skip")
    else:
        pytest.fail("the right answer was always under the bank's letter")

    await host.click("follows-screen", host.correct_letter())
    await host.click("follows-bank", question.answer)
    await host.close_current()

    assert (await host.stats("follows-screen")).correct == 1
    assert (await host.stats("follows-bank")).correct == 0


async def test_button_ids_do_not_reveal_the_right_answer(host: Host) -> None:
    await host.start(questions=10)
    for _ in range(9):
        await host.command("skip")

    shapes = set()
    correct_letters = set()
    for sent in host.adapter.questions(CHANNEL):
        question = host.question_of(sent)
        ids = [button.custom_id for button in sent.message.buttons]
        assert len(set(ids)) == len(ids)
        # Within one posting the ids differ only by position, never by correctness.
        prefix = common_prefix(ids)
        shapes.add(tuple(custom_id[len(prefix) :] for custom_id in ids))
        correct_letters.add(host.correct_letter(sent=sent))
        assert {button.style for button in sent.message.buttons} == {ButtonStyle.NEUTRAL}
        for custom_id in ids:
            assert question.id not in custom_id
            assert all(option not in custom_id for option in question.options)
    assert len(correct_letters) > 1
    assert len(shapes) == 1, f"button ids vary with the right answer: {shapes}"


BAD_START_VALUES = [
    ({"questions": "0"}, "questions"),
    ({"questions": "51"}, "questions"),
    ({"seconds": "1"}, "seconds"),
    ({"seconds": "3601"}, "seconds"),
    ({"questions": "ten"}, "questions"),
    ({"questions": "--5"}, "questions"),
    ({"questions": "5x"}, "questions"),
    ({"seconds": "3.5"}, "seconds"),
    ({"seconds": "²"}, "seconds"),
]


async def test_bad_start_values_get_a_private_error_and_post_nothing(host: Host) -> None:
    for args, named in BAD_START_VALUES:
        reply = await host.command("start", options=args)

        assert named in reply.text, args
        assert args[named] in reply.text, f"the error quotes what was typed: {args}"
        assert "went wrong" not in reply.text, args
        assert host.adapter.sent == [], args
    await host.start()  # and no quiz was left half-started


@pytest.mark.parametrize(
    ("questions", "seconds", "posted"), [(1, 2, "1 question,"), (50, 3600, "30 questions")]
)
async def test_start_values_at_the_limits_are_accepted(
    host: Host, questions: int, seconds: int, posted: str
) -> None:
    reply = await host.start(questions=questions, seconds=seconds)
    assert posted in reply.text, "a request beyond the bank size gets the whole bank"
    assert f"{seconds} seconds" in reply.text
    assert len(host.adapter.questions(CHANNEL)) == 1


@pytest.mark.parametrize("name", ["start", "stop", "skip"])
async def test_members_cannot_start_stop_or_skip(host: Host, name: str) -> None:
    if name != "start":
        await host.start(questions=3)
    sent_before = len(host.adapter.sent)

    reply = await host.command(name, user="member", moderator=False)

    assert "moderator" in reply.text.lower()
    assert len(host.adapter.sent) == sent_before, "nothing was posted"
    for sent in host.adapter.sent:
        assert sent.edits == [], "no question was revealed"
    if name != "start":
        assert (await host.answer("member", correct=True)).text.startswith("Locked in")


async def test_one_quiz_per_channel_but_channels_are_independent(host: Host) -> None:
    await host.start(questions=3)

    again = await host.command("start", questions=3)
    assert "already running" in again.text
    assert len(host.adapter.questions(CHANNEL)) == 1

    await host.start(OTHER_CHANNEL, questions=2)
    assert len(host.adapter.questions(OTHER_CHANNEL)) == 1
    await host.answer("u1", correct=True)
    await host.answer("u1", correct=False, target=OTHER_CHANNEL)

    await host.command("stop")
    assert "stopped" in (host.adapter.in_channel(CHANNEL)[-1].message.title or "")
    assert host.adapter.in_channel(OTHER_CHANNEL)[-1].edits == [], "the other quiz goes on"
    await host.close_current(OTHER_CHANNEL)
    assert len(host.adapter.questions(OTHER_CHANNEL)) == 2


async def test_simultaneous_starts_make_one_quiz(host: Host) -> None:
    replies = await asyncio.gather(*(host.command("start", questions=2) for _ in range(5)))

    assert sum(reply.text.startswith("Starting a quiz") for reply in replies) == 1
    assert sum("already running" in reply.text for reply in replies) == 4
    assert len(host.adapter.questions(CHANNEL)) == 1


# -- stop, skip and the end of a quiz -------------------------------------------


async def test_stop_reveals_the_current_question_and_posts_a_stopped_scoreboard(
    host: Host, clock: FakeClock
) -> None:
    await host.start(questions=5, seconds=10)
    await host.answer("u1", correct=True)
    [question] = host.adapter.questions(CHANNEL)

    reply = await host.command("stop")

    assert "stopped" in reply.text.lower()
    assert question.edits, "the open question was revealed"
    assert all(
        button.disabled
        for button in question.latest.buttons
        if button.custom_id.startswith("qm:a:")
    )
    board = host.adapter.sent[-1].message
    assert not board.buttons
    assert "stopped" in (board.title or "").lower()
    assert ranking(board) == [("u1", 15)]
    sent_after_stop = len(host.adapter.sent)

    for _ in range(3):
        clock.advance(600)
        await host.service.tick()
    assert len(host.adapter.sent) == sent_after_stop, "nothing more was posted"
    assert len(host.adapter.questions(CHANNEL)) == 1
    assert "No quiz is running" in (await host.command("stop")).text
    await host.start()  # the channel is free again


async def test_skip_reveals_at_once_and_posts_the_next_question(
    host: Host, clock: FakeClock
) -> None:
    assert "No quiz is running" in (await host.command("skip")).text
    await host.start(questions=2, seconds=60)
    first = host.current()
    late_letter = host.correct_letter()

    reply = await host.command("skip")

    assert reply.text.startswith("Skipped")
    assert all(
        button.disabled for button in first.latest.buttons if button.custom_id.startswith("qm:a:")
    )
    second = host.current()
    assert second is not first
    assert "2/2" in (second.message.title or "")
    assert second.message.deadline == clock.now() + timedelta(seconds=60)
    late = await host.click_on(first, "late", late_letter)
    assert "closed" in late.text

    await host.command("skip")
    assert "Quiz over" in (host.adapter.sent[-1].message.title or "")


async def test_scoreboard_after_the_last_question_shows_top_ten_players_and_accuracy(
    host: Host, clock: FakeClock
) -> None:
    await host.start(questions=1, seconds=5)
    start = clock.now()
    # Five right answers a second apart (15, 14, 13, 12, 11 points), seven wrong ones.
    for second, user in enumerate(["c1", "c2", "c3", "c4", "c5"]):
        clock.set(start + timedelta(seconds=second))
        await host.answer(user, correct=True)
    for user in ["w1", "w2", "w3", "w4", "w5", "w6", "w7"]:
        await host.answer(user, correct=False)
    await host.close_current()

    board = host.adapter.sent[-1].message
    assert "Quiz over" in (board.title or "")
    assert ranking(board) == [
        ("c1", 15),
        ("c2", 14),
        ("c3", 13),
        ("c4", 12),
        ("c5", 11),
        ("w1", 0),
        ("w2", 0),
        ("w3", 0),
        ("w4", 0),
        ("w5", 0),
    ]
    assert "12 players" in board.text
    assert "42% of answers correct" in board.text  # 5 of 12
    await host.start()  # the finished quiz no longer blocks the channel


async def test_scoreboard_when_nobody_answered(host: Host) -> None:
    await host.start(questions=1)
    await host.close_current()
    board = host.adapter.sent[-1].message
    assert "Quiz over" in (board.title or "")
    assert ranking(board) == []
    assert "Nobody answered" in board.text


# -- the reveal -------------------------------------------------------------------


async def test_reveal_shows_answer_explanation_distribution_and_first_correct(
    host: Host, clock: FakeClock
) -> None:
    await host.start(questions=2, seconds=10)
    sent = host.current()
    question = host.question_of(sent)
    right = host.correct_letter()
    wrong = [letter for letter in "ABCD" if letter != right]
    start = clock.now()

    await host.click("early-but-wrong", wrong[0])
    clock.set(start + timedelta(seconds=1))
    await host.click("first-right", right)
    clock.set(start + timedelta(seconds=2))
    await host.click("second-right", right)
    await host.click("also-wrong", wrong[1])
    await host.close_current()

    reveal = sent.latest
    assert reveal is not sent.message, "the question message was edited"
    # The letters, and a way to tell the moderators something is wrong with it.
    assert [button.label for button in reveal.buttons] == ["A", "B", "C", "D", "Report a problem"]
    assert all(button.disabled for button in reveal.buttons if button.custom_id.startswith("qm:a:"))
    styled = {button.label: button.style for button in reveal.buttons[:4]}
    assert styled.pop(right) is ButtonStyle.SUCCESS
    assert set(styled.values()) == {ButtonStyle.NEUTRAL}
    assert question.options[question.answer_index] in reveal.text
    assert question.explanation in reveal.text
    expected = {right: (2, 50), wrong[0]: (1, 25), wrong[1]: (1, 25), wrong[2]: (0, 0)}
    for letter, (count, percent) in expected.items():
        line = rf"^{letter}\b.*\b{count} \({percent}%\)$"
        assert re.search(line, reveal.text, re.MULTILINE), f"{letter}: {reveal.text}"
    assert "4 answers" in reveal.text
    assert "First correct: <@first-right>" in reveal.text
    assert "<@early-but-wrong>" not in reveal.text
    # Each member who got it right, with the points this question gave them
    # (10, plus round(5 × 9/10) and round(5 × 8/10) for speed); nobody else.
    [points] = [field.value for field in reveal.fields if field.name == "Points"]
    assert points.splitlines() == ["<@first-right> +14", "<@second-right> +14"]


async def test_reveal_names_the_ten_who_earned_most_and_counts_the_rest(
    host: Host, clock: FakeClock
) -> None:
    """Thirteen members right, one second apart, and one wrong: the reveal
    lists the ten quickest (most points; a tie goes to the quicker) and says
    how many more scored; the wrong answer is not among them."""
    await host.start(questions=2, seconds=20)
    sent = host.current()
    start = clock.now()
    await host.answer("wrong-first", correct=False)
    for second in range(13):
        clock.set(start + timedelta(seconds=second))
        await host.answer(f"right-{second:02d}", correct=True)
    await host.close_current()

    [points] = [field.value for field in sent.latest.fields if field.name == "Points"]
    lines = points.splitlines()
    assert [line.split(" +")[0] for line in lines[:10]] == [
        f"<@right-{second:02d}>" for second in range(10)
    ]
    earned = [int(line.split(" +")[1]) for line in lines[:10]]
    assert earned == sorted(earned, reverse=True) and earned[0] > earned[-1]
    assert lines[10:] == ["…and 3 more"]


async def test_reveal_of_an_unanswered_question(host: Host) -> None:
    await host.start(questions=2)
    sent = host.current()
    await host.close_current()

    reveal = sent.latest
    assert all(button.disabled for button in reveal.buttons if button.custom_id.startswith("qm:a:"))
    assert "0 answers" in reveal.text
    for letter in "ABCD":
        assert re.search(rf"^{letter}\b.*\b0 \(0%\)$", reveal.text, re.MULTILINE)
    assert "<@" not in reveal.text


# -- the deck ---------------------------------------------------------------------


async def test_no_question_repeats_in_a_tag_pool_until_all_were_seen(
    host: Host, catalog: Catalog
) -> None:
    pool = catalog.pool(tag="memory")
    assert len(pool) == 4
    quizzes = [await play(host, questions=3, tag="memory") for _ in range(2)]
    restarted = new_host(host, seed=99)
    quizzes += [await play(restarted, questions=3, tag="memory") for _ in range(2)]

    assert [len(quiz) for quiz in quizzes] == [3, 3, 3, 3]
    assert_dealt_like_a_deck(quizzes, pool)


async def test_the_whole_bank_is_dealt_before_any_repeat_across_restarts(
    host: Host, catalog: Catalog
) -> None:
    pool = catalog.pool()
    assert len(pool) == 30
    quizzes = [await play(host, questions=7) for _ in range(2)]
    restarted = new_host(host, seed=123)
    quizzes += [await play(restarted, questions=7) for _ in range(3)]

    assert [len(quiz) for quiz in quizzes] == [7] * 5
    assert_dealt_like_a_deck(quizzes, pool)


async def test_decks_are_per_channel(host: Host, catalog: Catalog) -> None:
    pool = catalog.pool(tag="memory")
    here = await play(host, questions=4, tag="memory")
    there = await play(host, OTHER_CHANNEL, questions=4, tag="memory")
    assert sorted(here) == sorted(there) == sorted(pool)


async def test_questions_of_a_stopped_quiz_that_were_never_shown_stay_in_the_deck(
    host: Host, catalog: Catalog
) -> None:
    pool = catalog.pool()
    await host.start(questions=20)
    first = host.question_of(host.current()).id
    await host.command("stop")

    rest = await play(host, questions=29)

    assert sorted(rest) == sorted(set(pool) - {first}), "the next quiz deals the unseen ones"


# -- banks and tags -----------------------------------------------------------------


async def test_unknown_bank_is_refused_naming_the_banks(host: Host) -> None:
    reply = await host.command("start", bank="no-such-bank")
    assert "no-such-bank" in reply.text
    assert BANK_ID in reply.text
    assert host.adapter.sent == []


async def test_tag_without_questions_is_refused(host: Host) -> None:
    reply = await host.command("start", tag="cooking")
    assert "cooking" in reply.text
    assert "No questions" in reply.text
    assert host.adapter.sent == []


async def test_bank_and_tag_filters_choose_the_questions(host: Host, catalog: Catalog) -> None:
    reply = await host.start(questions=5, bank=BANK_ID, tag="ensembles")
    assert "2 questions" in reply.text, "only two questions carry the tag"
    shown = [host.question_of(host.current())]
    await host.command("skip")
    shown.append(host.question_of(host.current()))
    assert all("ensembles" in question.tags for question in shown)
    assert {question.id for question in shown} == set(catalog.pool(tag="ensembles"))
