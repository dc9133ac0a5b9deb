"""On SQLite's one writer, a slice of timer work gives way to a member's
click (bot/storage/preemption.py): the slice rolls back half-way and runs
again after the click, and what it writes is written once."""

from __future__ import annotations

import asyncio
import gc
import sqlite3
import time
import weakref
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import event, func, select, text
from sqlalchemy.ext.asyncio import AsyncEngine, async_sessionmaker
from sqlalchemy.orm import Session

from bot.storage import cards, closing, db_thread, preemption
from bot.storage.db import Database, check_read_models, open_database
from bot.storage.db_thread import on_pooled_connection, write_in_one_hop
from bot.storage.lanes import in_background
from bot.storage.models import CardReview, ChannelScore, ClosingPost, ReviewCard
from bot.storage.preemption import MAX_YIELDS, Abandoned, Preemption, checkpoint
from tests.conftest import OTHER_CHANNEL, Host

# Counting to this takes SQLite seconds: far longer than a click's write.
_LONG_COUNT = (
    "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 50000000) "
    "SELECT count(*) FROM n"
)
# Long enough for the progress handler to look at least once.
_SHORT_COUNT = _LONG_COUNT.replace("50000000", "20000")


@pytest.fixture
async def sqlite_database(tmp_path: Path) -> AsyncIterator[Database]:
    database = open_database(f"sqlite+aiosqlite:///{tmp_path / 'preempt.db'}")
    async with database.writer.begin() as connection:
        await connection.execute(text("CREATE TABLE written (what TEXT NOT NULL)"))
    yield database
    await database.dispose()


def _sessions(database: Database) -> async_sessionmaker[Any]:
    return async_sessionmaker(database.writer, expire_on_commit=False)


def _insert(what: str) -> Any:
    return lambda session: session.execute(
        text("INSERT INTO written (what) VALUES (:what)"), {"what": what}
    )


async def _written(engine: AsyncEngine) -> list[str]:
    async with engine.connect() as connection:
        rows = await connection.execute(text("SELECT what FROM written ORDER BY rowid"))
        return [what for (what,) in rows]


def _a_click_arrives(engine: AsyncEngine) -> None:
    """What a member's checkout of the taken write connection does: every
    slice running now is asked to give way."""
    pool: Any = engine.sync_engine.pool
    for running in list(pool.preemptible):
        running.request()


class _BusySlice:
    """Timer work on the writer whose first attempt writes "slice" and then
    runs `busy(session)` (stopped by a member's write, or not); each later
    attempt only writes "slice". `attempts` counts the runs."""

    def __init__(self, database: Database, busy: Callable[[Session], Any]) -> None:
        self.attempts = 0
        self._sessions = _sessions(database)
        self._busy = busy
        self._started = asyncio.Event()
        self._loop = asyncio.get_running_loop()
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        """Start the work; return once its first attempt is busy."""
        self._task = asyncio.create_task(self._timer_work())
        await self._started.wait()

    async def finished(self) -> None:
        assert self._task is not None
        await self._task

    def _run(self, session: Session) -> None:
        self.attempts += 1
        _insert("slice")(session)
        if self.attempts == 1:
            self._loop.call_soon_threadsafe(self._started.set)
            self._busy(session)

    async def _timer_work(self) -> None:
        with in_background():
            await write_in_one_hop(self._sessions, self._run, preemptible=True)


def _long_count(session: Session) -> None:
    session.execute(text(_LONG_COUNT))  # seconds, unless stopped


class _StoppedAsItBegins:
    """A slice function whose every other run (each slice's first) meets a
    click as it begins; `calls` counts the runs."""

    def __init__(self, engine: AsyncEngine, slice_function: Callable[..., Any]) -> None:
        self.engine, self.slice_function, self.calls = engine, slice_function, 0

    def __call__(self, session: Session, *args: Any, **kwargs: Any) -> Any:
        self.calls += 1
        if self.calls % 2:
            _a_click_arrives(self.engine)
        return self.slice_function(session, *args, **kwargs)


async def test_a_click_is_written_before_the_long_slice_it_arrived_during(
    sqlite_database: Database,
) -> None:
    sessions = _sessions(sqlite_database)
    long_slice = _BusySlice(sqlite_database, _long_count)
    await long_slice.start()
    await write_in_one_hop(sessions, _insert("click"))  # a member's write
    await long_slice.finished()

    # The click did not wait for the count; the slice ran again after it,
    # and its first attempt's row was rolled back.
    assert await _written(sqlite_database.writer) == ["click", "slice"]
    assert long_slice.attempts == 2


class _SliceRows:
    """Stands for what a slice's locals hold: its rows and review cards."""


async def test_a_slice_that_gave_way_frees_what_it_held_without_the_collector(
    sqlite_database: Database,
) -> None:
    """The stopped statement's error and frames formed cycles with the
    slice's locals: in a big close tens of thousands of objects that only a
    collector pass freed, one of 40-50 ms holding the writer."""
    sessions = _sessions(sqlite_database)
    held: list[weakref.ref[_SliceRows]] = []

    def slice_holding_rows(session: Session) -> None:
        rows = _SliceRows()
        held.append(weakref.ref(rows))
        if len(held) == 1:
            _a_click_arrives(sqlite_database.writer)
            session.execute(text(_SHORT_COUNT))  # stopped

    gc.disable()
    try:
        with in_background():
            await write_in_one_hop(sessions, slice_holding_rows, preemptible=True)
        assert len(held) == 2  # stopped once, then run to its end
        assert held[0]() is None
    finally:
        gc.enable()


async def test_a_slice_that_gave_way_again_and_again_runs_to_its_end(
    sqlite_database: Database,
) -> None:
    """A steady stream of clicks slows timer work but never starves it."""
    sessions = _sessions(sqlite_database)
    attempts = 0

    def always_interrupted(session: Session) -> None:
        nonlocal attempts
        attempts += 1
        _insert(f"attempt {attempts}")(session)
        _a_click_arrives(sqlite_database.writer)  # each time
        session.execute(text(_SHORT_COUNT))

    with in_background():
        await write_in_one_hop(sessions, always_interrupted, preemptible=True)

    assert attempts == MAX_YIELDS + 1
    assert await _written(sqlite_database.writer) == [f"attempt {MAX_YIELDS + 1}"]


async def _closed_with_every_slice_stopped(
    host: Host,
    engine: AsyncEngine,
    monkeypatch: pytest.MonkeyPatch,
    module: Any,
    slice_name: str,
    *,
    correct: bool,
) -> tuple[_StoppedAsItBegins, int]:
    """Two and a half slices' worth of members answer (all right or all
    wrong) and the question closes, every slice of `module.slice_name`
    meeting a click as it begins; the wrapped slice and how many answered."""
    if engine.dialect.name != "sqlite":
        pytest.skip("PostgreSQL has no single writer: its slices never give way")
    size = module.SLICES["sqlite"]
    members = 2 * size + size // 2
    stopped = _StoppedAsItBegins(engine, getattr(module, slice_name))
    monkeypatch.setattr(module, slice_name, stopped)
    await host.start(questions=2, seconds=600)
    letter = host.correct_letter() if correct else host.wrong_letter()
    replies = await asyncio.gather(*(host.click(f"m{n:04d}", letter) for n in range(members)))
    assert all(reply.text.startswith("Locked in") for reply in replies)
    await host.close_current()
    return stopped, members


async def test_a_close_whose_every_slice_gives_way_half_way_counts_each_answer_once(
    host: Host, engine: AsyncEngine, monkeypatch: pytest.MonkeyPatch
) -> None:
    score_slice, members = await _closed_with_every_slice_stopped(
        host, engine, monkeypatch, closing, "score_slice", correct=True
    )

    assert score_slice.calls == 2 * 3  # three slices, each stopped once and run again
    assert await check_read_models(engine) == ([], 0)
    async with engine.connect() as connection:
        answered = (await connection.execute(select(func.sum(ChannelScore.answered)))).scalar()
        closing_left = (
            await connection.execute(select(func.count()).select_from(ClosingPost))
        ).scalar()
    assert (answered, closing_left) == (members, 0)
    board = await host.leaderboard()
    assert len(board) == 10 and len({points for _, points in board}) == 1


async def test_review_cards_whose_every_slice_gives_way_half_way_count_each_answer_once(
    host: Host, engine: AsyncEngine, monkeypatch: pytest.MonkeyPatch
) -> None:
    apply_slice, members = await _closed_with_every_slice_stopped(
        host, engine, monkeypatch, cards, "_apply_slice", correct=False
    )

    assert apply_slice.calls == 2 * 3
    async with engine.connect() as connection:
        reviews = (
            await connection.execute(
                select(ReviewCard.reviews, ReviewCard.misses, func.count()).group_by(
                    ReviewCard.reviews, ReviewCard.misses
                )
            )
        ).all()
        marked = (await connection.execute(select(func.count()).select_from(CardReview))).scalar()
    # Every member's missed question is one card, reviewed once, missed once.
    assert [tuple(row) for row in reviews] == [(1, 1, members)]
    assert marked == members


def _insert_raw(what: str) -> Callable[[sqlite3.Connection], str]:
    """A member's one-hop write as the answer path makes it (its own
    transaction on the raw connection)."""

    def work(connection: sqlite3.Connection) -> str:
        connection.execute("BEGIN IMMEDIATE")
        connection.execute("INSERT INTO written (what) VALUES (?)", (what,))
        connection.execute("COMMIT")
        return what

    return work


class _Checkouts:
    """Counts checkouts of the write pool's connection."""

    def __init__(self, engine: AsyncEngine) -> None:
        self.count = 0
        event.listen(engine.sync_engine.pool, "checkout", self._checkout)

    def _checkout(self, *_: Any) -> None:
        self.count += 1


async def test_a_click_that_finds_a_slice_writing_is_written_by_its_thread_as_it_gives_way(
    sqlite_database: Database,
) -> None:
    """No round trip through the event loop and the pool between the slice
    giving way and the click's write: the click is handed to the thread."""
    long_slice = _BusySlice(sqlite_database, _long_count)
    await long_slice.start()
    checkouts = _Checkouts(sqlite_database.writer)
    assert await on_pooled_connection(sqlite_database.writer, _insert_raw("click")) == "click"
    assert checkouts.count == 0  # the click never waited for the pool
    await long_slice.finished()

    assert await _written(sqlite_database.writer) == ["click", "slice"]
    assert long_slice.attempts == 2


async def test_a_slice_that_may_no_longer_give_way_writes_a_click_handed_to_it_after_its_own(
    sqlite_database: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(db_thread, "MAX_YIELDS", 0)  # every run is its last
    slice_to_its_end = _BusySlice(
        sqlite_database,
        lambda session: session.execute(text(_SHORT_COUNT.replace("20000", "3000000"))),
    )
    await slice_to_its_end.start()
    checkouts = _Checkouts(sqlite_database.writer)
    assert await on_pooled_connection(sqlite_database.writer, _insert_raw("click")) == "click"
    assert checkouts.count == 0
    await slice_to_its_end.finished()

    assert await _written(sqlite_database.writer) == ["slice", "click"]


async def test_a_handed_click_that_fails_fails_alone(sqlite_database: Database) -> None:
    """The member's error reaches the member; the slice runs again as if
    the click had succeeded."""

    def broken_click(connection: sqlite3.Connection) -> None:
        connection.execute("BEGIN IMMEDIATE")
        try:
            connection.execute("INSERT INTO no_such_table VALUES (1)")
        finally:
            connection.execute("ROLLBACK")

    long_slice = _BusySlice(sqlite_database, _long_count)
    await long_slice.start()
    checkouts = _Checkouts(sqlite_database.writer)
    with pytest.raises(sqlite3.OperationalError, match="no_such_table"):
        await on_pooled_connection(sqlite_database.writer, broken_click)
    assert checkouts.count == 0
    await long_slice.finished()
    assert await on_pooled_connection(sqlite_database.writer, _insert_raw("click")) == "click"

    assert await _written(sqlite_database.writer) == ["slice", "click"]
    assert long_slice.attempts == 2


@pytest.mark.parametrize("gives_way_at", ["its next statement", "a checkpoint"])
async def test_a_slice_busy_in_python_gives_way_at_its_next_statement_or_checkpoint(
    sqlite_database: Database, gives_way_at: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SQLite's progress handler sees only the statements; a slice working
    in Python between short ones (the review cards' scheduling) gives way
    where it next reaches the database or a `checkpoint()`."""
    monkeypatch.setattr(preemption, "STEPS", 10**9)  # the handler never looks

    def busy_in_python(session: Session) -> None:
        for _ in range(5000):  # 5 s unless it gives way
            time.sleep(0.001)
            if gives_way_at == "a checkpoint":
                checkpoint()
            else:
                session.execute(text("SELECT 1"))

    busy_slice = _BusySlice(sqlite_database, busy_in_python)
    await busy_slice.start()
    assert await on_pooled_connection(sqlite_database.writer, _insert_raw("click")) == "click"
    await busy_slice.finished()

    assert await _written(sqlite_database.writer) == ["click", "slice"]
    assert busy_slice.attempts == 2


async def test_a_click_handed_to_a_slice_whose_thread_never_ran_fails_at_once() -> None:
    """A slice cancelled (or whose connection closed) before its thread
    began never serves what was handed to it: the member's write fails at
    once, to be stored the ordinary way, instead of waiting for ever."""
    ran: list[str] = []
    taken = Preemption()
    handed = taken.hand_over(lambda connection: ran.append("click"))
    assert handed is not None and taken.requested

    taken.abandon()  # the slice's hand-off ended without its thread
    with pytest.raises(Abandoned):
        await asyncio.wait_for(handed, 1)
    taken.serve(sqlite3.connect(":memory:"))  # too late: runs nothing
    assert ran == []
    assert taken.hand_over(lambda connection: None) is None  # the pool's way now


async def test_a_members_click_during_a_busy_close_slice_is_locked_in_and_counted_once(
    host: Host, engine: AsyncEngine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Through the quiz service: channel A's close is counting (its first
    slice busy for seconds) when a member clicks in channel B. The click is
    locked in without waiting for the slice, which gives way, runs again,
    and counts A's answers once."""
    if engine.dialect.name != "sqlite":
        pytest.skip("PostgreSQL has no single writer: its slices never give way")
    loop = asyncio.get_running_loop()
    busy = asyncio.Event()
    calls = 0
    score_slice = closing.score_slice

    def slow_first_slice(session: Session, post_id: int) -> bool:
        nonlocal calls
        calls += 1
        if calls == 1:
            loop.call_soon_threadsafe(busy.set)
            session.execute(text(_LONG_COUNT))  # stopped by B's click
        return score_slice(session, post_id)

    monkeypatch.setattr(closing, "score_slice", slow_first_slice)
    await host.start(OTHER_CHANNEL, questions=1, seconds=3600)
    await host.start(questions=1, seconds=60)
    for n in range(5):
        await host.answer(f"a{n}", correct=True)
    closing_a = asyncio.create_task(host.close_current())
    await busy.wait()
    checkouts = _Checkouts(engine)
    reply = await host.answer("b-member", correct=True, target=OTHER_CHANNEL)
    assert reply.text.startswith("Locked in")
    assert checkouts.count == 0  # handed to the slice's thread, not queued for the pool
    await closing_a

    assert calls >= 2  # the first slice gave way and ran again
    assert await check_read_models(engine) == ([], 0)
    board = await host.leaderboard()
    assert len(board) == 5 and len({points for _, points in board}) == 1
