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

    python bench/fanout.py [--channels 5000] [--rate 50] [--latency 0.1] [--runs 1]
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

from common import ROOT, postgres_schema, schedule_daily
from sqlalchemy import func, select

from bot.chat import Command, Interaction, MessageRef, OutMessage, Target
from bot.clock import SystemClock
from bot.dialect import PLAIN
from bot.heap import start_up_frozen
from bot.quiz.bank import load_banks
from bot.quiz.service import QuizService
from bot.storage.db import open_database, session_factory, upgrade
from bot.storage.models import Post
from bot.storage.repository import Repository


class PacedPlatform:
    """An adapter standing for a rate-limited platform: each post reserves the
    next free moment (one every 1/rate s, no burst), waits for it, then takes
    `latency` s for the round trip. No burst means a moment the bot leaves
    unused cannot be made up later: the figure shows every gap."""

    platform = "bench"
    dialect = PLAIN
    connected = True

    def __init__(self, rate: float, latency: float) -> None:
        self.interval = 1.0 / rate
        self.latency = latency
        self.posted: Counter[str] = Counter()  # questions per channel
        self.times: list[float] = []  # when each question was accepted
        self.everyone_posted = asyncio.Event()
        self.expected = 0
        self._next_free = 0.0

    async def _turn(self) -> None:
        now = time.perf_counter()
        moment = max(now, self._next_free)
        self._next_free = moment + self.interval
        if moment > now:
            await asyncio.sleep(moment - now)

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

    async def reply_private(self, event: Command | Interaction, message: OutMessage) -> None:
        return None

    async def display_names(self, target: Target, user_ids: list[str]) -> dict[str, str]:
        return {}


async def measure(
    url: str,
    channels: int,
    rate: float,
    latency: float,
    search_path: str | None = None,
) -> None:
    database = open_database(url, search_path=search_path)
    engine = database.writer
    await upgrade(engine)
    repository = Repository(database)
    due = datetime.now(UTC).replace(microsecond=0) - timedelta(seconds=5)
    await schedule_daily(repository, channels, due)
    catalog, _ = load_banks([ROOT / "questions"])
    service = QuizService(repository, catalog, SystemClock(), random.Random(1))
    platform = PacedPlatform(rate, latency)
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
    await database.dispose()
    times = platform.times
    lost = channels - len(platform.posted)
    doubled = sum(1 for n in platform.posted.values() if n > 1) + sum(
        1 for n in stored.values() if n > 1
    )
    span = times[-1] - times[0] if len(times) > 1 else 0.0
    achieved = (len(times) - 1) / span if span else 0.0
    print(
        f"{engine.dialect.name:<10} {channels} daily questions, {rate:g} posts/s allowed, "
        f"{latency * 1000:.0f} ms per call: {achieved:.1f} posts/s = "
        f"{achieved / rate:.3f} of the allowed rate; first post after "
        f"{times[0] - began if times else float('nan'):.2f} s, all out in "
        f"{times[-1] - began if times else float('nan'):.1f} s; lost={lost} doubled={doubled}"
    )


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--channels", type=int, default=5000)
    parser.add_argument("--rate", type=float, default=50.0)
    parser.add_argument("--latency", type=float, default=0.1)
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--postgres", default=os.environ.get("QUIZ_TEST_POSTGRES_URL"))
    parser.add_argument("--no-sqlite", action="store_true")
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
                )
        if options.postgres:
            async with postgres_schema(options.postgres) as schema:
                await measure(
                    options.postgres,
                    options.channels,
                    options.rate,
                    options.latency,
                    search_path=schema,
                )
    if not options.postgres:
        print("postgresql skipped: set QUIZ_TEST_POSTGRES_URL or pass --postgres URL")


if __name__ == "__main__":
    asyncio.run(main())
