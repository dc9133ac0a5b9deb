"""SQLite's WAL checkpoints run in a task of their own, never inside the
commit of a click or a close (bot/storage/checkpoints.py)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from bot.storage.checkpoints import Checkpoints
from bot.storage.db import open_database

PAGE = 4096


async def _write_pages(engine: object, pages: int) -> None:
    from sqlalchemy.ext.asyncio import AsyncEngine

    assert isinstance(engine, AsyncEngine)
    for _ in range(pages // 4):
        async with engine.begin() as connection:
            await connection.exec_driver_sql(
                "INSERT INTO scratch (body) VALUES (randomblob(?))", (4 * PAGE,)
            )


async def test_commits_leave_the_checkpoint_to_the_task(tmp_path: Path) -> None:
    path = tmp_path / "quiz.db"
    database = open_database(f"sqlite+aiosqlite:///{path}")
    async with database.writer.begin() as connection:
        await connection.exec_driver_sql("CREATE TABLE scratch (body BLOB)")
    checkpoints = Checkpoints(str(path), every=3600)
    await checkpoints.start(database.writer)
    try:
        # Past SQLite's own threshold of 1,000 pages, and no commit copied
        # them into the database file.
        await _write_pages(database.writer, 1_600)
        assert path.with_name("quiz.db-wal").stat().st_size > 1_500 * PAGE
        assert path.stat().st_size < 100 * PAGE

        await checkpoints.checkpoint()
        assert path.stat().st_size > 1_500 * PAGE
        size = path.with_name("quiz.db-wal").stat().st_size
        # Copied; the next writes start the WAL again from its top.
        await _write_pages(database.writer, 400)
        assert path.with_name("quiz.db-wal").stat().st_size == size
    finally:
        await checkpoints.stop()
        await database.dispose()


async def test_the_task_checkpoints_on_its_own(tmp_path: Path) -> None:
    path = tmp_path / "quiz.db"
    database = open_database(f"sqlite+aiosqlite:///{path}")
    async with database.writer.begin() as connection:
        await connection.exec_driver_sql("CREATE TABLE scratch (body BLOB)")
    checkpoints = Checkpoints(str(path), every=0.05)
    await checkpoints.start(database.writer)
    try:
        await _write_pages(database.writer, 200)
        # Checkpoints that ran during the writes copied only part; wait for
        # the task's own turns after them (two, so one began after the last
        # write), with a deadline rather than a count of sleeps.
        after_writes = checkpoints.checkpoints
        deadline = asyncio.get_running_loop().time() + 10
        while asyncio.get_running_loop().time() < deadline:
            if checkpoints.checkpoints >= after_writes + 2 and path.stat().st_size > 190 * PAGE:
                break
            await asyncio.sleep(0.05)
        assert checkpoints.checkpoints >= after_writes + 2, "the task stopped checkpointing"
        assert path.stat().st_size > 190 * PAGE, "the task copied nothing"
    finally:
        await checkpoints.stop()
        await database.dispose()
