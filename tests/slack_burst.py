"""`quizmaster run` in Slack HTTP mode, a burst of signed clicks by distinct
members at one question, and a signal part-way: who got a 200, and whose
answer is in the database afterwards. Shared by the shutdown tests and the
fault benchmark (bench/faults.py)."""

from __future__ import annotations

import asyncio
import json
import signal
import sqlite3
import uuid
from dataclasses import dataclass
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


@dataclass(frozen=True)
class Burst:
    acked_before_stop: set[str]
    acked: set[str]  # a 200 read after kill -9 was still sent before it
    stored: set[str]
    returncode: int | None
    stderr: str

    @property
    def lost(self) -> set[str]:
        return self.acked - self.stored


async def burst_then_stop(folder: Path, stop: signal.Signals, clicks: int, after: int) -> Burst:
    """`clicks` clicks at once; `stop` is sent once `after` of them got a 200."""
    fake = await FakeSlack().start()
    fake.add_user(ADMIN, "Ada", admin=True)
    health, events = free_port(), free_port()
    environment = bot_environment(
        folder,
        SLACK_BOT_TOKEN=BOT_TOKEN,
        SLACK_SIGNING_SECRET=SIGNING_SECRET,
        QUIZ_SLACK_API_URL=fake.api_url,
        QUIZ_SLACK_HOST="127.0.0.1",
        QUIZ_SLACK_PORT=str(events),
        QUIZ_HEALTH_PORT=str(health),
    )
    process = await start_run(folder, environment)
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
            if len(acked) >= after:
                enough.set()

        users = [f"U5P{n:05d}" for n in range(clicks)]
        tasks = [asyncio.create_task(click(user)) for user in users]
        await asyncio.wait_for(enough.wait(), 30)
        process.send_signal(stop)
        acked_before_stop = set(acked)
        await asyncio.gather(*tasks)
        _, err = await asyncio.wait_for(process.communicate(), 30)
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
        await session.close()
        await sender.close()
        await fake.close()

    with sqlite3.connect(folder / "data" / "quizmaster.db") as database:
        stored = {user for (user,) in database.execute("SELECT user_id FROM answers")}
    return Burst(acked_before_stop, acked, stored, process.returncode, err.decode())
