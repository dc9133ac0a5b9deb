"""Discord click latency: Quizmaster against a bare discord.py bot, same fake, same run.

The fake Discord of the tests runs in a process of its own
(bench/discord_fake_process.py) and sends button clicks at a steady rate, each
by a different member, open loop: on schedule whether or not earlier clicks were
answered. Per click it times INTERACTION_CREATE sent → interaction callback
received. Measured in turn:

- bare:   a plain discord.Client whose on_interaction replies ephemerally;
- sqlite / postgresql: Quizmaster's Discord adapter and quiz service with one
  live question open (PostgreSQL when QUIZ_TEST_POSTGRES_URL or --postgres).

Prints p50/p99 and CPU per click of each, and ours over the bare bot's: p99
(goal <= 2 in each round, the bare p99 counted as at least 7.5 ms, and no
round over 3) and CPU (goal <= 1.3). With --burst N the clicks are sent all
at once instead, and throughput (clicks answered per second, first sent to
last answered) is compared too (goal >= 0.9). Checks that every click was
answered "Locked in" and stored once. Timings vary on shared machines: compare
the figures within one run.

    python bench/discord_clicks.py [--rate 200] [--seconds 10] [--burst N] [--rounds 1]
                                   [--postgres URL] [--wal-autocheckpoint PAGES]
                                   [--profile out.prof]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import cProfile
import json
import logging
import os
import random
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import callgrind
import discord
from callgrind import counted, counting, rerun
from common import ROOT, postgres_schema, run_checkpoints
from discord_fake_process import GUILD, MODERATOR, quiz_channel

from bot.adapters.discord import platform as discord_platform
from bot.adapters.discord.platform import DiscordAdapter, point_at
from bot.chat import Target
from bot.clock import SystemClock
from bot.config import Settings
from bot.heap import start_up_frozen
from bot.quiz.bank import load_banks
from bot.quiz.buttons import parse_answer_custom_id
from bot.quiz.service import QuizService
from bot.storage.db import open_database, upgrade
from bot.storage.repository import Repository

# Clicks before the timed ones, not counted: first-use costs (connections,
# caches, code paths) are not what a steady rate is about.
WARMUP = 100

# --profile: where the timed clicks' cProfile goes (one file per bot measured).
PROFILE: str | None = None
# --wal-autocheckpoint: the SQLite write connection's WAL threshold, for this
# benchmark only (0 measures the clicks with no checkpoint inside a commit).
WAL_AUTOCHECKPOINT: int | None = None


class FakeProcess:
    """The fake Discord's process, and its JSON-lines control channel."""

    def __init__(self, process: asyncio.subprocess.Process, hello: dict[str, Any]) -> None:
        self.process = process
        self.token: str = hello["token"]
        self.api_url: str = hello["api_url"]
        self.gateway_url: str = hello["gateway_url"]

    async def ask(self, op: str, **details: Any) -> dict[str, Any]:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write((json.dumps({"op": op, **details}) + "\n").encode())
        await self.process.stdin.drain()
        answer: dict[str, Any] = json.loads(await self.process.stdout.readline())
        return answer


@contextlib.asynccontextmanager
async def fake_discord(members: int) -> AsyncIterator[FakeProcess]:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        str(Path(__file__).with_name("discord_fake_process.py")),
        "--members",
        str(members),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        limit=2**24,
    )
    try:
        assert process.stdout is not None
        yield FakeProcess(process, json.loads(await process.stdout.readline()))
    finally:
        if process.stdin is not None:
            process.stdin.close()
        try:
            await asyncio.wait_for(process.wait(), 5)
        except TimeoutError:
            process.kill()
            await process.wait()


@dataclass
class Result:
    name: str
    latencies: list[float]
    unanswered: int
    replies: dict[str, int]
    cpu_per_click: float  # seconds of this process's CPU (the bot's) per timed click
    problems: list[str]
    seconds: float = 0.0  # first timed click sent to its last answer

    @property
    def throughput(self) -> float:
        return len(self.latencies) / self.seconds if self.seconds else 0.0

    def percentile(self, share: float) -> float:
        ordered = sorted(self.latencies)
        return ordered[min(len(ordered) - 1, int(len(ordered) * share))] if ordered else 0.0


async def timed_clicks(
    fake: FakeProcess,
    message: dict[str, Any],
    rate: float,
    count: int,
    name: str,
    profile: str | None = None,
) -> Result:
    """WARMUP untimed clicks, then `count` timed ones, each by a new member;
    with `profile`, a cProfile of the timed ones is written there."""
    await fake.ask("clicks", **message, first_member=0, count=WARMUP, rate=rate)
    profiler = cProfile.Profile() if profile else None
    cpu = time.process_time()
    if profiler is not None:
        profiler.enable()
    with counted(name):
        answer = await fake.ask("clicks", **message, first_member=WARMUP, count=count, rate=rate)
    if profiler is not None:
        profiler.disable()
        profiler.dump_stats(f"{profile}.{name}")
    cpu_per_click = (time.process_time() - cpu) / count
    return Result(
        name,
        answer["latencies"],
        answer["unanswered"],
        answer["replies"],
        cpu_per_click,
        [],
        answer["seconds"],
    )


async def wait_until_connected(adapter: DiscordAdapter) -> None:
    """discord.py runs on_ready (which marks the adapter connected) just after
    `start` returns; a question posted before that would wait for a retry."""
    for _ in range(500):
        if adapter.connected:
            return
        await asyncio.sleep(0.01)
    raise RuntimeError("the Discord adapter never connected")


# -- the bare bot ---------------------------------------------------------------------------


class BareBot(discord.Client):
    """What any discord.py bot does at the least: answer each click privately."""

    async def on_interaction(self, interaction: discord.Interaction[Any]) -> None:
        await interaction.response.send_message("Locked in", ephemeral=True)


async def connected(
    client: discord.Client, token: str
) -> tuple[discord.Client, asyncio.Task[None]]:
    await client.login(token)
    connection = asyncio.create_task(client.connect())
    await client.wait_until_ready()
    return client, connection


async def disconnect(client: discord.Client, connection: asyncio.Task[None]) -> None:
    await client.close()
    with contextlib.suppress(Exception, asyncio.CancelledError):
        await connection


async def measure_bare(fake: FakeProcess, rate: float, count: int) -> Result:
    intents = discord.Intents.none()
    intents.guilds = True
    client, connection = await connected(
        BareBot(intents=intents, guild_ready_timeout=0.05), fake.token
    )
    try:
        message = await fake.ask("plain_message")
        return await timed_clicks(fake, message, rate, count, "bare", PROFILE)
    finally:
        await disconnect(client, connection)


# -- Quizmaster -------------------------------------------------------------------------------


async def measure_quizmaster(
    fake: FakeProcess,
    url: str,
    channel: str,
    rate: float,
    count: int,
    search_path: str | None = None,
) -> Result:
    database = open_database(url, search_path=search_path)
    await upgrade(database.writer)
    if WAL_AUTOCHECKPOINT is not None and database.dialect == "sqlite":
        async with database.writer.connect() as connection:
            await connection.exec_driver_sql(f"PRAGMA wal_autocheckpoint={WAL_AUTOCHECKPOINT}")
    checkpoints = await run_checkpoints(database)
    catalog, _ = load_banks([ROOT / "questions"])
    service = QuizService(Repository(database), catalog, SystemClock(), random.Random(1))
    settings = Settings(  # type: ignore[call-arg]
        _env_file=None,
        DISCORD_TOKEN=fake.token,
        QUIZ_DISCORD_GUILD_IDS=GUILD,
        QUIZ_DISCORD_API_URL=fake.api_url,
        QUIZ_DISCORD_GATEWAY_URL=fake.gateway_url,
    )
    platform = discord_platform.platform(settings, service, guild_ready_timeout=0.05)
    service.register(platform.adapter)
    await platform.start()
    await wait_until_connected(platform.adapter)
    timers = asyncio.create_task(service.run_timers())
    name = database.dialect
    try:
        # Open long enough for the warm-up and every timed click.
        seconds = int((WARMUP + count) / rate) + 60
        started = await service.start(
            Target("discord", GUILD, channel), MODERATOR, questions=1, seconds=seconds
        )
        assert started.text.startswith("Starting a quiz"), started.text
        message = await fake.ask("question", channel=channel)
        with start_up_frozen():  # as `quizmaster run` does once connected
            result = await timed_clicks(fake, message, rate, count, name, PROFILE)
        post_id, _ = parse_answer_custom_id(message["custom_ids"][0]) or (0, 0)
        stored = await service.repository.answers.answer_count(post_id)
        if stored != WARMUP + count:
            result.problems.append(f"{stored} answers stored for {WARMUP + count} clicks")
        locked_in = sum(n for text, n in result.replies.items() if text.startswith("Locked in"))
        if locked_in != count:
            result.problems.append(
                f"{locked_in} of {count} replies say Locked in: {result.replies}"
            )
        return result
    finally:
        service.shutdown()
        await platform.close()
        timers.cancel()
        await asyncio.gather(timers, return_exceptions=True)
        if checkpoints is not None:
            await checkpoints.stop()
        await database.dispose()


# The p99 goal is 2× the bare bot's in each round (and no round over 3×), but
# never under 15 ms: the bare p99 is counted as at least half of that.
P99_GOAL, P99_CEILING, P99_FLOOR = 2.0, 3.0, 0.0075


def report(result: Result, bare: Result | None, burst: bool) -> None:
    p50, p99 = result.percentile(0.5) * 1000, result.percentile(0.99) * 1000
    line = (
        f"{result.name:<10} {len(result.latencies)} answered, {result.unanswered} unanswered  "
        f"p50 {p50:6.1f} ms  p99 {p99:6.1f} ms  bot CPU {result.cpu_per_click * 1000:.2f} ms/click"
    )
    if burst:
        line += f"  {result.throughput:5.0f} clicks/s"
    if bare is not None:
        line += f"  p99 ours/bare {ratio(result, bare):.1f}×"
        line += f"  CPU ours/bare {result.cpu_per_click / bare.cpu_per_click:.2f}"
        if burst:
            line += f"  throughput ours/bare {result.throughput / bare.throughput:.2f}"
    print(line, flush=True)
    for problem in result.problems:
        print(f"{'':<10} PROBLEM: {problem}", flush=True)


def ratio(ours: Result, bare: Result) -> float:
    """Our p99 over the bare bot's, the bare one counted as at least P99_FLOOR."""
    return ours.percentile(0.99) / max(bare.percentile(0.99), P99_FLOOR)


def spread(values: list[float], unit: str, digits: int = 1) -> str:
    low, high = min(values), max(values)
    if len(values) == 1:
        return f"{low:.{digits}f}{unit}"
    return f"{low:.{digits}f}–{high:.{digits}f}{unit}"


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--rate", type=float, default=200.0, help="clicks per second")
    parser.add_argument("--seconds", type=float, default=10.0, help="timed clicks last this long")
    parser.add_argument("--rounds", type=int, default=1, help="measure everything this often")
    parser.add_argument(
        "--burst", type=int, help="send this many clicks at once instead of at --rate"
    )
    parser.add_argument("--postgres", default=os.environ.get("QUIZ_TEST_POSTGRES_URL"))
    parser.add_argument("--profile", help="write a cProfile of each bot's timed clicks here")
    parser.add_argument(
        "--wal-autocheckpoint",
        type=int,
        help="SQLite: set PRAGMA wal_autocheckpoint on the bot's write connection (bench only)",
    )
    parser.add_argument(
        "--instructions",
        action="store_true",
        help="run again under callgrind and compare instructions per click (use a low --rate)",
    )
    options = parser.parse_args()
    if options.instructions and not counting():
        count = options.burst or int(options.rate * options.seconds)
        arguments = [a for a in sys.argv[1:] if a != "--instructions"]
        callgrind.report(rerun(__file__, arguments), count, ["bare"], goal=1.3)
        return
    global PROFILE, WAL_AUTOCHECKPOINT
    PROFILE, WAL_AUTOCHECKPOINT = options.profile, options.wal_autocheckpoint
    # As `quizmaster run` logs: INFO to stderr.
    logging.basicConfig(level=logging.INFO, stream=sys.stderr)
    burst = options.burst is not None
    if burst:
        count, rate = options.burst, 1e6  # sent as fast as the fake can
        print(f"a burst of {count} clicks at once, each:")
    else:
        count, rate = int(options.rate * options.seconds), options.rate
        print(f"{rate:.0f} clicks/s for {options.seconds:.0f} s ({count} clicks) each:")
    results: dict[str, list[Result]] = {}
    against_bare: dict[str, dict[str, list[float]]] = {}
    channels = iter(range(2 * options.rounds))
    async with fake_discord(WARMUP + count) as fake:
        point_at(fake.api_url, fake.gateway_url)
        for _ in range(options.rounds):
            bare = await measure_bare(fake, rate, count)
            report(bare, None, burst)
            measured = [bare]
            with tempfile.TemporaryDirectory() as folder:
                sqlite = f"sqlite+aiosqlite:///{folder}/bench.db"
                channel = quiz_channel(next(channels))
                measured.append(await measure_quizmaster(fake, sqlite, channel, rate, count))
                report(measured[-1], bare, burst)
            if options.postgres:
                async with postgres_schema(options.postgres) as schema:
                    channel = quiz_channel(next(channels))
                    measured.append(
                        await measure_quizmaster(
                            fake, options.postgres, channel, rate, count, schema
                        )
                    )
                    report(measured[-1], bare, burst)
            for result in measured:
                results.setdefault(result.name, []).append(result)
                if result is not bare:
                    figures = against_bare.setdefault(result.name, {})
                    figures.setdefault("p99", []).append(ratio(result, bare))
                    cpu = result.cpu_per_click / bare.cpu_per_click
                    figures.setdefault("cpu", []).append(cpu)
                    if burst:
                        throughput = result.throughput / bare.throughput
                        figures.setdefault("throughput", []).append(throughput)
    if not options.postgres:
        print("postgresql skipped: set QUIZ_TEST_POSTGRES_URL or pass --postgres URL")
    print(f"over {options.rounds} round(s):")
    for name, runs in results.items():
        p50s = [run.percentile(0.5) * 1000 for run in runs]
        p99s = [run.percentile(0.99) * 1000 for run in runs]
        cpus = [run.cpu_per_click * 1000 for run in runs]
        line = (
            f"{name:<10} p50 {spread(p50s, ' ms')}  p99 {spread(p99s, ' ms')}  "
            f"CPU {spread(cpus, ' ms', 2)}"
        )
        figures = against_bare.get(name)
        if figures:
            p99 = figures["p99"]
            within = sum(1 for value in p99 if value <= P99_GOAL)
            line += (
                f"  p99 ours/bare {spread(p99, '×')} ({within} of {len(p99)} rounds <= "
                f"{P99_GOAL:g}, {sum(1 for v in p99 if v > P99_CEILING)} over {P99_CEILING:g})"
                f"  CPU ours/bare {spread(figures['cpu'], '', 2)}"
            )
            if burst:
                line += f"  throughput ours/bare {spread(figures['throughput'], '', 2)}"
        print(line)
    failed = [problem for runs in results.values() for run in runs for problem in run.problems]
    if failed:
        raise SystemExit(f"{len(failed)} problem(s): not every click was answered and stored once")


if __name__ == "__main__":
    asyncio.run(main())
