"""`quizmaster run` with Slack settings plays a whole quiz against the fake Slack
running in the test process: over signed HTTP requests, and over Socket Mode."""

from __future__ import annotations

import asyncio
import html
import os
import signal
import socket
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import aiohttp

from tests.conftest import ROOT
from tests.fakes.fake_slack import (
    APP_TOKEN,
    BOT_TOKEN,
    SIGNING_SECRET,
    FakeSlack,
    SignedSender,
    click_payload,
    slash_payload,
)

CHANNEL = "C0RUN"
ADMIN, PLAYER = "U0ADMIN", "U0PLAYER"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def _healthy(port: int, process: asyncio.subprocess.Process) -> dict[str, Any]:
    """Wait until /healthz says Slack is connected."""
    deadline = time.monotonic() + 30
    async with aiohttp.ClientSession() as session:
        while time.monotonic() < deadline:
            assert process.returncode is None, "quizmaster run exited early"
            try:
                async with session.get(f"http://127.0.0.1:{port}/healthz") as response:
                    body: dict[str, Any] = await response.json()
                    if body["platforms"].get("slack") == "connected":
                        return body
            except aiohttp.ClientError:
                pass
            await asyncio.sleep(0.2)
    raise AssertionError("Slack never connected")


async def _play(tmp_path: Path, *, socket_mode: bool) -> None:
    fake = await FakeSlack().start()
    fake.add_user(ADMIN, "Ada", admin=True)
    fake.add_user(PLAYER, "Pat")
    health, events = _free_port(), _free_port()
    environment = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("QUIZ_", "DISCORD_", "SLACK_"))
    }
    environment.update(
        SLACK_BOT_TOKEN=BOT_TOKEN,
        QUIZ_SLACK_API_URL=fake.api_url.rstrip("/"),  # the missing slash is added
        QUIZ_SLACK_HOST="127.0.0.1",
        QUIZ_SLACK_PORT=str(events),
        QUIZ_HEALTH_PORT=str(health),
        QUIZ_DATA_DIR=str(tmp_path / "data"),
        QUIZ_QUESTIONS_DIR=str(ROOT / "questions"),
        PYTHONPATH=str(ROOT),
    )
    if socket_mode:
        environment["SLACK_APP_TOKEN"] = APP_TOKEN
    else:
        environment["SLACK_SIGNING_SECRET"] = SIGNING_SECRET
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "bot",
        "run",
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        cwd=tmp_path,
        env=environment,
    )
    sender = SignedSender(f"http://127.0.0.1:{events}/slack/events")
    try:
        await _healthy(health, process)

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
