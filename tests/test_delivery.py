"""Posts that meet passing failures are retried, never lost and never doubled;
a reveal happens once; one channel's hanging call holds up no other channel.

Driven through the service with the recording adapter and an injected clock.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import timedelta

import pytest

from bot.chat import DeliveryError, OutMessage, Target
from bot.quiz import delivery, texts
from bot.quiz.service import QuizService
from tests.conftest import CHANNEL, OTHER_CHANNEL, Host, restart, run_until
from tests.fakes.clock import FakeClock
from tests.fakes.recording import RecordingAdapter


def passing_failure() -> DeliveryError:
    return DeliveryError("Slack said 503", permanent=False)


def fail_questions(times: int) -> Callable[[Target, OutMessage], Exception | None]:
    """A send fault: the next `times` question posts fail for a moment."""
    left = [times]

    def fault(_target: Target, message: OutMessage) -> Exception | None:
        if message.buttons and left[0] > 0:
            left[0] -= 1
            return passing_failure()
        return None

    return fault


async def until(
    condition: Callable[[], bool], seconds: float = 5.0, clock: FakeClock | None = None
) -> None:
    """Wait (in real time, bounded) for work running in the background; with
    `clock`, a tenth of a second of its time passes on each look."""
    async with asyncio.timeout(seconds):
        while not condition():
            await asyncio.sleep(0.01)
            if clock is not None:
                clock.advance(0.1)


# -- live quizzes ---------------------------------------------------------------------


async def test_a_live_question_that_meets_two_503s_is_retried_and_the_quiz_goes_on(
    host: Host, clock: FakeClock
) -> None:
    await host.start(questions=3, seconds=20)
    host.adapter.send_fault = fail_questions(2)
    await host.close_current()
    assert len(host.adapter.questions(CHANNEL)) == 1, "question 2 failed twice"

    await run_until(host, clock.now() + timedelta(seconds=8))  # two retries, 1–6 s

    titles = [sent.message.title or "" for sent in host.adapter.questions(CHANNEL)]
    assert [title.split()[-1] for title in titles] == ["1/3", "2/3"]
    # Its 20 seconds start when it is finally shown, not when it was first tried.
    shown = host.current()
    assert shown.message.deadline is not None
    assert shown.message.deadline - clock.now() > timedelta(seconds=15)
    await host.answer("ana", correct=True)
    await host.close_current()
    await host.close_current()
    assert len(host.adapter.questions(CHANNEL)) == 3
    assert "final scores" in host.adapter.sent[-1].message.text


async def test_a_first_question_that_meets_a_passing_failure_is_retried(
    host: Host, clock: FakeClock
) -> None:
    host.adapter.send_fault = fail_questions(1)
    reply = await host.command("start", questions=2, seconds=20)
    assert "trying again" in reply.text
    assert host.adapter.questions(CHANNEL) == []
    await run_until(host, clock.now() + timedelta(seconds=5))
    assert len(host.adapter.questions(CHANNEL)) == 1


async def test_a_live_quiz_ends_after_a_minute_of_failures_and_says_so(
    host: Host, clock: FakeClock
) -> None:
    await host.start(questions=3, seconds=20)
    host.adapter.send_fault = fail_questions(1000)
    await host.close_current()

    await run_until(host, clock.now() + timedelta(minutes=3))

    assert len(host.adapter.questions(CHANNEL)) == 1
    notice = host.adapter.sent[-1].message.text
    assert "The quiz has ended" in notice and "question 2" in notice
    # The channel is free again.
    host.adapter.send_fault = lambda *_: None
    assert (await host.command("start", questions=1)).text.startswith("Starting a quiz")


async def test_stopping_a_quiz_whose_next_question_waits_for_a_retry_posts_it_never(
    host: Host, clock: FakeClock
) -> None:
    await host.start(questions=3, seconds=20)
    host.adapter.send_fault = fail_questions(1)
    await host.close_current()
    assert (await host.command("stop")).text == texts.live.quiz_stopped().text

    await run_until(host, clock.now() + timedelta(minutes=2))

    assert len(host.adapter.questions(CHANNEL)) == 1
    assert "final scores" in host.adapter.sent[-1].message.text
    assert (await host.command("start", questions=1)).text.startswith("Starting a quiz")


async def test_a_refused_live_question_still_ends_the_quiz_at_once(
    host: Host, clock: FakeClock
) -> None:
    await host.start(questions=3, seconds=20)
    host.adapter.failing_channels.add(CHANNEL.channel)
    await host.close_current()
    host.adapter.failing_channels.clear()
    assert (await host.command("start", questions=1)).text.startswith("Starting a quiz")


# -- daily questions -----------------------------------------------------------------


async def test_no_daily_post_is_lost_when_30_percent_of_first_posts_fail(
    host: Host, clock: FakeClock
) -> None:
    channels = [Target("test", "guild-1", f"daily-{n}") for n in range(40)]
    for target in channels:
        await host.command("schedule", target, action="daily", time="10:00")
    failing = {target.channel for target in channels[::3]}  # 14 of 40
    tried: set[str] = set()

    def first_try_fails(target: Target, message: OutMessage) -> Exception | None:
        if message.buttons and target.channel in failing and target.channel not in tried:
            tried.add(target.channel)
            return DeliveryError("ratelimited", permanent=False)
        return None

    host.adapter.send_fault = first_try_fails
    await run_until(host, clock.now().replace(hour=10, minute=30))

    assert tried == failing
    for target in channels:
        assert len(host.adapter.questions(target)) == 1, target.channel


async def test_a_daily_post_is_retried_until_its_grace_window_ends_then_skipped(
    host: Host, clock: FakeClock
) -> None:
    await host.command("config", key="grace", value="30")
    await host.command("schedule", action="daily", time="10:00")
    host.adapter.send_fault = fail_questions(10_000)
    await run_until(host, clock.now().replace(hour=11))
    assert host.adapter.questions(CHANNEL) == []
    channel = await host.service.channel(CHANNEL)
    assert await host.service.repository.posts.open_daily_posts(channel.id) == [], "discarded"

    # The next day goes through as usual.
    host.adapter.send_fault = lambda *_: None
    await run_until(host, clock.now() + timedelta(days=1))
    assert len(host.adapter.questions(CHANNEL)) == 1


async def crash_while_sending_the_daily_question(host: Host) -> Host:
    """The 10:00 daily slot is claimed and its post created, then the process dies
    while the platform call hangs. Returns the restarted host."""
    await host.command("schedule", action="daily", time="10:00")
    host.clock.set(host.clock.now().replace(hour=10))
    host.adapter.hanging_channels.add(CHANNEL.channel)
    ticking = asyncio.create_task(host.service.tick())
    await until(lambda: host.adapter.hung > 0)  # the post is created and its send hangs
    ticking.cancel()  # the process dies here
    await host.service.jobs.drain(0)
    assert host.adapter.questions(CHANNEL) == []
    return restart(host)


async def test_a_crash_after_claiming_a_daily_slot_posts_it_once_after_restart(
    host: Host, clock: FakeClock
) -> None:
    after = await crash_while_sending_the_daily_question(host)
    await after.service.tick()
    assert after.adapter.questions(CHANNEL) == [], "the dead sender's lease still holds"
    clock.advance(delivery.PUBLISH_LEASE.total_seconds() + 1)
    await after.service.tick()
    await after.service.tick()
    assert len(after.adapter.questions(CHANNEL)) == 1
    # Tomorrow's slot was claimed with today's: it is not posted twice.
    clock.advance(3600)
    await after.service.tick()
    assert len(after.adapter.questions(CHANNEL)) == 1


async def test_a_daily_post_left_by_a_crash_is_skipped_if_the_bot_is_back_after_grace(
    host: Host, clock: FakeClock
) -> None:
    after = await crash_while_sending_the_daily_question(host)
    clock.advance(3 * 3600)  # down for three hours; grace is two
    await after.service.tick()
    assert after.adapter.questions(CHANNEL) == []
    channel = await after.service.channel(CHANNEL)
    assert await after.service.repository.posts.open_daily_posts(channel.id) == [], "discarded"
    # The next day is posted as usual, once.
    await run_until(after, clock.now().replace(hour=10) + timedelta(days=1))
    assert len(after.adapter.questions(CHANNEL)) == 1


# -- reveals --------------------------------------------------------------------------


async def test_a_reveal_happens_once_when_a_close_and_a_retry_race(
    host: Host, clock: FakeClock
) -> None:
    await host.start(questions=2, seconds=20)
    question = host.current()
    gate = asyncio.Event()
    host.adapter.edit_gate = gate  # the closing reveal is held mid-edit
    skipping = asyncio.create_task(host.command("skip"))
    await until(lambda: host.adapter.edit_gate is None)
    await host.service.tick()  # the timer loop looks for reveals to retry
    gate.set()
    await skipping

    assert len(host.adapter.edits_of(question.message_id)) == 1


async def test_a_reveal_cut_off_by_its_deadline_is_retried_once(
    host: Host, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(delivery, "PLATFORM_CALL_SECONDS", 0.2)
    await host.start(questions=2, seconds=20)
    question = host.current()
    host.adapter.hanging_channels.add(CHANNEL.channel)
    clock.advance(21)
    await host.service.tick()
    assert host.adapter.edits_of(question.message_id) == []
    host.adapter.hanging_channels.clear()
    await host.service.tick()
    await host.service.tick()
    assert len(host.adapter.edits_of(question.message_id)) == 1


async def test_the_running_loop_retries_a_failed_reveal_within_seconds(
    service: QuizService, adapter: RecordingAdapter, clock: FakeClock, host: Host
) -> None:
    # The loop sweeps for reveals to retry at most once a second of its clock
    # (not on every tick a deadline wakes it for): a failed reveal still comes
    # within a couple of seconds.
    await host.start(CHANNEL, questions=2, seconds=20)
    await host.start(OTHER_CHANNEL, questions=9, seconds=10)
    question = host.current(CHANNEL)
    adapter.edit_failures.append(passing_failure())
    timers = asyncio.create_task(service.run_timers())
    try:
        clock.advance(20)  # CHANNEL's deadline: its reveal fails once
        await until(lambda: not adapter.edit_failures)
        started = clock.now()
        await until(lambda: bool(adapter.edits_of(question.message_id)), clock=clock)
        assert (clock.now() - started).total_seconds() <= 2.5
    finally:
        service.shutdown()
        await asyncio.wait_for(timers, 5)
        await service.drain(5)
    assert len(adapter.edits_of(question.message_id)) == 1


# -- channels are isolated --------------------------------------------------------------


async def test_a_hanging_channel_does_not_hold_up_another_channels_next_question(
    service: QuizService, adapter: RecordingAdapter, clock: FakeClock, host: Host
) -> None:
    await host.start(CHANNEL, questions=2, seconds=20)
    await host.start(OTHER_CHANNEL, questions=2, seconds=30)
    adapter.hanging_channels.add(CHANNEL.channel)  # its reveal edit will hang
    timers = asyncio.create_task(service.run_timers())
    try:
        clock.advance(21)
        await until(lambda: len(service.jobs) > 0)
        clock.advance(9)  # the healthy channel's question comes due while the other hangs
        await until(lambda: len(adapter.questions(OTHER_CHANNEL)) == 2, clock=clock)
        assert len(adapter.questions(CHANNEL)) == 1
    finally:
        adapter.released.set()
        service.shutdown()
        await asyncio.wait_for(timers, 5)
        await service.drain(5)
    # Released, the hanging channel carries on as well.
    assert adapter.questions(CHANNEL)[0].edits


async def test_a_question_closes_at_its_time_while_another_close_is_still_in_flight(
    service: QuizService, adapter: RecordingAdapter, clock: FakeClock, host: Host
) -> None:
    # Two channels' questions come due half a second apart; the first one's
    # reveal hangs. The timer loop must not put off the second until it looks
    # at the first again: it wakes at the second's own deadline.
    await host.start(CHANNEL, questions=2, seconds=20)
    clock.advance(0.5)
    await host.start(OTHER_CHANNEL, questions=2, seconds=20)
    adapter.hanging_channels.add(CHANNEL.channel)
    timers = asyncio.create_task(service.run_timers())
    try:
        clock.advance(19.5)  # the first question's deadline
        await until(lambda: adapter.hung > 0)  # its reveal edit hangs
        clock.advance(0.5)  # the second question's deadline, and no later
        await until(lambda: bool(adapter.questions(OTHER_CHANNEL)[0].edits), seconds=3)
        assert not adapter.questions(CHANNEL)[0].edits  # the first is still held up
    finally:
        adapter.released.set()
        service.shutdown()
        await asyncio.wait_for(timers, 5)
        await service.drain(5)
