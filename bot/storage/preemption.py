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

A slice that has given way `MAX_YIELDS` times in a row runs to its end the
next time, so a steady stream of clicks slows a close but never starves it.
"""

from __future__ import annotations

import sqlite3
import traceback
from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy.exc import OperationalError

# VM steps between two looks at the flag (a few tens of microseconds).
STEPS = 400
MAX_YIELDS = 3
# After giving way the slice waits this long before asking for the writer
# again: asking at once put its own set-up on the event loop beside the
# click it gave way to (a click's write took 1.3 ms instead of 0.7 at the
# median, in a scratch test of 200 hand-overs).
PAUSE = 0.002


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


class Preemption:
    """One preemptible transaction on SQLite's write connection: the event
    loop asks it to give way (`request`), the write thread watches."""

    # Two flags, each written by one thread and read by the other: a plain
    # attribute write is atomic under the GIL, and a late look costs only a
    # few more VM steps.
    def __init__(self) -> None:
        self.requested = False
        self._stoppable = True

    def request(self) -> None:
        """A member waits for the write connection (event loop side)."""
        self.requested = True

    @contextmanager
    def watching(self, connection: sqlite3.Connection) -> Iterator[None]:
        """Write thread, around the transaction: stop the running statement
        once asked; a statement so stopped (its transaction rolled back)
        comes out as `Preempted`."""
        connection.set_progress_handler(self._stop_now, STEPS)
        stopped: BaseException | None = None
        try:
            yield
        except (OperationalError, sqlite3.OperationalError) as error:
            if not self.requested:
                raise
            stopped = error
        finally:
            connection.set_progress_handler(None, 0)
        if stopped is not None:
            raise Preempted from stopped

    def committing(self) -> None:
        """Write thread: the work is done; its COMMIT is never stopped (it
        costs the member less than the slice run again would)."""
        self._stoppable = False

    def _stop_now(self) -> int:
        return 1 if self.requested and self._stoppable else 0
