"""CPU and SQL of one close inside the bot, with no platform library around it.

Live quizzes run in many channels at once; in each round a few members answer
every channel's question, then the clock passes the deadline and the timer
loop's work runs: each question is closed, revealed with its tally, counted
into the boards and review cards, and the quiz's next question is posted.
Prints the process CPU per close (the clicks are not timed) and, on
PostgreSQL, the statements each close sends; on SQLite, the write
transactions and the statements in them. Clusters of processes (issue #22)
spend most of their CPU here, not on the clicks. With --profile it writes a
cProfile of the timed closes.

    python bench/close_cpu.py [--channels 50] [--rounds 8] [--answers 5]
                              [--postgres URL] [--profile out.prof]
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import os
import random
import tempfile
import time
from datetime import UTC, datetime, timedelta
from typing import Any

from common import ROOT, HeldClock, NullAdapter, WriterHolds, postgres_schema
from sqlalchemy import event

from bot.chat import Interaction, MessageRef, OutMessage, Target
from bot.quiz.bank import load_banks
from bot.quiz.service import QuizService
from bot.storage.db import Database, open_database, upgrade
from bot.storage.repository import Repository

START = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
SECONDS = 20


class ChannelsAdapter(NullAdapter):
    """The null adapter, remembering each channel's latest buttons."""

    def __init__(self) -> None:
        super().__init__()
        self.buttons_in: dict[Target, tuple[str, ...]] = {}

    async def send(self, target: Target, message: OutMessage) -> MessageRef:
        if message.buttons:
            self.buttons_in[target] = tuple(button.custom_id for button in message.buttons)
        return await super().send(target, message)


class Statements:
    """Statements sent through SQLAlchemy on PostgreSQL (every read and write)."""

    def __init__(self, database: Database) -> None:
        self.count = 0
        self._engine = database.writer.sync_engine  # the reader shares its events
        event.listen(self._engine, "before_cursor_execute", self._seen)

    def _seen(self, *_args: Any) -> None:
        self.count += 1

    def close(self) -> None:
        event.remove(self._engine, "before_cursor_execute", self._seen)


async def measure(url: str, options: argparse.Namespace, search_path: str | None = None) -> None:
    database = open_database(url, search_path=search_path)
    await upgrade(database.writer)
    catalog, _ = load_banks([ROOT / "questions"])
    clock = HeldClock(START)
    service = QuizService(Repository(database), catalog, clock, random.Random(1))
    adapter = ChannelsAdapter()
    service.register(adapter)
    holds = None
    if database.dialect == "sqlite":
        holds = WriterHolds()
        await holds.attach(database.writer)
    statements = Statements(database) if database.dialect == "postgresql" else None
    profiler = cProfile.Profile() if options.profile else None
    targets = [Target("bench", f"guild-{n % 10}", f"chan-{n}") for n in range(options.channels)]
    cpu = 0.0
    closes = 0
    sent = 0
    writes = 0
    written = 0
    try:
        for target in targets:
            await service.start(target, "moderator", questions=options.rounds + 1, seconds=SECONDS)
        for round_number in range(options.rounds):
            for target in targets:
                buttons = adapter.buttons_in[target]
                for member in range(options.answers):
                    user = f"member-{member}"
                    choice = buttons[(member + round_number) % len(buttons)]
                    await service.handle_click(Interaction(target, user, choice))
            await service.answer_writer.drain()
            clock.moment += timedelta(seconds=SECONDS + 1)
            if holds is not None:
                holds.take()
            counted = statements.count if statements is not None else 0
            posts_before = adapter.posts
            began = time.process_time()
            if profiler is not None:
                profiler.enable()
            await asyncio.gather(*await service.timers.start_due_work(sweep=False))
            await service.timers.jobs.drain(60)
            if profiler is not None:
                profiler.disable()
            cpu += time.process_time() - began
            closes += len(targets)
            if adapter.posts - posts_before != len(targets):
                raise RuntimeError(f"round {round_number}: {adapter.posts - posts_before} posts")
            if statements is not None:
                sent += statements.count - counted
            if holds is not None:
                taken = holds.statements
                writes += len(holds.holds)
                written += sum(len(hold) for hold in taken)
        per_close = cpu / closes * 1e3
        sql = (
            f"{sent / closes:5.1f} statements/close"
            if statements is not None
            else f"{writes / closes:4.1f} write transactions, {written / closes:5.1f} "
            "statements in them /close"
        )
        print(
            f"{database.dialect:<10} {per_close:6.2f} ms CPU/close   {sql}   "
            f"({closes} closes, {options.answers} answers each)",
            flush=True,
        )
        if profiler is not None:
            path = f"{options.profile}.{database.dialect}"
            profiler.dump_stats(path)
            print(f"{'':<10} profile written to {path}")
    finally:
        if statements is not None:
            statements.close()
        service.shutdown()
        await database.dispose()


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--channels", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--answers", type=int, default=5)
    parser.add_argument("--postgres", default=os.environ.get("QUIZ_TEST_POSTGRES_URL"))
    parser.add_argument("--profile", help="write a cProfile of the timed closes here")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        await measure(f"sqlite+aiosqlite:///{folder}/close.db", options)
    if options.postgres:
        async with postgres_schema(options.postgres) as schema:
            await measure(options.postgres, options, schema)


if __name__ == "__main__":
    asyncio.run(main())
