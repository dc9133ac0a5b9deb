"""A restart in the middle of a quiz: deadlines live in the database, so a new
service closes what the old one left open and carries the quiz on."""

from __future__ import annotations

import asyncio

import pytest
from sqlalchemy import func, select, update

from bot.chat import DeliveryError
from bot.domain.records import QuizInfo
from bot.quiz.buttons import parse_answer_custom_id
from bot.quiz.delivery import HANDOVER, PUBLISH_LEASE
from bot.storage.db import Database
from bot.storage.liveness import LIVENESS_CLASS, process_key
from bot.storage.models import Post
from bot.storage.process import PROCESS
from bot.storage.repository import Repository
from tests.conftest import CHANNEL, Host, restart
from tests.fakes.clock import FakeClock
from tests.fakes.recording import Sent


async def running_quiz(repository: Repository, clock: FakeClock) -> QuizInfo:
    channel = await repository.channels.channel(CHANNEL, clock.now())
    quiz = await repository.quizzes.running_quiz(channel.id)
    assert quiz is not None
    return quiz


async def test_a_new_service_closes_the_open_question_once_and_posts_the_next(
    host: Host, clock: FakeClock
) -> None:
    await host.start(questions=3, seconds=30)
    old = host.current()
    right = host.correct_letter()
    await host.answer("before", correct=True)
    after = restart(host)

    # Still open after the restart: a click through the new service counts.
    assert (await after.click_on(old, "after", right)).text.startswith("Locked in")
    clock.advance(31)
    await asyncio.gather(after.service.tick(), after.service.tick())
    await after.service.tick()

    [reveal] = after.adapter.edits_of(old.message_id)
    assert all(button.disabled for button in reveal.buttons if button.custom_id.startswith("qm:a:"))
    assert "2 answers" in reveal.text
    assert "<@before>" in reveal.text
    [following] = after.adapter.questions(CHANNEL)
    assert "2/3" in (following.message.title or "")
    assert following.message_id != old.message_id
    assert old.edits == [], "the old process's adapter was not used"
    assert (await after.answer("after", correct=True)).text.startswith("Locked in")
    assert "closed" in (await after.click_on(old, "later", right)).text


async def test_another_processes_question_is_left_to_it_until_it_is_late_then_taken_over(
    host: Host, clock: FakeClock, database: Database
) -> None:
    """Another process on the database posted the question: at its deadline this
    one leaves it to its maker; still open a handover later, its maker is gone,
    and this one reveals it and carries the quiz on, once. (A SQLite file has
    one process, which takes every post as its own.)"""
    if not host.service.repository.shared:
        pytest.skip("a SQLite file serves one process")
    await host.start(questions=2, seconds=30)
    first = host.current()
    async with database.writer.begin() as connection:
        await connection.execute(update(Post).values(owner="another process"))
    clock.advance(31)
    await host.service.tick()
    assert host.adapter.edits_of(first.message_id) == []
    assert len(host.adapter.questions(CHANNEL)) == 1

    clock.advance(HANDOVER.total_seconds())
    await asyncio.gather(host.service.tick(), host.service.tick())
    [reveal] = host.adapter.edits_of(first.message_id)
    assert "(closed)" in (reveal.title or "")
    assert len(host.adapter.questions(CHANNEL)) == 2


async def test_a_question_overdue_at_start_up_closes_on_the_first_tick(
    host: Host, clock: FakeClock
) -> None:
    await host.start(questions=2, seconds=30)
    old = host.current()
    clock.advance(3600)  # the bot was down for an hour
    after = restart(host)

    await after.service.tick()

    assert len(after.adapter.edits_of(old.message_id)) == 1
    [following] = after.adapter.questions(CHANNEL)
    assert "2/2" in (following.message.title or "")
    # The next question gets its full time from now, not from the old schedule.
    assert (await after.answer("fresh", correct=True)).text.startswith("Locked in")
    await after.close_current()
    assert "Quiz over" in (after.adapter.sent[-1].message.title or "")
    assert await after.leaderboard() == [("fresh", 15)]


async def test_a_quiz_stalled_between_close_and_next_question_is_resumed(
    host: Host, repository: Repository, clock: FakeClock
) -> None:
    await host.start(questions=3, seconds=30)
    quiz = await running_quiz(repository, clock)
    [open_post] = await repository.posts.open_posts(quiz.id)
    # The old process closed the question and died before posting the next one.
    assert await repository.posts.claim_close(open_post, clock.now())
    after = restart(host)

    await after.service.tick()
    await after.service.tick()

    [following] = after.adapter.questions(CHANNEL)
    assert "2/3" in (following.message.title or "")
    await after.close_current()
    assert "3/3" in (after.current().message.title or "")
    await after.close_current()
    assert "Quiz over" in (after.adapter.sent[-1].message.title or "")


async def test_a_quiz_stopped_before_the_restart_stays_stopped(
    host: Host, clock: FakeClock
) -> None:
    await host.start(questions=3, seconds=30)
    await host.command("stop")
    after = restart(host)

    clock.advance(3600)
    await after.service.tick()

    assert after.adapter.sent == []
    assert after.adapter.edits == []


async def test_a_reveal_that_fails_for_a_moment_is_retried_once_and_the_quiz_goes_on(
    host: Host, clock: FakeClock
) -> None:
    await host.start(questions=2, seconds=30)
    first = host.current()
    await host.answer("ana", correct=True)
    host.adapter.edit_failures.append(DeliveryError("platform hiccup"))
    await host.close_current()

    assert host.adapter.edits_of(first.message_id) == [], "the failed edit was recorded"
    assert len(host.adapter.questions(CHANNEL)) == 2, "a failed reveal held up the quiz"

    clock.advance(1)
    await host.service.tick()
    [reveal] = host.adapter.edits_of(first.message_id)
    assert "First correct: <@ana>" in reveal.text

    await host.service.tick()
    assert len(host.adapter.edits_of(first.message_id)) == 1, "revealed twice"


async def test_a_message_that_is_gone_is_not_edited_again(host: Host, clock: FakeClock) -> None:
    await host.start(questions=2, seconds=30)
    first = host.current()
    host.adapter.edit_failures.append(DeliveryError("unknown message", permanent=True))
    await host.close_current()
    clock.advance(1)
    await host.service.tick()
    assert host.adapter.edits_of(first.message_id) == []


async def test_a_crash_between_closing_and_revealing_is_repaired_after_restart(
    host: Host, clock: FakeClock
) -> None:
    await host.start(questions=2, seconds=30)
    first = host.current()
    await host.answer("ana", correct=False)
    post = await host.service.posting.post(_post_id(first))
    assert post is not None
    # The old process claimed the close and died before editing or moving on.
    clock.advance(31)
    assert await host.service.repository.posts.claim_close(post.id, clock.now())

    after = restart(host)
    await after.service.tick()
    [reveal] = after.adapter.edits_of(first.message_id)
    assert "Nobody got it right." in reveal.text
    assert len(after.adapter.questions(CHANNEL)) == 1, "the quiz did not carry on"


def _post_id(sent: Sent) -> int:
    parsed = parse_answer_custom_id(sent.message.buttons[0].custom_id)
    assert parsed is not None
    return parsed[0]


async def test_a_post_in_flight_is_taken_over_only_once_its_senders_lock_is_gone(
    host: Host, repository: Repository, clock: FakeClock, database: Database
) -> None:
    """A post another process is still sending (no message yet, its lease a
    minute off) is left to it while that process holds its liveness lock, and
    is due at once, to be claimed once, when the lock is gone: the taker then
    owns it. (A SQLite file has one process: there the lease decides.)"""
    if not host.service.repository.shared:
        pytest.skip("a SQLite file serves one process")
    await host.start(questions=2, seconds=30)
    quiz = await running_quiz(repository, clock)
    [post_id] = await repository.posts.open_posts(quiz.id)
    now = clock.now()
    sender = "sender:1:abcdef"
    async with database.writer.begin() as connection:
        await connection.execute(
            update(Post)
            .where(Post.id == post_id)
            .values(message_id=None, publish_retry_at=now + PUBLISH_LEASE, owner=sender)
        )
    alive = await database.writer.connect()  # the sender's own connection
    try:
        await alive.execute(select(func.pg_advisory_lock(LIVENESS_CLASS, process_key(sender))))
        assert await repository.posts.due_publishes(now, [CHANNEL.platform]) == []
        assert await repository.posts.claim_publish(post_id, now, now + PUBLISH_LEASE) is None
    finally:
        await alive.invalidate()  # its connection closes, as when its process is killed
        await alive.close()

    assert await repository.posts.due_publishes(now, [CHANNEL.platform]) == [(post_id, quiz.id)]
    lease = now + PUBLISH_LEASE
    claims = await asyncio.gather(
        repository.posts.claim_publish(post_id, now, lease),
        repository.posts.claim_publish(post_id, now, lease),
    )
    assert sum(claim is not None for claim in claims) == 1
    async with database.writer.connect() as connection:
        owner = await connection.scalar(select(Post.owner).where(Post.id == post_id))
    assert owner == PROCESS
    # Owned by a live process now (this one): nobody else finds it due.
    assert await repository.posts.due_publishes(now, [CHANNEL.platform]) == []
