"""Slack HTTP clicks: Quizmaster against a bare Bolt app, same fake, same run.

The fake Slack of the tests runs in a process of its own
(bench/slack_fake_process.py): it serves the Web API and sends signed button
clicks to the bot's /slack/events, `--clicks` of them by distinct members at
once over `--connections` connections, timing each from send to its 200.
Measured in turn, each on its own port in this process:

- bolt-ack:   a bare slack-bolt AsyncApp (HTTP mode, aiohttp) whose action
              listener only acknowledges: the library's own floor;
- bolt-reply: the same, acknowledging and then answering privately
              (chat.postEphemeral, on one kept-alive HTTP session), which is
              what a quiz bot must do: Slack takes no message in a click's ack;
- sqlite / postgresql: Quizmaster's Slack platform and quiz service, one live
              question open (PostgreSQL when QUIZ_TEST_POSTGRES_URL or --postgres).

Per bot it prints throughput (clicks acknowledged per second of the burst),
p50/p99 of the acknowledgement, and this process's CPU per click (from the
first click sent until every private reply arrived), then our figures over
bolt-reply's (throughput, p99) and our CPU over bolt-ack's and bolt-reply's.
It checks that every click got a 200, a "Locked in" reply and one stored
answer. Timings vary on shared machines: compare figures within one run.

    python bench/slack_clicks.py [--clicks 1000] [--connections 100] [--rounds 3]
                                 [--postgres URL] [--profile out.prof]
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
import re
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
import callgrind
from aiohttp import web
from callgrind import counted, counting, rerun
from common import ROOT, postgres_schema, run_checkpoints
from slack_bolt.async_app import AsyncAck, AsyncApp
from slack_sdk.web.async_client import AsyncWebClient

from bot.adapters.slack import platform as slack_platform
from bot.chat import Target
from bot.clock import SystemClock
from bot.config import Settings
from bot.heap import start_up_frozen
from bot.quiz.bank import load_banks
from bot.quiz.buttons import parse_answer_custom_id
from bot.quiz.service import QuizService
from bot.storage.db import open_database, upgrade
from bot.storage.repository import Repository
from tests.fakes.fake_slack import SIGNING_SECRET, TEAM
from tests.processes import free_port

WARMUP = 100
ADMIN = "U0BENCHADM"


class FakeProcess:
    def __init__(self, process: asyncio.subprocess.Process, hello: dict[str, Any]) -> None:
        self.process = process
        self.api_url: str = hello["api_url"]
        self.token: str = hello["token"]

    async def ask(self, op: str, **details: Any) -> dict[str, Any]:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write((json.dumps({"op": op, **details}) + "\n").encode())
        await self.process.stdin.drain()
        answer: dict[str, Any] = json.loads(await self.process.stdout.readline())
        return answer


@contextlib.asynccontextmanager
async def fake_slack() -> AsyncIterator[FakeProcess]:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        str(Path(__file__).with_name("slack_fake_process.py")),
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
    seconds: float
    cpu_per_click: float
    statuses: dict[str, int]
    replies: dict[str, int]
    fake_cpu: float
    problems: list[str] = field(default_factory=list)

    def percentile(self, share: float) -> float:
        ordered = sorted(self.latencies)
        return ordered[min(len(ordered) - 1, int(len(ordered) * share))] if ordered else 0.0

    @property
    def throughput(self) -> float:
        return len(self.latencies) / self.seconds if self.seconds else 0.0


@dataclass
class Burst:
    fake: FakeProcess
    url: str
    channel: str
    values: list[str]
    ts: str
    options: argparse.Namespace
    first_member: int = 0

    async def send(self, count: int) -> dict[str, Any]:
        answer = await self.fake.ask(
            "clicks",
            url=self.url,
            channel=self.channel,
            values=self.values,
            ts=self.ts,
            first_member=self.first_member,
            count=count,
            connections=self.options.connections,
        )
        self.first_member += count
        return answer

    async def timed(self, name: str) -> Result:
        """WARMUP untimed clicks, then the timed burst, each click by a new member."""
        await self.send(WARMUP)
        count = self.options.clicks
        profiler = cProfile.Profile() if self.options.profile else None
        cpu = time.process_time()
        if profiler is not None:
            profiler.enable()
        with counted(name):
            answer = await self.send(count)
        if profiler is not None:
            profiler.disable()
            profiler.dump_stats(f"{self.options.profile}.{name}")
        result = Result(
            name,
            answer["latencies"],
            answer["seconds"],
            (time.process_time() - cpu) / count,
            answer["statuses"],
            answer["replies"],
            answer["fake_cpu"],
        )
        if answer["statuses"] != {"200": count}:
            result.problems.append(f"answers to the {count} clicks: {answer['statuses']}")
        return result


# -- the bare Bolt app --------------------------------------------------------------------


@contextlib.asynccontextmanager
async def serving(app: web.Application, port: int) -> AsyncIterator[str]:
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    try:
        yield f"http://127.0.0.1:{port}/slack/events"
    finally:
        await runner.cleanup()


async def measure_bolt(
    fake: FakeProcess, options: argparse.Namespace, *, reply: bool, channel: str
) -> Result:
    """What any Bolt app does at the least for a click: acknowledge it (and,
    with `reply`, answer the member privately)."""
    # One kept-alive session, as Quizmaster's Slack platform has: slack-sdk's
    # default opens a session and a connection per call.
    session = aiohttp.ClientSession()
    client = AsyncWebClient(token=fake.token, base_url=fake.api_url, session=session)
    app = AsyncApp(token=fake.token, signing_secret=SIGNING_SECRET, client=client)

    @app.action(re.compile(".*"))
    async def clicked(ack: AsyncAck, body: dict[str, Any]) -> None:
        await ack()
        if reply:
            await client.chat_postEphemeral(
                channel=body["channel"]["id"], user=body["user"]["id"], text="Locked in"
            )

    try:
        async with serving(app.web_app(path="/slack/events"), free_port()) as url:
            values = ["bare:a", "bare:b"]
            name = "bolt-reply" if reply else "bolt-ack"
            burst = Burst(fake, url, channel, values, "1.000001", options)
            result = await burst.timed(name)
    finally:
        await session.close()
    if reply:
        locked_in = result.replies.get("Locked in", 0)
        if locked_in != options.clicks:
            result.problems.append(f"{locked_in} of {options.clicks} private replies")
    return result


# -- Quizmaster ---------------------------------------------------------------------------


async def measure_quizmaster(
    fake: FakeProcess,
    url: str,
    channel: str,
    options: argparse.Namespace,
    search_path: str | None = None,
) -> Result:
    database = open_database(url, search_path=search_path)
    await upgrade(database.writer)
    if options.wal_autocheckpoint is not None and database.dialect == "sqlite":
        await _autocheckpoint(database.writer, options.wal_autocheckpoint)
    checkpoints = await run_checkpoints(database)
    catalog, _ = load_banks([ROOT / "questions"])
    service = QuizService(Repository(database), catalog, SystemClock(), random.Random(1))
    port = free_port()
    settings = Settings(  # type: ignore[call-arg]
        _env_file=None,
        SLACK_BOT_TOKEN=fake.token,
        SLACK_SIGNING_SECRET=SIGNING_SECRET,
        QUIZ_SLACK_API_URL=fake.api_url,
        QUIZ_SLACK_HOST="127.0.0.1",
        QUIZ_SLACK_PORT=str(port),
    )
    platform = slack_platform.platform(settings, service)
    service.register(platform.adapter)
    await platform.start()
    timers = asyncio.create_task(service.run_timers())
    try:
        seconds = 600  # open for the whole burst, however slow the machine
        started = await service.start(
            Target("slack", TEAM, channel), ADMIN, questions=1, seconds=seconds
        )
        assert started.text.startswith("Starting a quiz"), started.text
        question = await fake.ask("question", channel=channel)
        burst = Burst(
            fake,
            f"http://127.0.0.1:{port}/slack/events",
            channel,
            question["values"],
            question["ts"],
            options,
        )
        with start_up_frozen():  # as `quizmaster run` does once connected
            result = await burst.timed(database.dialect)
        post_id, _ = parse_answer_custom_id(question["values"][0]) or (0, 0)
        stored = await service.repository.answers.answer_count(post_id)
        if stored != WARMUP + options.clicks:
            result.problems.append(f"{stored} answers stored for {WARMUP + options.clicks} clicks")
        locked_in = sum(n for text, n in result.replies.items() if text.startswith("Locked in"))
        if locked_in != options.clicks:
            result.problems.append(f"{locked_in} of {options.clicks} replies say Locked in")
        return result
    finally:
        service.shutdown()
        await platform.close()
        timers.cancel()
        await asyncio.gather(timers, return_exceptions=True)
        if checkpoints is not None:
            await checkpoints.stop()
        await database.dispose()


async def _autocheckpoint(engine: Any, pages: int) -> None:
    """--wal-autocheckpoint: the write connection's WAL threshold, for this
    benchmark only (to measure the clicks with or without checkpoints in them)."""
    async with engine.connect() as connection:
        await connection.exec_driver_sql(f"PRAGMA wal_autocheckpoint={int(pages)}")


# -- report ---------------------------------------------------------------------------------


def report(result: Result) -> None:
    print(
        f"{result.name:<10} {len(result.latencies)} acknowledged  "
        f"{result.throughput:6.0f} clicks/s  p50 {result.percentile(0.5) * 1000:6.1f} ms  "
        f"p99 {result.percentile(0.99) * 1000:6.1f} ms  "
        f"CPU {result.cpu_per_click * 1000:.2f} ms/click (the fake's {result.fake_cpu:.1f} s)",
        flush=True,
    )
    for problem in result.problems:
        print(f"{'':<10} PROBLEM: {problem}", flush=True)


def compare(ours: Result, ack: Result, reply: Result) -> dict[str, float]:
    figures = {
        "throughput / bolt-reply": ours.throughput / reply.throughput,
        "p99 / bolt-reply": ours.percentile(0.99) / reply.percentile(0.99),
        "CPU / bolt-ack": ours.cpu_per_click / ack.cpu_per_click,
        "CPU / bolt-reply": ours.cpu_per_click / reply.cpu_per_click,
    }
    print(f"{'':<10} " + "  ".join(f"{name} {value:.2f}" for name, value in figures.items()))
    return figures


def spread(values: list[float]) -> str:
    return f"{min(values):.2f}" if len(values) == 1 else f"{min(values):.2f}–{max(values):.2f}"


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--clicks", type=int, default=1000)
    parser.add_argument("--connections", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=1)
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
        help="run again under callgrind and compare instructions per click (use --clicks 200)",
    )
    options = parser.parse_args()
    if options.instructions and not counting():
        arguments = [a for a in sys.argv[1:] if a != "--instructions"]
        counts = rerun(__file__, arguments)
        callgrind.report(counts, options.clicks, ["bolt-ack", "bolt-reply"], goal=1.3)
        return
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    print(
        f"{options.clicks} clicks at once over {options.connections} connections, "
        f"after {WARMUP} untimed:"
    )
    figures: dict[str, dict[str, list[float]]] = {}
    problems = 0
    channels = iter(f"C0BENCH{n:03d}" for n in range(1000))
    async with fake_slack() as fake:
        for _ in range(options.rounds):
            ack = await measure_bolt(fake, options, reply=False, channel=next(channels))
            report(ack)
            reply = await measure_bolt(fake, options, reply=True, channel=next(channels))
            report(reply)
            ours = []
            with tempfile.TemporaryDirectory() as folder:
                sqlite = f"sqlite+aiosqlite:///{folder}/bench.db"
                ours.append(await measure_quizmaster(fake, sqlite, next(channels), options))
                report(ours[-1])
                found = compare(ours[-1], ack, reply)
                for name, value in found.items():
                    figures.setdefault("sqlite", {}).setdefault(name, []).append(value)
            if options.postgres:
                async with postgres_schema(options.postgres) as schema:
                    ours.append(
                        await measure_quizmaster(
                            fake, options.postgres, next(channels), options, schema
                        )
                    )
                    report(ours[-1])
                    found = compare(ours[-1], ack, reply)
                    for name, value in found.items():
                        figures.setdefault("postgresql", {}).setdefault(name, []).append(value)
            problems += sum(len(result.problems) for result in (ack, reply, *ours))
    if not options.postgres:
        print("postgresql skipped: set QUIZ_TEST_POSTGRES_URL or pass --postgres URL")
    if options.rounds > 1:
        print(f"over {options.rounds} rounds:")
        for name, by_figure in figures.items():
            print(
                f"{name:<10} "
                + "  ".join(f"{figure} {spread(values)}" for figure, values in by_figure.items())
            )
    if problems:
        raise SystemExit(f"{problems} problem(s): not every click was answered and stored once")


if __name__ == "__main__":
    asyncio.run(main())
