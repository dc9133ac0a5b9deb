"""`quizmaster run` in Slack HTTP mode, stopped in the middle of a burst of
clicks: every click Slack got a 200 for is in the database afterwards, whether
the bot was asked to stop (SIGTERM, exit 0) or killed outright (kill -9)."""

from __future__ import annotations

import asyncio
import json
import signal
import sqlite3
import uuid
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import aiohttp

from tests.fakes.fake_slack import (
    BOT_TOKEN,
    SIGNING_SECRET,
    FakeSlack,
    SignedSender,
    click_payload,
    slash_payload,
)
from tests.processes import bot_environment, free_port, start_run, wait_until_connected

CHANNEL = "C0BURST"
ADMIN = "U0ADMIN"
BURST = 200
STOP_AFTER = 40  # answered clicks before the bot is stopped


async def _burst_then_stop(tmp_path: Path, stop: signal.Signals) -> None:
    fake = await FakeSlack().start()
    fake.add_user(ADMIN, "Ada", admin=True)
    health, events = free_port(), free_port()
    environment = bot_environment(
        tmp_path,
        SLACK_BOT_TOKEN=BOT_TOKEN,
        SLACK_SIGNING_SECRET=SIGNING_SECRET,
        QUIZ_SLACK_API_URL=fake.api_url,
        QUIZ_SLACK_HOST="127.0.0.1",
        QUIZ_SLACK_PORT=str(events),
        QUIZ_HEALTH_PORT=str(health),
    )
    process = await start_run(tmp_path, environment)
    url = f"http://127.0.0.1:{events}/slack/events"
    sender = SignedSender(url)
    # As Slack does: many connections at once, not a queue behind 100.
    session = aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0))
    acked: set[str] = set()
    try:
        await wait_until_connected(health, "slack", process)
        key = uuid.uuid4().hex
        start = slash_payload(
            "start 1 300", user=ADMIN, channel=CHANNEL, response_url=fake.response_url(key)
        )
        assert (await sender.slash(start))[0] == 200
        [question] = await fake.wait_for(lambda: fake.questions(CHANNEL), what="the question")
        value = question.buttons()["A"]
        enough = asyncio.Event()

        async def click(user: str) -> None:
            payload = click_payload(
                value,
                "A",
                user=user,
                channel=CHANNEL,
                message_ts=str(question.result["ts"]),
                response_url=fake.response_url(f"click-{user}"),
            )
            body = urlencode({"payload": json.dumps(payload)}).encode()
            headers: Any = sender.signed_headers(body)
            try:
                async with session.post(url, data=body, headers=headers) as response:
                    await response.read()
                    if response.status == 200:
                        acked.add(user)
            except aiohttp.ClientError:
                return  # refused or cut off: Slack shows the member an error
            if len(acked) >= STOP_AFTER:
                enough.set()

        users = [f"U5P{n:03d}" for n in range(BURST)]
        clicks = [asyncio.create_task(click(user)) for user in users]
        await asyncio.wait_for(enough.wait(), 30)
        process.send_signal(stop)
        acked_before_stop = set(acked)
        await asyncio.gather(*clicks)
        _, err = await asyncio.wait_for(process.communicate(), 30)
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
        await session.close()
        await sender.close()
        await fake.close()

    with sqlite3.connect(tmp_path / "data" / "quizmaster.db") as database:
        stored = {user for (user,) in database.execute("SELECT user_id FROM answers")}
    if stop is signal.SIGTERM:
        assert process.returncode == 0, err.decode()
        assert "Traceback" not in err.decode()
    # A 200 read after kill -9 was still sent before it: it counts as well.
    lost = acked - stored
    assert len(acked_before_stop) >= STOP_AFTER
    assert not lost, f"{len(lost)} acknowledged clicks were not stored"


async def test_sigterm_mid_burst_stores_every_click_that_got_200(tmp_path: Path) -> None:
    await _burst_then_stop(tmp_path, signal.SIGTERM)


async def test_kill_9_mid_burst_loses_no_click_that_got_200(tmp_path: Path) -> None:
    await _burst_then_stop(tmp_path, signal.SIGKILL)
