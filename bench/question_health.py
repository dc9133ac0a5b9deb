"""Question health benchmark: what keeping the item analysis costs a close,
and how fast `/quiz health` answers over a large history.

1. A 10,000-answer close (`PostStore.claim_close`: the claim, then the slices
   that add a post's answers to every read model) timed with the analysis kept
   and with it left out (the close before question health), alternating, on a
   community whose 10,000 members already have records. Goal: no slower than
   1.2x.
2. `/quiz health` (the community's flagged questions, worst first) through the
   quiz service on a database of 1,000,000 answers to 20,000 posts of 1,000
   questions, beside the bare SELECT of the analysis rows it reads. Goal: p95
   under 20 ms.

    python bench/question_health.py [--trials 3] [--postgres URL] [--close-only]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import statistics
import tempfile
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import yaml
from common import ROOT, NullAdapter, postgres_schema

from bot.chat import Command, Interaction, Target
from bot.clock import SystemClock
from bot.quiz.bank import load_banks
from bot.quiz.buttons import parse_answer_custom_id
from bot.quiz.service import QuizService
from bot.storage import closing, item_analysis
from bot.storage.db import open_database, upgrade
from bot.storage.models import Answer, Post
from bot.storage.repository import Repository

CHANNEL = Target("bench", "guild", "channel")


def _no_analysis(*_: Any) -> None:
    return None


async def close_cost(url: str, trials: int, search_path: str | None = None) -> None:
    database = open_database(url, search_path=search_path)
    await upgrade(database.writer)
    catalog, _ = load_banks([ROOT / "questions"])
    service = QuizService(Repository(database), catalog, SystemClock(), random.Random(1))
    adapter = NullAdapter()
    service.register(adapter)
    kept_analysis = closing.post_analysis
    timings: dict[str, list[float]] = {"kept": [], "without": []}
    rng = random.Random(5)
    # A first round gives every member a record, as in a community that has played.
    for trial in range(2 * trials + 1):
        await service.start(CHANNEL, "moderator", questions=1, seconds=600)
        await asyncio.gather(
            *(
                service.handle_click(
                    Interaction(CHANNEL, f"member-{m}", rng.choice(adapter.buttons[:4]))
                )
                for m in range(10_000)
            )
        )
        post_id, _ = parse_answer_custom_id(adapter.buttons[0]) or (0, 0)
        mode = "kept" if trial % 2 else "without"
        # posts.py calls it through the module, so this swaps it for the close.
        closing.post_analysis = kept_analysis if mode == "kept" else _no_analysis
        began = time.perf_counter()
        assert await service.repository.posts.claim_close(post_id, datetime.now(UTC))
        elapsed = time.perf_counter() - began
        closing.post_analysis = kept_analysis
        if trial:
            timings[mode].append(elapsed)
        await service.stop(CHANNEL)
    kept, bare = statistics.median(timings["kept"]), statistics.median(timings["without"])
    name = database.writer.dialect.name
    print(
        f"{name:<10} 10,000-answer close: {kept * 1000:.0f} ms with the analysis kept "
        f"(runs {_range(timings['kept'])}), {bare * 1000:.0f} ms without "
        f"(runs {_range(timings['without'])}): {kept / bare:.2f}x (goal <= 1.2x)"
    )
    await database.dispose()


def _range(values: list[float]) -> str:
    return f"{min(values) * 1000:.0f}-{max(values) * 1000:.0f} ms"


# -- /quiz health over a million answers -------------------------------------------------

QUESTIONS = 1_000
POSTS = 20_000
PER_POST = 50
MEMBERS = 5_000


def synthetic_bank(folder: Path) -> Path:
    """1,000 four-option questions, keyed A."""
    questions = [
        {
            "id": f"syn-{n:04d}",
            "prompt": f"Synthetic question number {n}?",
            "options": [f"first {n}", f"second {n}", f"third {n}", f"fourth {n}"],
            "answer": "A",
            "explanation": "Made up for the benchmark.",
        }
        for n in range(QUESTIONS)
    ]
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "synthetic.yaml"
    path.write_text(
        yaml.safe_dump({"id": "synthetic", "title": "Synthetic", "questions": questions})
    )
    return folder


def _history(
    channel_id: int, start: datetime
) -> Iterator[tuple[dict[str, Any], list[dict[str, Any]]]]:
    """Each post with its answers: members of varied skill, some questions
    keyed wrong (the strong pick B), some with an option nobody picks."""
    rng = random.Random(11)
    skill = [rng.random() for _ in range(MEMBERS)]
    for number in range(POSTS):
        question = number % QUESTIONS
        when = start + timedelta(minutes=number)
        post = {
            "id": number + 1,
            "channel_id": channel_id,
            "kind": "live",
            "question_id": f"syn-{question:04d}",
            "option_order": [0, 1, 2, 3],
            "correct_slot": 0,
            "seconds": 30,
            "posted_at": when,
            "closes_at": when + timedelta(seconds=30),
            "closed_at": when + timedelta(seconds=30),
            "message_id": str(number + 1),
            "revealed_at": when + timedelta(seconds=30),
        }
        answers = []
        for member in rng.sample(range(MEMBERS), PER_POST):
            if rng.random() < skill[member]:
                slot = 1 if question % 50 == 0 else 0
            else:
                slot = rng.choice((1, 2) if question % 30 == 0 else (1, 2, 3))
            answers.append(
                {
                    "post_id": number + 1,
                    "channel_id": channel_id,
                    "user_id": f"m{member}",
                    "slot": slot,
                    "correct": slot == 0,
                    "points": 10 if slot == 0 else 0,
                    "answered_at": when + timedelta(seconds=5),
                    "latency_ms": 5_000,
                    "hinted": False,
                }
            )
        yield post, answers


async def health_latency(url: str, search_path: str | None = None) -> None:
    database = open_database(url, search_path=search_path)
    await upgrade(database.writer)
    with tempfile.TemporaryDirectory() as folder:
        catalog, problems = load_banks([synthetic_bank(Path(folder))])
    assert not problems, problems
    repository = Repository(database)
    service = QuizService(repository, catalog, SystemClock(), random.Random(1))
    service.register(NullAdapter())
    now = datetime.now(UTC)
    channel = await repository.channels.channel(CHANNEL, now)
    began = time.perf_counter()
    async with database.writer.begin() as connection:
        batch_posts: list[dict[str, Any]] = []
        batch_answers: list[dict[str, Any]] = []
        for post, answers in _history(channel.id, now - timedelta(days=30)):
            batch_posts.append(post)
            batch_answers += answers
            if len(batch_answers) >= 50_000:
                await connection.execute(Post.__table__.insert(), batch_posts)
                await connection.execute(Answer.__table__.insert(), batch_answers)
                batch_posts, batch_answers = [], []
        if batch_posts:
            await connection.execute(Post.__table__.insert(), batch_posts)
            await connection.execute(Answer.__table__.insert(), batch_answers)
        await connection.run_sync(item_analysis.backfill_analysis)
    filled = time.perf_counter() - began
    command = Command("health", CHANNEL, "moderator", is_moderator=True)
    reply = await service.handle_command(command)
    flagged = reply.text.count("\n• ")
    if os.environ.get("QH_PROFILE"):  # where the time goes, for whoever tunes it
        import cProfile
        import pstats

        profile = cProfile.Profile()
        profile.enable()
        for _ in range(50):
            await service.handle_command(command)
        profile.disable()
        pstats.Stats(profile).sort_stats("tottime").print_stats(15)
    timings = []
    for _ in range(200):
        started = time.perf_counter()
        await service.handle_command(command)
        timings.append(time.perf_counter() - started)
    table = item_analysis.QuestionAnalysis.__table__
    query = table.select().where(table.c.platform == "bench", table.c.community == "guild")
    bare = []
    for _ in range(200):
        started = time.perf_counter()
        async with database.reader.connect() as connection:
            (await connection.execute(query)).all()
        bare.append(time.perf_counter() - started)
    name = database.writer.dialect.name
    print(
        f"{name:<10} /quiz health at {POSTS * PER_POST:,} answers ({QUESTIONS} questions, "
        f"{flagged} listed): p50 {_ms(timings, 0.5)}, p95 {_ms(timings, 0.95)} "
        f"(goal p95 < 20 ms); the bare SELECT of its rows p50 {_ms(bare, 0.5)}, "
        f"p95 {_ms(bare, 0.95)} (filled in {filled:.0f} s)"
    )
    await database.dispose()


def _ms(values: list[float], at: float) -> str:
    ordered = sorted(values)
    return f"{ordered[min(len(ordered) - 1, int(len(ordered) * at))] * 1000:.1f} ms"


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--trials", type=int, default=3)
    parser.add_argument("--postgres", default=os.environ.get("QUIZ_TEST_POSTGRES_URL"))
    parser.add_argument("--close-only", action="store_true", help="skip /quiz health at 1M")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        await close_cost(f"sqlite+aiosqlite:///{folder}/close.db", options.trials)
        if not options.close_only:
            await health_latency(f"sqlite+aiosqlite:///{folder}/health.db")
    if options.postgres:
        async with postgres_schema(options.postgres) as schema:
            await close_cost(options.postgres, options.trials, search_path=schema)
        if not options.close_only:
            async with postgres_schema(options.postgres) as schema:
                await health_latency(options.postgres, search_path=schema)
    else:
        print("postgresql skipped: set QUIZ_TEST_POSTGRES_URL or pass --postgres URL")


if __name__ == "__main__":
    asyncio.run(main())
