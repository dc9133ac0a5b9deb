"""Fan-out benchmark: N channels (default 5,000) whose daily question is due at
the same minute, posted by the real timer loop through an adapter that behaves
like a platform: it allows `rate` posts per second (default 50) and makes a
post that exceeds it wait for its turn, as discord.py's and slack-bolt's own
rate limiters do, and each call takes `latency` seconds (default 0.1).

The platform's limit is the bottleneck, so the figure is the share of the
allowed rate the bot keeps up from its first post to its last: any stretch in
which the bot sends nothing (a database phase, a gap between batches) is lost
for good. It also counts channels with no post (lost) and with more than one
(doubled). Runs on SQLite and, when QUIZ_TEST_POSTGRES_URL or --postgres is
given, on PostgreSQL.

With `--yesterday-open N` each channel's daily question of yesterday is still
open with N answers (the everyday case): today's post closes it, so each
channel makes a reveal edit and a post, and the figure counts both calls.
With `--answer-429` the platform answers 429 with the wait instead of pacing.

    python bench/fanout.py [--channels 5000] [--rate 50] [--latency 0.1] [--runs 1]
                           [--yesterday-open 3] [--answer-429]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import random
import tempfile
import time
from collections import Counter
from datetime import UTC, datetime, timedelta

from common import ROOT, postgres_schema, run_checkpoints, schedule_daily
from sqlalchemy import func, insert, select
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.chat import Command, Interaction, MessageRef, OutMessage, Target
from bot.clock import SystemClock
from bot.dialect import PLAIN
from bot.heap import start_up_frozen
from bot.quiz.bank import Catalog, load_banks
from bot.quiz.service import QuizService
from bot.storage.db import open_database, session_factory, upgrade
from bot.storage.models import Answer, Channel, Post
from bot.storage.repository import Repository


class PacedPlatform:
    """An adapter standing for a rate-limited platform: each post reserves the
    next free moment (one every 1/rate s, no burst), waits for it, then takes
    `latency` s for the round trip. No burst means a moment the bot leaves
    unused cannot be made up later: the figure shows every gap."""

    platform = "bench"
    dialect = PLAIN
    connected = True

    def __init__(self, rate: float, latency: float, answers_429: bool = False) -> None:
        self.interval = 1.0 / rate
        self.latency = latency
        self.answers_429 = answers_429
        self.posted: Counter[str] = Counter()  # questions per channel
        self.edited: Counter[str] = Counter()  # reveal edits per message
        self.times: list[float] = []  # when each question was accepted
        self.calls: list[float] = []  # when each call (post or edit) was accepted
        self.refused = 0  # 429s answered
        self.everyone_posted = asyncio.Event()
        self.expected = 0
        self._next_free = 0.0

    async def _turn(self) -> None:
        if self.answers_429:
            await self._turn_or_429()
            return
        now = time.perf_counter()
        moment = max(now, self._next_free)
        self._next_free = moment + self.interval
        if moment > now:
            await asyncio.sleep(moment - now)
        self.calls.append(time.perf_counter())

    async def _turn_or_429(self) -> None:
        """As Slack and Discord do when a client does not pace itself: a call
        that comes before the next free moment is answered 429 with the wait
        (Retry-After), reserving nothing; the client's retry handler (slack-sdk's,
        discord.py's) waits that long and tries again."""
        while True:
            now = time.perf_counter()
            if now >= self._next_free:
                self._next_free = now + self.interval
                self.calls.append(now)
                return
            self.refused += 1
            await asyncio.sleep(self._next_free - now)

    async def send(self, target: Target, message: OutMessage) -> MessageRef:
        await self._turn()
        accepted = time.perf_counter()
        await asyncio.sleep(self.latency)
        if message.buttons:
            self.posted[target.channel] += 1
            self.times.append(accepted)
            if sum(self.posted.values()) >= self.expected:
                self.everyone_posted.set()
        return MessageRef(target, f"m{len(self.times)}")

    async def edit(self, ref: MessageRef, message: OutMessage) -> None:
        await self._turn()
        await asyncio.sleep(self.latency)
        self.edited[ref.message_id] += 1

    async def reply_private(self, event: Command | Interaction, message: OutMessage) -> None:
        return None

    async def display_names(self, target: Target, user_ids: list[str]) -> dict[str, str]:
        return {}


async def open_yesterday(engine: AsyncEngine, catalog: Catalog, due: datetime, answers: int) -> int:
    """Each channel's daily question of yesterday, posted and still open (as
    when the daily window is a day), with `answers` members' answers: today's
    post closes and reveals it. Written straight into the tables."""
    question_id = catalog.pool()[0]
    question = catalog.question(question_id)
    assert question is not None
    order = list(range(len(question.options)))
    yesterday = due - timedelta(days=1)
    async with engine.begin() as connection:
        channel_ids = list((await connection.execute(select(Channel.id))).scalars())
        posts = [
            {
                "channel_id": channel_id,
                "kind": "daily",
                "question_id": question_id,
                "option_order": order,
                "correct_slot": question.answer_index,
                "seconds": 86_400 + 3_600,
                "posted_at": yesterday,
                "closes_at": due + timedelta(hours=1),
                "message_id": f"yesterday-{channel_id}",
            }
            for channel_id in channel_ids
        ]
        await connection.execute(insert(Post), posts)
        made = (await connection.execute(select(Post.id, Post.channel_id))).all()
        rows = [
            {
                "post_id": post_id,
                "channel_id": channel_id,
                "user_id": f"member-{member}",
                "slot": member % len(order),
                "correct": member % len(order) == question.answer_index,
                "points": 10 if member % len(order) == question.answer_index else 0,
                "answered_at": yesterday + timedelta(minutes=member + 1),
                "latency_ms": 4_000,
            }
            for post_id, channel_id in made
            for member in range(answers)
        ]
        for start in range(0, len(rows), 5_000):
            await connection.execute(insert(Answer), rows[start : start + 5_000])
    return len(channel_ids)


async def measure(
    url: str,
    channels: int,
    rate: float,
    latency: float,
    search_path: str | None = None,
    *,
    yesterday_answers: int | None = None,
    answers_429: bool = False,
) -> None:
    database = open_database(url, search_path=search_path)
    engine = database.writer
    await upgrade(engine)
    checkpoints = await run_checkpoints(database)
    repository = Repository(database)
    due = datetime.now(UTC).replace(microsecond=0) - timedelta(seconds=5)
    await schedule_daily(repository, channels, due)
    catalog, _ = load_banks([ROOT / "questions"])
    yesterday = 0
    if yesterday_answers is not None:
        yesterday = await open_yesterday(engine, catalog, due, yesterday_answers)
    service = QuizService(repository, catalog, SystemClock(), random.Random(1))
    platform = PacedPlatform(rate, latency, answers_429)
    platform.expected = channels
    service.register(platform)
    # The heap as `quizmaster run` keeps it once connected (bot/heap.py).
    with start_up_frozen():
        began = time.perf_counter()
        loop = asyncio.create_task(service.run_timers())
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(platform.everyone_posted.wait(), channels / rate * 3 + 60)
        # A little longer, so a post sent twice would show up.
        await asyncio.sleep(1.0)
        service.shutdown()
        await loop
    await service.drain()
    async with session_factory(engine)() as session:
        stored = Counter(
            dict(
                (
                    await session.execute(
                        select(Post.channel_id, func.count()).group_by(Post.channel_id)
                    )
                ).all()
            )
        )
    if checkpoints is not None:
        await checkpoints.stop()
    await database.dispose()
    times, calls = platform.times, platform.calls
    lost = channels - len(platform.posted) + (yesterday - len(platform.edited))
    doubled = (
        sum(1 for n in platform.posted.values() if n > 1)
        + sum(1 for n in stored.values() if n > 1 + (yesterday > 0))
        + sum(1 for n in platform.edited.values() if n > 1)
    )
    span = calls[-1] - calls[0] if len(calls) > 1 else 0.0
    achieved = (len(calls) - 1) / span if span else 0.0
    case = (
        f"yesterday's open ({yesterday_answers} answers each), a reveal edit and a post each"
        if yesterday
        else "nothing open"
    )
    limit = "answering 429 beyond it" if answers_429 else "pacing"
    print(
        f"{engine.dialect.name:<10} {channels} daily questions, {case}; {rate:g} calls/s "
        f"allowed ({limit}), {latency * 1000:.0f} ms per call: {achieved:.1f} calls/s = "
        f"{achieved / rate:.3f} of the allowed rate (goal >= 0.95); first post after "
        f"{times[0] - began if times else float('nan'):.2f} s, all out in "
        f"{times[-1] - began if times else float('nan'):.1f} s; lost={lost} doubled={doubled}"
        + (f"; {platform.refused} calls answered 429" if answers_429 else "")
    )


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--channels", type=int, default=5000)
    parser.add_argument("--rate", type=float, default=50.0)
    parser.add_argument("--latency", type=float, default=0.1)
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--postgres", default=os.environ.get("QUIZ_TEST_POSTGRES_URL"))
    parser.add_argument("--no-sqlite", action="store_true")
    parser.add_argument(
        "--yesterday-open",
        type=int,
        metavar="ANSWERS",
        default=None,
        help="each channel's daily question of yesterday is still open, with ANSWERS answers",
    )
    parser.add_argument(
        "--answer-429", action="store_true", help="the platform answers 429 instead of pacing"
    )
    options = parser.parse_args()
    random.seed(1)
    for _ in range(options.runs):
        if not options.no_sqlite:
            with tempfile.TemporaryDirectory() as folder:
                await measure(
                    f"sqlite+aiosqlite:///{folder}/bench.db",
                    options.channels,
                    options.rate,
                    options.latency,
                    yesterday_answers=options.yesterday_open,
                    answers_429=options.answer_429,
                )
        if options.postgres:
            async with postgres_schema(options.postgres) as schema:
                await measure(
                    options.postgres,
                    options.channels,
                    options.rate,
                    options.latency,
                    search_path=schema,
                    yesterday_answers=options.yesterday_open,
                    answers_429=options.answer_429,
                )
    if not options.postgres:
        print("postgresql skipped: set QUIZ_TEST_POSTGRES_URL or pass --postgres URL")


if __name__ == "__main__":
    asyncio.run(main())
