"""A slice of a close gives SQLite's one writer to a member's click at once.

A big close is counted in slices (closing.py, cards.py), each a short write
transaction; but a click in another channel that arrives while a slice holds
the writer still waits for the rest of that slice (a few milliseconds: ten
times a click's own time). So a slice run as `preemptible` watches for a
member waiting for the write connection: the statement in progress stops
(SQLite's progress handler, polled every few hundred VM steps in the write
thread), the slice rolls back and is run again after the click. The COMMIT
is never stopped: once the slice's work is done, finishing it costs the
member less than running it again costs the close.

SQLite's handler sees only the statements; the Python between them (the
review cards' scheduling, 40 members' worth of it, about 2 ms a slice) gives
way at `checkpoint()`, which the write thread's engine also calls before each
statement, and a slice asked to give way before it began does not begin.

A slice that has given way `MAX_YIELDS` times in a row runs to its end the
next time, so a steady stream of clicks slows a close but never starves it.
"""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
import threading
import traceback
from asyncio import Future
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from sqlalchemy.exc import OperationalError

T = TypeVar("T")

# VM steps between two looks at the flag (a few tens of microseconds).
STEPS = 400
MAX_YIELDS = 3
# After giving way the slice waits this long before asking for the writer
# again: asking at once put its own set-up on the event loop beside the
# click it gave way to (a click's write took 1.3 ms instead of 0.7 at the
# median, in a scratch test of 200 hand-overs).
PAUSE = 0.002

# The preemptible transaction the write thread is running, if any.
_watched = threading.local()


def checkpoint() -> None:
    """Write thread, between statements or inside long Python work: give
    way now if a member waits. A no-op outside a preemptible transaction
    (PostgreSQL, a click's own batch) and once the COMMIT has begun."""
    preemption: Preemption | None = getattr(_watched, "current", None)
    if preemption is not None and preemption.requested and preemption.stoppable:
        raise Preempted


class Preempted(Exception):
    """The slice gave way to a member's click; it was rolled back."""

    def let_go(self) -> None:
        """Empty the finished frames of this error and of the statement's
        error it came from; call where it is caught, once the write thread's
        frames have all returned. Their locals (the slice's rows and cards,
        the connection's wrappers) and the errors form reference cycles that
        only the cyclic collector frees: 250 give-ways in a 10,000-answer
        close left 40,000 such objects, freed in one 40-50 ms pass in the
        write thread while it held the writer."""
        seen: set[int] = set()
        error: BaseException | None = self
        while error is not None and id(error) not in seen:
            seen.add(id(error))
            traceback.clear_frames(error.__traceback__)
            error = error.__cause__ or error.__context__


class Abandoned(Exception):
    """Work handed to a write thread that ended without running it."""


class Preemption:
    """One piece of timer work on SQLite's write connection, which a member's
    work may interrupt (`request`) or be handed to (`hand_over`); the write
    thread watches. A run that may not stop (`stoppable` false: it gave way
    too often) still takes work handed over, after its COMMIT."""

    # Two flags, each written by one thread and read by the other: a plain
    # attribute write is atomic under the GIL, and a late look costs only a
    # few more VM steps.
    def __init__(self, *, stoppable: bool = True) -> None:
        self.requested = False
        self.stoppable = stoppable
        self._lock = threading.Lock()
        # Members' work waiting for this transaction's end; None once served.
        self._handed: list[tuple[Callable[[sqlite3.Connection], Any], Future[Any]]] | None = []

    def request(self) -> None:
        """A member waits for the write connection (event loop side)."""
        self.requested = True

    def hand_over(self, work: Callable[[sqlite3.Connection], T]) -> Future[T] | None:
        """Event loop: have the write thread run `work(connection)` as soon as
        this transaction has ended (given way, or committed), before the
        connection goes back to the pool. A click then waits for neither the
        slice's way back to the event loop nor its own way to the thread
        (together about 1 ms on the development machine, most of its wait).
        None once the thread is past that point: take the pool's way."""
        future: Future[T] = asyncio.get_running_loop().create_future()
        with self._lock:
            if self._handed is None:
                return None
            self._handed.append((work, future))
        self.request()
        return future

    def serve(self, connection: sqlite3.Connection) -> None:
        """Write thread, once the transaction has ended: run the work handed
        over meanwhile, in the order it came, each settling its future."""
        with self._lock:
            handed, self._handed = self._handed or [], None
        for work, future in handed:
            try:
                settled: tuple[Any, BaseException | None] = (work(connection), None)
            except BaseException as error:  # the member's own error, for its task
                settled = (None, error)
            # A loop closed meanwhile (shutdown) has nobody left to tell.
            with contextlib.suppress(RuntimeError):
                future.get_loop().call_soon_threadsafe(_settle, future, *settled)

    def abandon(self) -> None:
        """Event loop, once the transaction's hand-off is over: fail any work
        handed over that the thread did not take (it never ran `serve`)."""
        with self._lock:
            handed, self._handed = self._handed or [], None
        for _, future in handed:
            _settle(future, None, Abandoned("the write thread ended before it ran this work"))

    @contextmanager
    def watching(self, connection: sqlite3.Connection) -> Iterator[None]:
        """Write thread, around the transaction: stop the running statement
        once asked; a statement so stopped (its transaction rolled back)
        comes out as `Preempted`."""
        if not self.stoppable:
            yield
            return
        if self.requested:
            raise Preempted  # asked before it began: nothing to undo
        connection.set_progress_handler(self._stop_now, STEPS)
        _watched.current = self
        stopped: BaseException | None = None
        try:
            yield
        except (OperationalError, sqlite3.OperationalError) as error:
            if not self.requested:
                raise
            stopped = error
        finally:
            _watched.current = None
            connection.set_progress_handler(None, 0)
        if stopped is not None:
            raise Preempted from stopped

    def committing(self) -> None:
        """Write thread: the work is done; its COMMIT is never stopped (it
        costs the member less than the slice run again would)."""
        self.stoppable = False

    def _stop_now(self) -> int:
        return 1 if self.requested and self.stoppable else 0


def _settle(future: Future[Any], done: Any, error: BaseException | None) -> None:
    if future.done():  # its task was cancelled meanwhile
        return
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(done)
