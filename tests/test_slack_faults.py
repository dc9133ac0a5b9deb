"""Passing Slack faults through the real Bolt app and slack_sdk client against
the fake Slack: a question post that meets 5xx errors is retried and the quiz
goes on; a channel whose calls hang holds up no other channel."""

from __future__ import annotations

import pytest

from bot.quiz import delivery
from tests.fakes.fake_slack import Call
from tests.test_slack import (  # the fixtures, shared with test_slack.py
    CHANNEL,
    MEMBER,
    OTHER,
    MakeSlack,
    Slack,
    fake,
    make_slack,
)

__all__ = ["fake", "make_slack"]  # fixtures used by name


def _ended_notices(slack: Slack, channel: str) -> list[Call]:
    return [call for call in slack.fake.posts(channel) if "The quiz has ended" in call.text]


async def test_a_question_post_that_meets_two_503s_is_retried_and_the_quiz_finishes(
    make_slack: MakeSlack,
) -> None:
    slack = await make_slack()
    fake = slack.fake
    started = await slack.command("start 2 2")
    assert started.text.startswith("Starting a quiz: 2 questions")
    first = await slack.next_question()
    # The SDK retries a 503 once by itself; the second 503 reaches the bot.
    fake.server_error("chat.postMessage", 503, channel=CHANNEL, times=2)

    second = await slack.next_question(after=1)
    assert "Question 2/2" in second.text and set(second.buttons()) == {"A", "B", "C", "D"}
    tries = fake.calls_to("chat.postMessage", CHANNEL, ok=False)
    assert [call.status for call in tries] == [200, 503, 503, 200]
    assert await slack.click(second, "A", MEMBER) == 200  # the question is live
    await fake.wait_for(lambda: fake.ephemerals(MEMBER), what="the click reply")

    scores = await fake.wait_for(
        lambda: [c for c in fake.posts(CHANNEL) if "Quiz over" in c.text], what="the scoreboard"
    )
    assert len(scores) == 1
    assert [call.params["ts"] for call in fake.calls_to("chat.update", CHANNEL)] == [
        slack.ts_of(first),
        slack.ts_of(second),
    ]  # both questions revealed
    assert len(fake.questions(CHANNEL)) == 2 and not _ended_notices(slack, CHANNEL)


async def test_a_channel_whose_calls_hang_holds_up_no_other_channel(
    make_slack: MakeSlack, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(delivery, "PLATFORM_CALL_SECONDS", 1.0)
    slack = await make_slack()
    fake = slack.fake
    stuck, healthy = OTHER, CHANNEL

    await slack.command("start 3 2", channel=stuck)
    stuck_first = await slack.next_question(stuck)
    # From now on Slack answers nothing in the stuck channel: not the reveal, not the next post.
    fake.hang("chat.update", channel=stuck)
    fake.hang("chat.postMessage", channel=stuck)
    # The healthy quiz's question closes after the stuck one's, while that channel hangs.
    await slack.command("start 3 4", channel=healthy)
    await slack.next_question(healthy)

    await fake.wait_for(
        lambda: fake.questions(healthy)[1:], within=8, what="the healthy channel's next question"
    )
    assert fake.hanging and {call.channel for call in fake.hanging} == {stuck}
    assert fake.questions(stuck) == [stuck_first]

    fake.release()
    # The stuck channel goes on (or, past its retry window, says the quiz ended).
    await fake.wait_for(
        lambda: fake.questions(stuck)[1:] or _ended_notices(slack, stuck),
        within=20,
        what="the stuck channel's quiz to go on",
    )
    # Its closed question is revealed after all: the reveal is tried again.
    await fake.wait_for(
        lambda: [
            call
            for call in fake.calls_to("chat.update", stuck)
            if call.params.get("ts") == slack.ts_of(stuck_first)
        ],
        within=20,
        what="the stuck channel's reveal",
    )
    await slack.command("stop", channel=stuck)
    await slack.command("stop", channel=healthy)
