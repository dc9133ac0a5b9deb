"""Memory benchmark: one bot process with 10,000 channels that each have a
daily schedule (set by `/quiz schedule daily` through the service, so every
channel passes through the channel cache) and 1,000 live quizzes with an open
question; then all 10,000 daily questions come due at once and go out.

Prints the peak resident set size (VmHWM) after each step. Each backend runs
in a process of its own, so one's peak does not hide the other's. SQLite
always; PostgreSQL when QUIZ_TEST_POSTGRES_URL or --postgres is given.

    python bench/memory.py [--schedules 10000] [--quizzes 1000] [--postgres URL]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime

from common import ROOT, HeldClock, NullAdapter, postgres_schema

from bot.chat import Command, Target
from bot.heap import start_up_frozen
from bot.quiz.bank import load_banks
from bot.quiz.service import QuizService
from bot.storage.db import open_database, upgrade
from bot.storage.repository import Repository


def peak_mb() -> float:
    """The process's peak resident set so far (VmHWM), in MB."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return float("nan")


async def measure(url: str, schedules: int, quizzes: int, search_path: str | None) -> None:
    database = open_database(url, search_path=search_path)
    engine = database.writer
    await upgrade(engine)
    repository = Repository(database)
    catalog, _ = load_banks([ROOT / "questions"])
    clock = HeldClock(datetime(2026, 3, 2, 8, 0, tzinfo=UTC))
    service = QuizService(repository, catalog, clock, random.Random(1))
    adapter = NullAdapter()
    service.register(adapter)
    # After start-up, as `quizmaster run` keeps the heap once connected (bot/heap.py).
    with start_up_frozen():
        began = time.perf_counter()
        steps = [f"start {peak_mb():.0f} MB"]
        for number in range(schedules):
            target = Target("bench", f"guild-{number % 50}", f"c{number}")
            reply = await service.handle_command(
                Command(
                    "schedule",
                    target,
                    "mod",
                    is_moderator=True,
                    args={"action": "daily", "time": "09:00"},
                )
            )
            assert "09:00" in reply.text, reply.text
        steps.append(f"{schedules:,} schedules {peak_mb():.0f} MB")
        for number in range(quizzes):
            target = Target("bench", f"guild-{number % 50}", f"c{number}")
            await service.start(target, "host", questions=10, seconds=600)
        steps.append(f"{quizzes:,} open quiz questions {peak_mb():.0f} MB")
        before = adapter.posts
        clock.moment = datetime(2026, 3, 2, 9, 0, 5, tzinfo=UTC)
        await service.tick()  # the quizzes' questions close too, and their next ones go out
        dailies = adapter.posts - before - quizzes
        steps.append(f"{dailies:,} daily questions posted {peak_mb():.0f} MB")
        print(
            f"{engine.dialect.name:<10} peak RSS: " + "; ".join(steps),
            f"({time.perf_counter() - began:.0f} s)",
        )
    await database.dispose()


async def one(backend: str, options: argparse.Namespace) -> None:
    if backend == "sqlite":
        with tempfile.TemporaryDirectory() as folder:
            url = f"sqlite+aiosqlite:///{folder}/bench.db"
            await measure(url, options.schedules, options.quizzes, None)
    else:
        async with postgres_schema(options.postgres) as schema:
            await measure(options.postgres, options.schedules, options.quizzes, schema)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--schedules", type=int, default=10_000)
    parser.add_argument("--quizzes", type=int, default=1_000)
    parser.add_argument("--postgres", default=os.environ.get("QUIZ_TEST_POSTGRES_URL"))
    parser.add_argument("--only", choices=["sqlite", "postgresql"], help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.only:
        asyncio.run(one(options.only, options))
        return
    backends = ["sqlite"] + (["postgresql"] if options.postgres else [])
    for backend in backends:
        # A fresh process each, so each backend's peak is its own.
        subprocess.run([sys.executable, __file__, *sys.argv[1:], "--only", backend], check=True)
    if not options.postgres:
        print("postgresql skipped: set QUIZ_TEST_POSTGRES_URL or pass --postgres URL")


if __name__ == "__main__":
    main()
