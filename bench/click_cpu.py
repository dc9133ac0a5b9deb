"""CPU of one stored click inside the bot, with no platform library around it.

Members click a live question and a daily question one at a time through
QuizService.handle_click (each click waits for the one before, so every click
pays its own transaction, as a lone click does). Prints the process CPU per
click for each kind. With --profile it writes a cProfile of the timed clicks,
so a change to the click path can be checked against where the time goes.

    python bench/click_cpu.py [--clicks 2000] [--postgres URL] [--profile out.prof]
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import os
import random
import tempfile
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from common import ROOT, NullAdapter, postgres_schema, run_checkpoints

from bot.chat import Command, Interaction, Target
from bot.quiz.bank import load_banks
from bot.quiz.buttons import parse_answer_custom_id
from bot.quiz.service import QuizService
from bot.storage.db import open_database, upgrade
from bot.storage.repository import Repository

START = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
WARMUP = 200


class SetClock:
    """Moves only when told; waits return at once."""

    def __init__(self, moment: datetime) -> None:
        self.moment = moment

    def now(self) -> datetime:
        return self.moment

    async def wait(self, event: asyncio.Event, seconds: float | None) -> None:
        return None


@dataclass
class Cpu:
    """Seconds of CPU per click: the whole process, and the event loop's thread
    (the rest is SQLite's work in aiosqlite's threads)."""

    process: float
    loop: float

    def __str__(self) -> str:
        return f"{self.process * 1e6:5.0f} µs/click ({self.loop * 1e6:4.0f} on the loop)"


async def clicks(
    service: QuizService, target: Target, buttons: tuple[str, ...], name: str, count: int
) -> None:
    for number in range(count):
        interaction = Interaction(target, f"{name}-{number}", buttons[number % len(buttons)])
        reply = await service.handle_click(interaction)
        if "answered" in reply.text or "closed" in reply.text or "not count" in reply.text:
            raise RuntimeError(f"click {name}-{number}: {reply.text}")


async def timed(
    service: QuizService,
    target: Target,
    buttons: tuple[str, ...],
    name: str,
    count: int,
    profiler: cProfile.Profile | None,
) -> Cpu:
    await clicks(service, target, buttons, f"{name}-warm", WARMUP)
    cpu, loop_cpu = time.process_time(), time.thread_time()
    if profiler is not None:
        profiler.enable()
    await clicks(service, target, buttons, name, count)
    if profiler is not None:
        profiler.disable()
    return Cpu((time.process_time() - cpu) / count, (time.thread_time() - loop_cpu) / count)


async def measure(url: str, options: argparse.Namespace, search_path: str | None = None) -> None:
    database = open_database(url, search_path=search_path)
    await upgrade(database.writer)
    checkpoints = await run_checkpoints(database)
    catalog, _ = load_banks([ROOT / "questions"])
    clock = SetClock(START)
    service = QuizService(Repository(database), catalog, clock, random.Random(1))
    adapter = NullAdapter()
    service.register(adapter)
    profiler = cProfile.Profile() if options.profile else None
    try:
        live = Target("bench", "guild", "live")
        await service.start(live, "moderator", questions=1, seconds=3600)
        live_cpu = await timed(service, live, adapter.buttons, "live", options.clicks, profiler)

        daily = Target("bench", "guild", "daily")
        command = Command(
            "schedule",
            daily,
            "moderator",
            args={"action": "daily", "time": "10:00"},
            is_moderator=True,
        )
        reply = await service.handle_command(command)
        assert "10:00" in reply.text, reply.text
        clock.moment = START + timedelta(hours=1)
        before = adapter.posts
        await service.tick()
        assert adapter.posts == before + 1, "the daily question was not posted"
        assert parse_answer_custom_id(adapter.buttons[0]) is not None
        daily_cpu = await timed(service, daily, adapter.buttons, "daily", options.clicks, profiler)
        print(
            f"{database.dialect:<10} live {live_cpu}   daily {daily_cpu}   "
            f"({options.clicks} clicks each, one at a time)",
            flush=True,
        )
        if profiler is not None:
            path = f"{options.profile}.{database.dialect}"
            profiler.dump_stats(path)
            print(f"{'':<10} profile written to {path}")
    finally:
        service.shutdown()
        if checkpoints is not None:
            await checkpoints.stop()
        await database.dispose()


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--clicks", type=int, default=2000)
    parser.add_argument("--postgres", default=os.environ.get("QUIZ_TEST_POSTGRES_URL"))
    parser.add_argument("--profile", help="write a cProfile of the timed clicks here")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        await measure(f"sqlite+aiosqlite:///{folder}/cpu.db", options)
    if options.postgres:
        async with postgres_schema(options.postgres) as schema:
            await measure(options.postgres, options, schema)


if __name__ == "__main__":
    asyncio.run(main())
