"""One serving process per SQLite file: SQLite has one writer, and the timers
of two processes on one file would fight over it; PostgreSQL serves several."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

from sqlalchemy.engine import make_url

from bot.chat import StartError

try:
    import fcntl
except ImportError:  # not on Windows: no lock there, as before
    fcntl = None  # type: ignore[assignment]


def sqlite_file(database_url: str) -> Path | None:
    url = make_url(database_url)
    if url.get_backend_name() != "sqlite" or url.database in (None, "", ":memory:"):
        return None
    return Path(url.database)


@contextlib.contextmanager
def serving_alone(database_url: str) -> Iterator[None]:
    """Hold an exclusive lock beside the SQLite file while serving (released
    by the kernel however the process ends, kill -9 included); a second
    `quizmaster run` on the same file is refused in one line."""
    path = sqlite_file(database_url)
    if path is None or fcntl is None:
        yield
        return
    lock = path.with_name(path.name + ".lock")
    descriptor = os.open(lock, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.read(descriptor, 32).decode(errors="replace").strip() or "unknown"
            raise StartError(
                f"another quizmaster process (pid {holder}) is serving {path}; SQLite "
                "serves one process at a time: stop that one, or set QUIZ_DATABASE_URL "
                "to a PostgreSQL database to run several"
            ) from None
        os.ftruncate(descriptor, 0)
        os.write(descriptor, str(os.getpid()).encode())
        yield
    finally:
        os.close(descriptor)  # closing releases the lock
