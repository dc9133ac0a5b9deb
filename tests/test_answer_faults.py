"""The answer path under hostile input and failures: malformed ids are refused
before anything is stored, one bad row never costs a batch its other answers,
and shutdown stores every answer already handed in."""

from __future__ import annotations

import asyncio
from dataclasses import replace

import asyncpg
import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.chat import Interaction, Target
from bot.domain.records import NewAnswer
from bot.quiz.buttons import parse_answer_custom_id
from bot.quiz.service import QuizService
from tests.conftest import CHANNEL, OTHER_CHANNEL, POSTGRES_URL, Host, _asyncpg_dsn


async def answers_stored(host: Host) -> int:
    post_id, _ = parse_answer_custom_id(host.adapter.button_id(CHANNEL, "A")) or (0, 0)
    return await host.service.repository.answers.answer_count(post_id)


@pytest.mark.parametrize(
    "user_id",
    ["", "\x00", "ana\x00", "x" * 10_000, "a b", "\n", "x" * 65],
    ids=["empty", "nul", "embedded-nul", "10000-chars", "space", "newline", "65-chars"],
)
async def test_a_click_with_a_malformed_member_id_is_refused_and_stores_nothing(
    host: Host, user_id: str
) -> None:
    await host.start(questions=1, seconds=20)
    reply = await host.click(user_id, "A")
    assert "malformed" in reply.text
    assert await answers_stored(host) == 0
    # A well-formed id of the longest allowed length still counts.
    assert (await host.click("u" * 64, "A")).text.startswith("Locked in")
    assert await answers_stored(host) == 1


async def test_a_command_from_a_malformed_channel_id_is_refused(host: Host) -> None:
    reply = await host.command("start", Target("test", "guild-1", "c" * 500), questions=1)
    assert "malformed" in reply.text
    assert host.adapter.sent == []


async def test_one_bad_row_in_a_batch_costs_no_other_click_its_answer(host: Host) -> None:
    """30 concurrent clicks share one group commit; one row the database refuses
    must fail alone (before, the whole batch failed: 1 of 30 was stored)."""
    await host.start(questions=1, seconds=20)
    post_id, _ = parse_answer_custom_id(host.adapter.button_id(CHANNEL, "A")) or (0, 0)
    post = await host.service.repository.posts.post(post_id)
    assert post is not None
    now = host.clock.now()
    good = [NewAnswer(post, f"member-{n}", n % 4, n % 4 == 0, 10, now) for n in range(29)]
    # A slot of None breaks the table's NOT NULL constraint on every backend.
    bad = replace(good[0], user_id="broken", slot=None)  # type: ignore[arg-type]
    rows = [*good[:15], bad, *good[15:]]

    results = await asyncio.gather(
        *(host.service.answer_writer.record(row) for row in rows), return_exceptions=True
    )

    assert sum(result is True for result in results) == 29
    assert isinstance(results[15], Exception)
    assert await host.service.repository.answers.answer_count(post_id) == 29


async def test_a_click_whose_answer_cannot_be_stored_is_told_it_did_not_count(
    host: Host, monkeypatch: pytest.MonkeyPatch
) -> None:
    await host.start(questions=1, seconds=20)

    async def database_gone(_rows: object) -> list[bool]:
        raise ConnectionError("the database went away")

    monkeypatch.setattr(host.service.repository.answers, "record_answers", database_gone)
    reply = await host.click("ana", "A")
    assert "may not count" in reply.text and "click again" in reply.text


async def test_drain_stores_every_answer_handed_in_before_shutdown(
    host: Host, service: QuizService
) -> None:
    await host.start(questions=1, seconds=20)
    custom_id = host.adapter.button_id(CHANNEL, "B")
    clicks = [
        asyncio.create_task(service.handle_click(Interaction(CHANNEL, f"m{n}", custom_id)))
        for n in range(300)
    ]
    await asyncio.sleep(0)  # every click is queued, none committed yet
    service.shutdown()
    await service.drain()
    await asyncio.sleep(0)  # the clicks' own tasks resume from the stored results

    assert all(click.done() for click in clicks), "drain returned before the answers were stored"
    assert all(click.result().text.startswith("Locked in") for click in clicks)
    assert await answers_stored(host) == 300


async def test_clicks_after_the_database_dropped_every_connection_are_all_stored(
    host: Host, engine: AsyncEngine
) -> None:
    """A PostgreSQL restart (or a proxy's idle cut) kills the pooled connections.
    No connection is pinged before each use (a round trip on every click), so
    the first batch meets a dead one; the pool is then renewed and the batch
    stored again, one answer at a time: every click is told "Locked in" and
    is stored."""
    if engine.dialect.name != "postgresql":
        pytest.skip("SQLite has no server to drop connections")
    await host.start(questions=1, seconds=60)
    await host.answer("warm-up", correct=True)
    held = [await engine.connect() for _ in range(3)]  # make the pool hold several
    pids = [await connection.scalar(text("SELECT pg_backend_pid()")) for connection in held]
    for connection in held:
        await connection.close()
    admin = await asyncpg.connect(_asyncpg_dsn(POSTGRES_URL or ""))
    try:
        await admin.execute("SELECT pg_terminate_backend(pid) FROM unnest($1::int[]) AS pid", pids)
    finally:
        await admin.close()

    replies = await asyncio.gather(
        *(host.answer(f"member-{n}", correct=n % 2 == 0) for n in range(20))
    )
    assert all(reply.text.startswith("Locked in") for reply in replies)
    assert await answers_stored(host) == 21


async def test_a_click_is_not_held_up_by_a_store_stuck_in_another_channel(
    host: Host, engine: AsyncEngine
) -> None:
    """PostgreSQL runs several answer transactions at once. A click used to
    wait for whichever batch was in flight before it, even with a slot free:
    during a big close in one channel, a click in another took the time of
    several stores. Here channel 1's store is stuck on a locked post; a click
    in channel 2 is answered meanwhile, and channel 1's once the lock goes."""
    if engine.dialect.name != "postgresql":
        pytest.skip("SQLite has one writer: its clicks take turns")
    await host.start(questions=1, seconds=60)
    await host.start(OTHER_CHANNEL, questions=1, seconds=60)
    post_id, _ = parse_answer_custom_id(host.adapter.button_id(CHANNEL, "A")) or (0, 0)
    locker = await engine.connect()
    try:
        transaction = await locker.begin()
        await locker.execute(
            text("SELECT id FROM posts WHERE id = :id FOR UPDATE"), {"id": post_id}
        )
        stuck = asyncio.create_task(host.click("ana", "A"))
        await asyncio.sleep(0.2)
        assert not stuck.done()  # waiting for the lock

        other = await asyncio.wait_for(host.click("bea", "A", OTHER_CHANNEL), 5)

        assert other.text.startswith("Locked in")
        assert not stuck.done()
        await transaction.rollback()
        assert (await asyncio.wait_for(stuck, 5)).text.startswith("Locked in")
    finally:
        await locker.close()
    assert await answers_stored(host) == 1
