"""Clicks during leaderboards on SQLite: does a click wait for a leaderboard?

Over a generated history (tests/datagen.py, the population of bench/boards.py)
a live question stays open while a steady stream of members clicks it through
QuizService.handle_click, in blocks that alternate between clicks alone and
clicks while another task runs `/quiz leaderboard server all` in the same
community back to back through handle_command. Prints the clicks' p50 and p99
in both phases and the ratio of the p99s, per round; the goal is p99 during
leaderboards <= 2x p99 alone.

It measures the bot as it runs (reads on their own read-only connections) and,
for comparison, with every read on the one write connection, as before
(--no-compare skips that). Timings vary on shared machines: compare runs on
one box.

    python bench/clicks.py [--answers 1000000] [--block 100] [--blocks 5] [--every-ms 20]
                           [--rounds 3] [--no-compare]
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import tempfile
import time
from dataclasses import dataclass

from boards import NOW, SEED, SHAPE
from common import ROOT, HeldClock, NullAdapter

from bot.chat import Command, Interaction, Target
from bot.quiz import texts
from bot.quiz.bank import Catalog, load_banks
from bot.quiz.service import QuizService
from bot.storage.db import Database, create_engine, open_database, upgrade
from bot.storage.repository import Repository
from tests.datagen import PLATFORM, SCHEMA_REVISION, generate

RATIO_GOAL = 2.0


@dataclass
class Round:
    alone: list[float]
    during: list[float]
    boards: list[float]


def p99(samples: list[float]) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f}"


class Clicker:
    """Members clicking one open live question: one click every `every` seconds,
    each arriving on time whether or not the ones before have been answered."""

    def __init__(self, service: QuizService, target: Target, buttons: tuple[str, ...]) -> None:
        self.service = service
        self.target = target
        self.buttons = buttons

    async def stream(self, name: str, count: int, every: float) -> list[float]:
        latencies: list[float] = []

        async def click(number: int) -> None:
            custom_id = self.buttons[number % len(self.buttons)]
            interaction = Interaction(self.target, f"{name}-{number}", custom_id)
            started = time.perf_counter()
            reply = await self.service.handle_click(interaction)
            latencies.append(time.perf_counter() - started)
            if not reply.text.startswith("Locked in"):
                raise RuntimeError(f"click {name}-{number}: {reply.text}")

        loop = asyncio.get_running_loop()
        began = loop.time()
        clicks = []
        for number in range(count):
            wait = began + number * every - loop.time()
            if wait > 0:
                await asyncio.sleep(wait)
            clicks.append(asyncio.create_task(click(number)))
        await asyncio.gather(*clicks)
        return latencies


async def boards_back_to_back(
    service: QuizService, command: Command, started: asyncio.Event, stop: asyncio.Event
) -> list[float]:
    failed = texts.common.failure().text
    timings: list[float] = []
    while not stop.is_set():
        began = time.perf_counter()
        reply = await service.handle_command(command)
        timings.append(time.perf_counter() - began)
        if reply.text == failed:
            raise RuntimeError("the leaderboard failed: see the log")
        started.set()
    return timings


async def measure(
    database: Database,
    catalog: Catalog,
    channel: Target,
    options: argparse.Namespace,
) -> list[Round]:
    service = QuizService(Repository(database), catalog, HeldClock(NOW), random.Random(1))
    adapter = NullAdapter()
    adapter.platform = PLATFORM
    service.register(adapter)
    # The clock stands still, so the question stays open however long this takes.
    await service.start(channel, "moderator", questions=1, seconds=600)
    clicker = Clicker(service, channel, adapter.buttons)
    board = Command("leaderboard", channel, "viewer", args={"scope": "server", "period": "all"})
    every = options.every_ms / 1000

    await clicker.stream("warm-up", 20, every)  # caches, the prepared INSERT, the pools
    await service.handle_command(board)
    rounds = []
    for number in range(options.rounds):
        # Short alternating blocks, so a change in the machine's load while a
        # round runs falls on both phases alike.
        run = Round([], [], [])
        for block in range(options.blocks):
            run.alone += await clicker.stream(f"alone-{number}-{block}", options.block, every)
            started, stop = asyncio.Event(), asyncio.Event()
            boards = asyncio.create_task(boards_back_to_back(service, board, started, stop))
            await started.wait()
            run.during += await clicker.stream(f"during-{number}-{block}", options.block, every)
            stop.set()
            run.boards += await boards
        rounds.append(run)
    await service.stop(channel)
    return rounds


def report(label: str, rounds: list[Round]) -> None:
    print(f"\n{label}")
    print(
        f"{'round':>5}  {'alone p50/p99':>16}  {'during boards p50/p99':>22}  "
        f"{'p99 ratio':>9}  {'boards (mean)':>16}"
    )
    ratios = []
    for number, run in enumerate(rounds, 1):
        ratio = p99(run.during) / p99(run.alone)
        ratios.append(ratio)
        alone = f"{ms(statistics.median(run.alone))} / {ms(p99(run.alone))} ms"
        during = f"{ms(statistics.median(run.during))} / {ms(p99(run.during))} ms"
        boards = f"{len(run.boards)} ({ms(statistics.mean(run.boards))} ms)"
        print(f"{number:>5}  {alone:>16}  {during:>22}  {ratio:>9.2f}  {boards:>16}")
    alone = [sample for run in rounds for sample in run.alone]
    during = [sample for run in rounds for sample in run.during]
    pooled = p99(during) / p99(alone)
    meets = "meets goal" if pooled <= RATIO_GOAL else "misses goal"
    print(
        f"  all  {ms(p99(alone)):>9} ms p99  {ms(p99(during)):>15} ms p99  {pooled:>9.2f}"
        f"  (rounds {min(ratios):.2f}–{max(ratios):.2f}; goal <= {RATIO_GOAL:g}: {meets})"
    )


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--answers", type=int, default=1_000_000)
    parser.add_argument("--block", type=int, default=100, help="clicks per block")
    parser.add_argument("--blocks", type=int, default=5, help="blocks per phase and round")
    parser.add_argument("--every-ms", type=float, default=20.0, help="time between clicks")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--no-compare", action="store_true", help="skip the one-connection run")
    options = parser.parse_args()
    catalog, _ = load_banks([ROOT / "questions"])
    with tempfile.TemporaryDirectory() as folder:
        url = f"sqlite+aiosqlite:///{folder}/clicks.db"
        database = open_database(url)
        try:
            await upgrade(database.writer, SCHEMA_REVISION)
            began = time.perf_counter()
            info = await generate(
                database.writer, answers=options.answers, seed=SEED, now=NOW, **SHAPE
            )
            generated = time.perf_counter() - began
            await upgrade(database.writer)
        finally:
            await database.dispose()
        print(
            f"SQLite, {info.answers:,} answers (generated in {generated:.0f} s); "
            f"per round and phase {options.blocks} blocks of {options.block} clicks, one every "
            f"{options.every_ms:g} ms, on a live question in the busiest channel's community"
        )
        modes = [("reads on their own connections (as the bot runs)", False)]
        if not options.no_compare:
            modes.append(("every read on the one write connection (before)", True))
        for number, (label, one_connection) in enumerate(modes):
            if one_connection:
                writer = create_engine(url)
                database = Database(writer, writer)
            else:
                database = open_database(url)
            channel = Target(PLATFORM, info.community, f"bench-live-{number}")
            try:
                rounds = await measure(database, catalog, channel, options)
            finally:
                await database.dispose()
            report(label, rounds)


if __name__ == "__main__":
    asyncio.run(main())
