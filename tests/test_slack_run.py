"""`quizmaster run` with Slack settings plays a whole quiz against the fake Slack
running in the test process: over signed HTTP requests, and over Socket Mode."""

from __future__ import annotations

import asyncio
import html
import signal
import uuid
from pathlib import Path
from typing import Any

from tests.fakes.fake_slack import (
    APP_TOKEN,
    BOT_TOKEN,
    SIGNING_SECRET,
    FakeSlack,
    SignedSender,
    click_payload,
    slash_payload,
)
from tests.processes import bot_environment, free_port, start_run, wait_until_connected

CHANNEL = "C0RUN"
ADMIN, PLAYER = "U0ADMIN", "U0PLAYER"


async def _play(tmp_path: Path, *, socket_mode: bool) -> None:
    fake = await FakeSlack().start()
    fake.add_user(ADMIN, "Ada", admin=True)
    fake.add_user(PLAYER, "Pat")
    health, events = free_port(), free_port()
    environment = bot_environment(
        tmp_path,
        SLACK_BOT_TOKEN=BOT_TOKEN,
        QUIZ_SLACK_API_URL=fake.api_url.rstrip("/"),  # the missing slash is added
        QUIZ_SLACK_HOST="127.0.0.1",
        QUIZ_SLACK_PORT=str(events),
        QUIZ_HEALTH_PORT=str(health),
    )
    if socket_mode:
        environment["SLACK_APP_TOKEN"] = APP_TOKEN
    else:
        environment["SLACK_SIGNING_SECRET"] = SIGNING_SECRET
    process = await start_run(tmp_path, environment)
    sender = SignedSender(f"http://127.0.0.1:{events}/slack/events")
    try:
        await wait_until_connected(health, "slack", process)

        async def deliver(kind: str, payload: dict[str, Any]) -> None:
            if socket_mode:
                envelope = await fake.send_envelope(kind, payload)
                await fake.wait_for(lambda: envelope in fake.acks, what="an ack")
            elif kind == "slash_commands":
                assert (await sender.slash(payload))[0] == 200
            else:
                assert (await sender.click(payload))[0] == 200

        key = uuid.uuid4().hex
        start = slash_payload(
            "start 1 2", user=ADMIN, channel=CHANNEL, response_url=fake.response_url(key)
        )
        await deliver("slash_commands", start)
        [reply] = await fake.wait_for(lambda: fake.responses_to(key), what="the start reply")
        assert reply["text"].startswith("Starting a quiz: 1 question")
        [question] = await fake.wait_for(lambda: fake.questions(CHANNEL), what="the question")
        value = question.buttons()["B"]
        await deliver(
            "interactive",
            click_payload(
                value,
                "B",
                user=PLAYER,
                channel=CHANNEL,
                message_ts=str(question.result["ts"]),
                response_url=fake.response_url("click"),
            ),
        )
        [locked] = await fake.wait_for(lambda: fake.ephemerals(PLAYER), what="the lock reply")
        assert locked.text.startswith("Locked in B")
        [reveal] = await fake.wait_for(lambda: fake.calls_to("chat.update"), what="the reveal")
        assert reveal.params["ts"] == question.result["ts"]
        assert "1 answer." in html.unescape(reveal.text)
        scores = await fake.wait_for(
            lambda: [c for c in fake.posts(CHANNEL) if "Quiz over" in c.text], what="scores"
        )
        assert f"<@{PLAYER}>" in scores[0].text

        process.send_signal(signal.SIGTERM)
        _, err = await asyncio.wait_for(process.communicate(), 20)
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
        await sender.close()
        await fake.close()
    assert process.returncode == 0, err.decode()
    assert BOT_TOKEN not in err.decode() and APP_TOKEN not in err.decode()
    assert all(call.token in (BOT_TOKEN, APP_TOKEN) for call in fake.calls)
    # Socket Mode asked Slack for a websocket URL; HTTP mode never did.
    assert bool(fake.calls_to("apps.connections.open")) == socket_mode


async def test_run_plays_a_quiz_over_http(tmp_path: Path) -> None:
    await _play(tmp_path, socket_mode=False)


async def test_run_plays_a_quiz_over_socket_mode(tmp_path: Path) -> None:
    await _play(tmp_path, socket_mode=True)
