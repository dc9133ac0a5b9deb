"""Dashboard benchmark at scale: p95 server time of each page at 1,000,000 answers.

On SQLite in a temp file (and PostgreSQL in a fresh schema when
QUIZ_TEST_POSTGRES_URL or --postgres is given) it writes bench/boards.py's
population with tests/datagen.py at schema revision 0005 and migrates to head
(so migration 0010 backfills `post_votes`), then serves the dashboard on
127.0.0.1 and requests every page --calls times after one warm-up, from its
signed link, through a real HTTP client. The time measured is the server's:
from the request reaching the handler to the response being built. The goal
per page is p95 < 50 ms at 1M answers.

    python bench/dashboard.py [--answers 1000000] [--calls 50] [--postgres URL] [--no-sqlite]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import time
from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager

from aiohttp import ClientSession, web
from boards import NOW, p95, populate, postgres_url, sqlite_url
from common import ROOT, HeldClock, NullAdapter

from bot.chat import Target
from bot.health import start_health_server
from bot.quiz.bank import load_banks
from bot.quiz.service import QuizService
from bot.storage.db import open_database
from bot.storage.repository import Repository
from bot.web.links import DashboardLinks
from bot.web.pages import web_mounts
from bot.web.tokens import Signer
from tests.datagen import PLATFORM, GeneratedInfo

P95_GOAL_MS = 50.0
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def pages(links: DashboardLinks, info: GeneratedInfo) -> list[tuple[str, str]]:
    """(label, URL) of every page, for the busiest community and the heaviest member."""
    community = Target(PLATFORM, info.community, info.busy_channel.channel)
    board = links.community(community)
    questions = board.replace("?t=", "/questions?t=")
    found = [
        (f"community {period}", f"{board}&period={period}")
        for period in ("week", "month", "all", "streaks")
    ]
    found += [
        (f"questions {period}", f"{questions}&period={period}")
        for period in ("week", "month", "all")
    ]
    found.append(("member (heaviest)", links.member(info.heavy_member_channel, info.heavy_member)))
    return found


async def measure(url: str, answers: int, calls: int, search_path: str | None) -> None:
    database = open_database(url, search_path=search_path)
    try:
        info, generate_s, migrate_s = await populate(database.writer, answers)
        print(
            f"generated {answers:,} answers in {generate_s:.1f} s, "
            f"migrated to head in {migrate_s:.1f} s"
        )
        catalog, _ = load_banks([ROOT / "questions"])
        clock = HeldClock(NOW)
        links = DashboardLinks(Signer("benchmark secret, long enough", clock), "http://bench")
        service = QuizService(Repository(database), catalog, clock, random.Random(1), links=links)
        adapter = NullAdapter()
        adapter.platform = PLATFORM
        service.register(adapter)

        spent: list[float] = []

        def timed(app: web.Application) -> None:
            @web.middleware
            async def server_time(request: web.Request, handler: Handler) -> web.StreamResponse:
                started = time.perf_counter()
                try:
                    return await handler(request)
                finally:
                    spent.append(time.perf_counter() - started)

            app.middlewares.append(server_time)

        async def database_ok() -> bool:
            return True

        runner = await start_health_server(
            service.adapters,
            database_ok,
            0,
            host="127.0.0.1",
            mounts=[timed, *web_mounts(service, links)],
        )
        host, port = runner.addresses[0][:2]
        try:
            async with ClientSession() as client:
                print(f"{'page':<20} {'p95 server':>12} {'bytes':>9}  meets goal")
                for label, link in pages(links, info):
                    address = link.replace("http://bench", f"http://{host}:{port}")
                    samples, size = [], 0
                    for attempt in range(calls + 1):
                        spent.clear()
                        async with client.get(address) as response:
                            body = await response.read()
                            if response.status != 200:
                                raise RuntimeError(f"{label}: HTTP {response.status}")
                            size = len(body)
                        if attempt:  # the first request only warms caches up
                            samples.append(spent[-1])
                    ms = p95(samples) * 1000
                    meets = "yes" if ms < P95_GOAL_MS else "no"
                    print(f"{label:<20} {ms:9.1f} ms {size:9,}  {meets}")
        finally:
            await runner.cleanup()
    finally:
        await database.dispose()


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--answers", type=int, default=1_000_000)
    parser.add_argument("--calls", type=int, default=50, help="timed requests per page")
    parser.add_argument("--postgres", default=os.environ.get("QUIZ_TEST_POSTGRES_URL"))
    parser.add_argument("--no-sqlite", action="store_true", help="PostgreSQL only")
    options = parser.parse_args()
    print(f"goal per page: p95 server time < {P95_GOAL_MS:g} ms at {options.answers:,} answers")
    Place = Callable[[], AbstractAsyncContextManager[tuple[str, str | None]]]
    backends: list[tuple[str, Place]] = [] if options.no_sqlite else [("sqlite", sqlite_url)]
    if options.postgres:
        backends.append(("postgresql", lambda: postgres_url(options.postgres)))
    else:
        print("postgresql skipped: set QUIZ_TEST_POSTGRES_URL or pass --postgres URL")
    for backend, place in backends:
        print(f"\n{backend}:")
        async with place() as (url, schema):
            await measure(url, options.answers, options.calls, schema)


if __name__ == "__main__":
    asyncio.run(main())
