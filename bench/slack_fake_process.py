"""The fake Slack of the tests, in a process of its own, for bench/slack_clicks.py.

It serves the Web API the bot under test calls (chat.postMessage for the
question, chat.postEphemeral for each private reply) and plays Slack's side
of HTTP mode: it sends signed block_actions requests to the bot's
/slack/events. Apart from the bot, its work stays off the bot's CPU and event
loop. Driven by JSON lines on stdin; answers in JSON lines on stdout:

    {"op": "question", "channel"}  → {"values": [...], "ts"}: the newest question there
    {"op": "clicks", "url", "channel", "values", "ts", "first_member", "count", "connections"}
        → {"latencies": [s, …], "statuses": {code: n}, "seconds": s, "replies": {text: n},
           "fake_cpu": s}

A clicks order sends `count` clicks by distinct members at once, over at most
`connections` connections (Slack's many senders, bounded here as a bot's
port is), times each request from send to its 200, and answers once every
click's private reply has arrived (or 15 s after the last answer).

    python bench/slack_fake_process.py
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
import uuid
from collections import Counter
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import aiohttp

from bot.heap import start_up_frozen
from tests.fakes.fake_slack import BOT_TOKEN, FakeSlack, SignedSender, click_payload

REPLY_WAIT = 15.0


def member_id(number: int) -> str:
    return f"U7B{number:07d}"


async def newest_question(fake: FakeSlack, channel: str) -> dict[str, Any]:
    [*_, question] = await fake.wait_for(lambda: fake.questions(channel), what="the question")
    return {"values": list(question.buttons().values()), "ts": str(question.result["ts"])}


async def clicks(fake: FakeSlack, order: dict[str, Any]) -> dict[str, Any]:
    sender = SignedSender(order["url"])
    connector = aiohttp.TCPConnector(limit=order["connections"])
    session = aiohttp.ClientSession(connector=connector)
    values: list[str] = order["values"]
    replied_before = len(fake.ephemerals())
    bodies = []
    for number in range(order["first_member"], order["first_member"] + order["count"]):
        # Members of the workspace, as Slack's users.info knows them (each one's
        # first reply looks up their language once).
        fake.add_user(member_id(number), f"Member {number}")
        payload = click_payload(
            values[number % len(values)],
            "A",
            user=member_id(number),
            channel=order["channel"],
            message_ts=order["ts"],
            response_url=fake.response_url(uuid.uuid4().hex),
        )
        bodies.append(urlencode({"payload": json.dumps(payload)}).encode())
    latencies: list[float] = []
    statuses: Counter[int] = Counter()

    async def click(body: bytes) -> None:
        headers: Any = sender.signed_headers(body)
        started = time.perf_counter()
        try:
            async with session.post(order["url"], data=body, headers=headers) as response:
                await response.read()
                statuses[response.status] += 1
        except aiohttp.ClientError:
            statuses[0] += 1
            return
        latencies.append(time.perf_counter() - started)

    try:
        cpu = time.process_time()
        began = time.perf_counter()
        await asyncio.gather(*(click(body) for body in bodies))
        seconds = time.perf_counter() - began
        deadline = time.monotonic() + REPLY_WAIT
        while len(fake.ephemerals()) - replied_before < order["count"]:
            if time.monotonic() > deadline:
                break
            await asyncio.sleep(0.01)
    finally:
        await session.close()
        await sender.close()
    replies = Counter(call.text.split("\n")[0][:40] for call in fake.ephemerals()[replied_before:])
    return {
        "latencies": latencies,
        "statuses": {str(code): n for code, n in statuses.items()},
        "seconds": seconds,
        "replies": dict(replies),
        "fake_cpu": time.process_time() - cpu,
    }


async def serve() -> None:
    fake = await FakeSlack().start()
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)

    def say(data: dict[str, Any]) -> None:
        sys.stdout.write(json.dumps(data) + "\n")
        sys.stdout.flush()

    say({"api_url": fake.api_url, "token": BOT_TOKEN})
    try:
        while line := await reader.readline():
            order = json.loads(line)
            if order["op"] == "question":
                say(await newest_question(fake, order["channel"]))
            elif order["op"] == "clicks":
                # Frozen as in bench/discord_fake_process.py: a full collection
                # of what the fake holds would pause its sending.
                with start_up_frozen():
                    say(await clicks(fake, order))
    finally:
        await fake.close()


if __name__ == "__main__":
    asyncio.run(serve())
