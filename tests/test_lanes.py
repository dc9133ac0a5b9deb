"""Members' work goes before timer work at the database (bot/storage/lanes.py):
a click waits for at most the piece of timer work in progress, never for the
slices queued behind it, and timer work holds only a few connections at once."""

from __future__ import annotations

import asyncio

import pytest
from sqlalchemy import text

from bot.storage.db import POSTGRES_BACKGROUND, Database
from bot.storage.lanes import in_background


async def _until(condition: object, seconds: float = 5.0) -> None:
    deadline = asyncio.get_running_loop().time() + seconds
    while not condition():  # type: ignore[operator]
        assert asyncio.get_running_loop().time() < deadline, "timed out"
        await asyncio.sleep(0.005)


def _background_slots(database: Database) -> int:
    return 1 if database.writer.dialect.name == "sqlite" else POSTGRES_BACKGROUND


async def test_a_click_goes_before_timer_work_queued_for_the_sqlite_writer(
    database: Database,
) -> None:
    if database.writer.dialect.name != "sqlite":
        pytest.skip("SQLite's one write connection")
    engine = database.writer
    order: list[str] = []
    first_done = asyncio.Event()

    async def timer_work(name: str, hold: asyncio.Event | None = None) -> None:
        with in_background():
            async with engine.connect() as connection:
                await connection.execute(text("SELECT 1"))
                order.append(name)
                if hold is not None:
                    await hold.wait()

    async def click() -> None:
        async with engine.connect() as connection:
            await connection.execute(text("SELECT 1"))
            order.append("click")

    first = asyncio.create_task(timer_work("slice 1", first_done))
    await _until(lambda: order == ["slice 1"])
    second = asyncio.create_task(timer_work("slice 2"))
    await asyncio.sleep(0.05)  # slice 2 is queued for the writer
    member = asyncio.create_task(click())
    await asyncio.sleep(0.05)
    first_done.set()
    await asyncio.wait_for(asyncio.gather(first, second, member), 10)
    assert order == ["slice 1", "click", "slice 2"]


async def test_timer_work_holds_a_few_connections_and_a_click_gets_one_at_once(
    database: Database,
) -> None:
    engine = database.writer
    slots = _background_slots(database)
    holding = 0
    most = 0
    release = asyncio.Event()

    async def timer_work() -> None:
        nonlocal holding, most
        with in_background():
            async with engine.connect() as connection:
                await connection.execute(text("SELECT 1"))
                holding += 1
                most = max(most, holding)
                await release.wait()
                holding -= 1

    work = [asyncio.create_task(timer_work()) for _ in range(slots + 12)]
    await _until(lambda: holding == slots)
    await asyncio.sleep(0.05)
    assert holding == slots  # the others wait in the background lane
    if engine.dialect.name != "sqlite":
        # On PostgreSQL the rest of the pool is the members': a click is not
        # queued behind the dozen timer jobs waiting for a turn.
        async with engine.connect() as connection:
            assert await asyncio.wait_for(connection.scalar(text("SELECT 1")), 2) == 1
    release.set()
    await asyncio.wait_for(asyncio.gather(*work), 20)
    assert most == slots


async def test_timer_work_nests_a_connection_without_waiting_for_itself(
    database: Database,
) -> None:
    engine = database.reader  # SQLite's readers and PostgreSQL's pool have room to nest
    slots = engine.pool.lanes.background_slots  # type: ignore[attr-defined]
    done = 0

    async def nested() -> None:
        nonlocal done
        with in_background():
            async with engine.connect() as outer:
                await outer.execute(text("SELECT 1"))
                await asyncio.sleep(0.02)  # every slot taken before any nests
                async with engine.connect() as inner:
                    await inner.execute(text("SELECT 1"))
        done += 1

    await asyncio.wait_for(asyncio.gather(*(nested() for _ in range(slots))), 10)
    assert done == slots


async def test_a_cancelled_wait_gives_its_turn_to_the_next_timer_job(database: Database) -> None:
    engine = database.writer
    slots = _background_slots(database)
    release = asyncio.Event()
    holding = 0

    async def timer_work() -> None:
        nonlocal holding
        with in_background():
            async with engine.connect() as connection:
                await connection.execute(text("SELECT 1"))
                holding += 1
                await release.wait()

    holders = [asyncio.create_task(timer_work()) for _ in range(slots)]
    await _until(lambda: holding == slots)
    waiting = asyncio.create_task(timer_work())
    await asyncio.sleep(0.05)
    waiting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiting
    release.set()
    await asyncio.wait_for(asyncio.gather(*holders), 10)
    # Every slot is free again: as many jobs as slots run side by side.
    holding = 0
    release.clear()
    again = [asyncio.create_task(timer_work()) for _ in range(slots)]
    await _until(lambda: holding == slots)
    release.set()
    await asyncio.wait_for(asyncio.gather(*again), 10)
