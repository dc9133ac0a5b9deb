"""The fake Discord of the tests, in a process of its own, for bench/discord_clicks.py.

Running it apart from the bot under test keeps the fake's own work off the
bot's event loop and CPU, and lets it send clicks on schedule even while the
bot is busy (a late click is then timed from when it was sent, as Discord
would). Driven by JSON lines on stdin; answers in JSON lines on stdout:

    {"op": "plain_message"}        → {"message_id", "custom_ids"}: a bare bot's question
    {"op": "question", "channel"}  → {"message_id", "custom_ids"}: the newest question there
    {"op": "clicks", "message_id", "custom_ids", "first_member", "count", "rate"}
        → {"latencies": [s, …], "unanswered": n, "replies": {text: n}, "seconds": s}

    python bench/discord_fake_process.py --members N
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from aiohttp import web

from bot.heap import start_up_frozen
from tests.fakes.fake_discord import (
    MANAGE_GUILD,
    MEMBER_PERMISSIONS,
    FakeDiscord,
    buttons_of,
    text_of,
)

GUILD = "110000000000000001"
BARE_CHANNEL = "220000000000000000"


def quiz_channel(number: int) -> str:
    """One channel per measurement: Discord (and the fake) return the message
    already made for a nonce repeated in a channel, and each database starts at post 1."""
    return str(220000000000000001 + number)


MODERATOR = "440000000000000001"
FIRST_MEMBER = 500000000000000000
# How long after the last click is sent its answer may still come.
ANSWER_WAIT = 15.0


def member_id(number: int) -> str:
    return str(FIRST_MEMBER + number)


class TimedFakeDiscord(FakeDiscord):
    """Notes when each interaction is sent and when its callback arrives."""

    def __init__(self) -> None:
        super().__init__()
        self.sent_at: dict[str, float] = {}
        self.answered_at: dict[str, float] = {}
        self.answered = asyncio.Event()
        self.handed_out: set[str] = set()  # message ids already given to the driver

    async def dispatch(self, event: str, data: dict[str, Any]) -> None:
        if event == "INTERACTION_CREATE":
            self.sent_at[data["token"]] = time.perf_counter()
        await super().dispatch(event, data)

    async def _callback(self, request: web.Request) -> web.Response:
        self.answered_at.setdefault(request.match_info["token"], time.perf_counter())
        self.answered.set()
        return await super()._callback(request)


async def clicks(
    fake: TimedFakeDiscord,
    message_id: str,
    custom_ids: list[str],
    first_member: int,
    count: int,
    rate: float,
) -> dict[str, Any]:
    """Open loop: click `count` times at `rate` per second, each click by the next
    member, whether or not earlier clicks were answered; then collect the answers."""
    loop = asyncio.get_running_loop()
    start = loop.time() + 0.05
    tokens: list[str] = []
    for number in range(count):
        delay = start + number / rate - loop.time()
        if delay > 0:
            await asyncio.sleep(delay)
        custom_id = custom_ids[number % len(custom_ids)]
        tokens.append(
            await fake.click(GUILD, member_id(first_member + number), message_id, custom_id)
        )
    deadline = loop.time() + ANSWER_WAIT
    waiting = set(tokens)
    while waiting and loop.time() < deadline:
        waiting = {token for token in waiting if fake.replies[token].final is None}
        fake.answered.clear()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(fake.answered.wait(), 0.1)
    latencies = [
        fake.answered_at[token] - fake.sent_at[token]
        for token in tokens
        if token in fake.answered_at
    ]
    answered = [fake.answered_at[token] for token in tokens if token in fake.answered_at]
    sent = [fake.sent_at[token] for token in tokens if token in fake.sent_at]
    # First click sent to last answer: what a burst's throughput is over.
    seconds = max(answered) - min(sent) if answered and sent else 0.0
    replies: Counter[str] = Counter()
    for token in tokens:
        final = fake.replies[token].final
        if final is not None:
            replies[text_of(final).split(":")[0][:40]] += 1
    unanswered = sum(1 for token in tokens if fake.replies[token].final is None)
    for token in tokens:  # keep the fake small across runs
        fake.replies.pop(token, None)
    return {
        "latencies": latencies,
        "unanswered": unanswered,
        "replies": dict(replies),
        "seconds": seconds,
    }


def plain_message(fake: TimedFakeDiscord) -> dict[str, Any]:
    """A question as a bare bot would post it: an embed and four buttons, the
    shape of ours. Each click's payload carries its message, which discord.py
    parses whole, so the bare bot's clicks weigh what ours do (a one-button
    message made them about 0.03 ms of CPU lighter, two alternated pairs)."""
    custom_ids = [f"bare:{letter}" for letter in "abcd"]
    options = "\n".join(
        f"**{letter}** Option {letter} of the question, about as long as a real one"
        for letter in "ABCD"
    )
    body = {
        "embeds": [
            {
                "title": "Question 1 of 1",
                "description": "Which of these is the question a bare bot asks?\n\n"
                + options
                + "\n\nCloses in 60 seconds",
            }
        ],
        "components": [
            {
                "type": 1,
                "components": [
                    {"type": 2, "style": 1, "label": letter.upper(), "custom_id": custom_id}
                    for letter, custom_id in zip("abcd", custom_ids, strict=True)
                ],
            }
        ],
    }
    message = fake._message(BARE_CHANNEL, body)
    fake.keep(message)
    fake.handed_out.add(message["id"])
    return {"message_id": message["id"], "custom_ids": custom_ids}


async def newest_question(fake: TimedFakeDiscord, channel: str) -> dict[str, Any]:
    found = await fake.wait_for(
        lambda: [m for m in fake.questions(channel) if m["id"] not in fake.handed_out], within=10
    )
    message = found[-1]
    fake.handed_out.add(message["id"])
    return {
        "message_id": message["id"],
        "custom_ids": [button["custom_id"] for button in buttons_of(message)],
    }


async def serve(members: int) -> None:
    fake = TimedFakeDiscord()
    fake.add_guild(GUILD, [BARE_CHANNEL])
    fake.add_member(GUILD, MODERATOR, "Mod", permissions=MEMBER_PERMISSIONS | MANAGE_GUILD)
    for number in range(members):
        fake.add_member(GUILD, member_id(number))
    await fake.start()
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)

    def say(data: dict[str, Any]) -> None:
        sys.stdout.write(json.dumps(data) + "\n")
        sys.stdout.flush()

    say({"token": fake.token, "api_url": fake.api_url, "gateway_url": fake.gateway_url})
    try:
        while line := await reader.readline():
            order = json.loads(line)
            if order["op"] == "plain_message":
                say(plain_message(fake))
            elif order["op"] == "question":
                say(await newest_question(fake, order["channel"]))
            elif order["op"] == "clicks":
                # The fake's heap is frozen while it clicks (what it holds grows
                # with every run): a full collection paused its loop for tens
                # of ms, then sent the clicks held up as one burst, and both
                # bots' p99 were the instrument's pause rather than their own.
                with start_up_frozen():
                    result = await clicks(
                        fake,
                        order["message_id"],
                        order["custom_ids"],
                        order["first_member"],
                        order["count"],
                        order["rate"],
                    )
                say(result)
    finally:
        await fake.close()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--members", type=int, required=True)
    asyncio.run(serve(parser.parse_args().members))


if __name__ == "__main__":
    main()
