"""Fault suite: counts what the bot loses when things go wrong. The goal of each is 0.

1. Acknowledged-but-lost clicks: `quizmaster run` serves Slack over HTTP (against
   the fake Slack of the tests); a burst of signed clicks by distinct members is
   fired at one question, all at once as Slack would, and the process gets
   SIGTERM (then, in a second run, SIGKILL) once a third are answered. Every
   click answered HTTP 200 must be in the database.
2. Lost daily posts: N channels (default 500) whose daily question is due at the
   same minute, where 30 % of first posts fail with a passing error (429, 5xx,
   timeout). Counts channels left without their question, and any doubled.
3. Cross-channel delay: two channels run live quizzes; in one, every platform
   call hangs. Prints how much later the healthy channel's next question came
   than in a run where nothing hangs.

    python bench/faults.py [--clicks 500] [--channels 500] [--runs 3]
"""

from __future__ import annotations

import argparse
import asyncio
import random
import signal
import statistics
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from common import ROOT, NullAdapter, schedule_daily

from bot.chat import DeliveryError, MessageRef, OutMessage, Target
from bot.clock import SystemClock
from bot.quiz.bank import load_banks
from bot.quiz.service import QuizService
from bot.storage.db import open_database, upgrade
from bot.storage.repository import Repository
from tests.fakes.clock import FakeClock
from tests.slack_burst import burst_then_stop

CATALOG, _ = load_banks([ROOT / "questions"])


# -- 1. clicks acknowledged, then lost ---------------------------------------------------


async def clicks_lost(folder: Path, clicks: int, stop: signal.Signals) -> tuple[int, int]:
    """(clicks answered 200, of those not stored) when `stop` hits a third of the way."""
    burst = await burst_then_stop(folder, stop, clicks, after=clicks // 3)
    return len(burst.acked), len(burst.lost)


# -- 2. daily posts lost to passing failures ------------------------------------------------


class FlakyAdapter(NullAdapter):
    """Fails the first post in a share of channels with a passing error."""

    platform = "bench"

    def __init__(self, share: float, rng: random.Random) -> None:
        super().__init__()
        self.share = share
        self.rng = rng
        self.tried: set[str] = set()
        self.failed_first: set[str] = set()
        self.questions: dict[str, int] = {}

    async def send(self, target: Target, message: OutMessage) -> MessageRef:
        first = target.channel not in self.tried
        self.tried.add(target.channel)
        if message.buttons and first and self.rng.random() < self.share:
            self.failed_first.add(target.channel)
            raise DeliveryError("ratelimited", permanent=False)
        if message.buttons:
            self.questions[target.channel] = self.questions.get(target.channel, 0) + 1
        return await super().send(target, message)


async def daily_posts_lost(url: str, channels: int, seed: int) -> tuple[int, int, int]:
    """(channels whose first post failed, channels without a question, doubled)."""
    database = open_database(url)
    engine = database.writer
    await upgrade(engine)
    repository = Repository(database)
    due = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
    await schedule_daily(repository, channels, due)
    clock = FakeClock(due)
    service = QuizService(repository, CATALOG, clock, rng=random.Random(seed))
    adapter = FlakyAdapter(0.3, random.Random(seed))
    service.register(adapter)
    # Step through the next half hour as the timer loop would.
    end = due + timedelta(minutes=30)
    while clock.now() <= end:
        await service.tick()
        upcoming = await repository.posts.next_publish_retry([adapter.platform])
        if upcoming is None or upcoming > end:
            break
        clock.set(max(upcoming, clock.now()))
    missing = sum(1 for n in range(channels) if adapter.questions.get(f"c{n}", 0) == 0)
    doubled = sum(1 for count in adapter.questions.values() if count > 1)
    await database.dispose()
    return len(adapter.failed_first), missing, doubled


# -- 3. one channel hanging beside a healthy one ------------------------------------------


class HangingAdapter(NullAdapter):
    """Every call in `hanging` channels waits until released; notes when each
    question reached each channel."""

    platform = "bench"

    def __init__(self, hanging: set[str]) -> None:
        super().__init__()
        self.hanging = hanging
        self.released = asyncio.Event()
        self.posted_at: dict[str, list[float]] = {}
        self.second_question = asyncio.Event()

    async def _maybe_hang(self, target: Target) -> None:
        if target.channel in self.hanging:
            await self.released.wait()

    async def send(self, target: Target, message: OutMessage) -> MessageRef:
        await self._maybe_hang(target)
        if message.buttons:
            times = self.posted_at.setdefault(target.channel, [])
            times.append(time.monotonic())
            if target.channel == "well" and len(times) == 2:
                self.second_question.set()
        return await super().send(target, message)

    async def edit(self, ref: MessageRef, message: OutMessage) -> None:
        await self._maybe_hang(ref.target)


async def next_question_delay(url: str, hang: bool) -> float:
    """Seconds from the healthy channel's deadline to its next question."""
    database = open_database(url)
    engine = database.writer
    await upgrade(engine)
    service = QuizService(Repository(database), CATALOG, SystemClock(), rng=random.Random(3))
    adapter = HangingAdapter({"sick"} if hang else set())
    service.register(adapter)
    timers = asyncio.create_task(service.run_timers())
    try:
        # The sick channel's question closes first; its reveal then hangs.
        await service.start(Target("bench", "g", "sick"), "mod", questions=2, seconds=2)
        await service.start(Target("bench", "g", "well"), "mod", questions=2, seconds=3)
        deadline = time.monotonic() + 3
        await asyncio.wait_for(adapter.second_question.wait(), 60)
        return adapter.posted_at["well"][1] - deadline
    finally:
        adapter.released.set()
        service.shutdown()
        await timers
        await service.drain()
        await database.dispose()


def spread(values: list[float], unit: str = "", digits: int = 0) -> str:
    if len(values) == 1:
        return f"{values[0]:.{digits}f}{unit}"
    return (
        f"{min(values):.{digits}f}–{max(values):.{digits}f}{unit} "
        f"(median {statistics.median(values):.{digits}f}{unit})"
    )


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--clicks", type=int, default=500)
    parser.add_argument("--channels", type=int, default=500)
    parser.add_argument("--runs", type=int, default=3)
    options = parser.parse_args()

    for stop in (signal.SIGTERM, signal.SIGKILL):
        results = []
        for _ in range(options.runs):
            with tempfile.TemporaryDirectory() as folder:
                results.append(await clicks_lost(Path(folder), options.clicks, stop))
        acked = [float(a) for a, _ in results]
        lost = [float(lost) for _, lost in results]
        print(
            f"clicks, {stop.name} mid-burst of {options.clicks}: acknowledged "
            f"{spread(acked)}, acknowledged but lost {spread(lost)}"
        )

    for run in range(options.runs):
        with tempfile.TemporaryDirectory() as folder:
            failed, missing, doubled = await daily_posts_lost(
                f"sqlite+aiosqlite:///{folder}/bench.db", options.channels, seed=run
            )
        print(
            f"daily posts, {options.channels} channels, 30 % of first posts failing: "
            f"first post failed in {failed}, lost {missing}, doubled {doubled}"
        )

    delays = {False: [], True: []}  # type: dict[bool, list[float]]
    for _ in range(options.runs):
        for hang in (False, True):
            with tempfile.TemporaryDirectory() as folder:
                delays[hang].append(
                    await next_question_delay(f"sqlite+aiosqlite:///{folder}/bench.db", hang)
                )
    extra = [sick - well for well, sick in zip(delays[False], delays[True], strict=True)]
    print(
        "healthy channel's next question after its deadline: "
        f"alone {spread(delays[False], ' s', 2)}, beside a hanging channel "
        f"{spread(delays[True], ' s', 2)}; extra delay {spread(extra, ' s', 2)}"
    )


if __name__ == "__main__":
    asyncio.run(main())
