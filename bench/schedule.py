"""Scheduling benchmark: N channels (default 500) whose daily question is due
at the same minute, posted by one timer tick.

Prints how long the tick took until every channel had its question, and posts
per second, with no platform latency and with a simulated round trip per post
(posts go out concurrently, so the round trip should barely add up). Runs on
SQLite and, when QUIZ_TEST_POSTGRES_URL or --postgres is given, on PostgreSQL.

    python bench/schedule.py [--channels 500] [--latency 0.15] [--postgres URL]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import tempfile
import time
from datetime import UTC, datetime, timedelta

from common import ROOT, HeldClock, NullAdapter, postgres_schema, schedule_daily

from bot.quiz.bank import load_banks
from bot.quiz.service import QuizService
from bot.storage.db import open_database, upgrade
from bot.storage.repository import Repository


async def measure(url: str, channels: int, latency: float, search_path: str | None = None) -> None:
    database = open_database(url, search_path=search_path)
    engine = database.writer
    await upgrade(engine)
    repository = Repository(database)
    due = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
    await schedule_daily(repository, channels, due)
    catalog, _ = load_banks([ROOT / "questions"])
    service = QuizService(repository, catalog, HeldClock(due + timedelta(seconds=5)))
    adapter = NullAdapter(latency)
    service.register(adapter)
    began = time.perf_counter()
    await service.tick()
    elapsed = time.perf_counter() - began
    print(
        f"{engine.dialect.name:<10} {channels} channels, {latency * 1000:.0f} ms per post: "
        f"posted={adapter.posts}  all out in {elapsed:.2f} s  "
        f"({adapter.posts / elapsed:,.0f} posts/s)"
    )
    await database.dispose()


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--channels", type=int, default=500)
    parser.add_argument("--latency", type=float, default=0.15)
    parser.add_argument("--postgres", default=os.environ.get("QUIZ_TEST_POSTGRES_URL"))
    options = parser.parse_args()
    random.seed(1)
    for latency in (0.0, options.latency):
        with tempfile.TemporaryDirectory() as folder:
            await measure(f"sqlite+aiosqlite:///{folder}/bench.db", options.channels, latency)
        if options.postgres:
            async with postgres_schema(options.postgres) as schema:
                await measure(options.postgres, options.channels, latency, search_path=schema)
    if not options.postgres:
        print("postgresql skipped: set QUIZ_TEST_POSTGRES_URL or pass --postgres URL")


if __name__ == "__main__":
    asyncio.run(main())
