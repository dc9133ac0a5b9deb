"""Engine set-up for SQLite and PostgreSQL, and schema migrations with Alembic."""

from __future__ import annotations

import asyncio
import contextlib
import errno
import os
import socket
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from alembic import command
from alembic.config import Config
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Connection, delete, event, text
from sqlalchemy.engine import URL, make_url
from sqlalchemy.ext.asyncio import AsyncEngine, async_sessionmaker, create_async_engine
from sqlalchemy.pool import PoolResetState

from bot.storage import item_analysis, member_activity, recount
from bot.storage.db_thread import begin_sqlite
from bot.storage.lanes import lane_pool
from bot.storage.models import Base, ClosingPost
from bot.storage.post_votes import backfill_post_votes

MIGRATIONS_DIR = Path(__file__).resolve().parent / "migrations"
# Any number will do, as long as every Quizmaster process uses the same one.
_MIGRATION_LOCK_KEY = 7_141_592


# Read-only connections beside SQLite's one write connection: enough that a
# click's read never queues behind a few leaderboards, few enough to stay cheap
# (each is a thread in aiosqlite). More are opened for a burst and closed after.
SQLITE_READERS = 4
SQLITE_READER_BURST = 4
# Connections timer work may hold at once on PostgreSQL (of 10 + 20): the rest
# stay free for members' clicks and commands (bot/storage/lanes.py).
POSTGRES_BACKGROUND = 8


@dataclass(frozen=True)
class Database:
    """The engines the stores run on: `writer` for every transaction that writes,
    `reader` for read-only ones.

    On SQLite the reader is a pool of its own read-only connections: in WAL mode
    they read the last committed state while the one writer holds its lock, so
    a leaderboard never waits for a write, and a write never waits for a
    leaderboard. On PostgreSQL, whose pool already runs transactions side by
    side, the reader shares the writer's pool but reads outside a transaction:
    at READ COMMITTED every statement is its own snapshot either way, and a
    BEGIN and a ROLLBACK around each read are two more round trips (each a
    wake-up of a server process, a tenth of a busy bot's CPU). A read that
    needs one snapshot asks for REPEATABLE READ itself (`check_read_models`)."""

    writer: AsyncEngine
    reader: AsyncEngine

    @property
    def dialect(self) -> str:
        return self.writer.dialect.name

    @property
    def sqlite_file(self) -> str | None:
        """The path of a SQLite database file (None on PostgreSQL or in memory)."""
        url = self.writer.url
        if url.get_backend_name() != "sqlite" or url.database in (None, "", ":memory:"):
            return None
        return None if url.database.startswith("file:") else url.database

    async def dispose(self) -> None:
        if self.reader.sync_engine.pool is not self.writer.sync_engine.pool:
            await self.reader.dispose()
        await self.writer.dispose()


def open_database(url: str, *, echo: bool = False, search_path: str | None = None) -> Database:
    """The write engine for `url` and, on a SQLite file, its read-only pool."""
    writer = create_engine(url, echo=echo, search_path=search_path)
    if make_url(url).get_backend_name() != "sqlite":
        return Database(writer, writer.execution_options(isolation_level="AUTOCOMMIT"))
    return Database(writer, _sqlite_reader(url, echo=echo))


def create_engine(url: str, *, echo: bool = False, search_path: str | None = None) -> AsyncEngine:
    """An engine for `url`. `search_path` puts PostgreSQL tables in that schema.
    On SQLite this is the one write connection; `open_database` adds the readers."""
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite":
        connect_args = {"server_settings": {"search_path": search_path}} if search_path else {}
        return create_async_engine(
            url,
            echo=echo,
            pool_size=10,
            max_overflow=20,
            poolclass=lane_pool(POSTGRES_BACKGROUND),
            # The most recently returned connection first: at everyday load one
            # or two connections serve everything, with their server-side
            # prepared statements and caches warm (taken in turn, each of the
            # pool's connections prepares each statement anew).
            pool_use_lifo=True,
            # No ping before each checkout: it is a round trip on every
            # transaction (a quarter of the answer path's time). A connection
            # the server dropped fails its transaction, SQLAlchemy renews the
            # pool, and the answer writer stores that batch again row by row
            # (tests/test_answer_faults.py kills the pool's connections).
            pool_pre_ping=False,
            # A thousand questions closing at one moment each want a connection
            # for a few short transactions: they queue, as on SQLite, rather
            # than fail after the default 30 s and be tried again.
            pool_timeout=120,
            connect_args=connect_args,
        )

    if parsed.database and parsed.database != ":memory:":
        Path(parsed.database).parent.mkdir(parents=True, exist_ok=True)
        if not parsed.database.startswith("file:"):
            _create_private(Path(parsed.database))
            # Open it once here: a folder we cannot write fails now, in one clear
            # error, rather than in aiosqlite, whose failed connect can leave its
            # worker thread printing a traceback as the loop closes (aiosqlite#389).
            sqlite3.connect(parsed.database).close()
    # SQLite allows one writer at a time. One pooled connection serialises this
    # process's transactions fairly in asyncio instead of making them spin in
    # SQLite's busy handler; the busy timeout covers other processes (the CLI).
    engine = create_async_engine(
        url,
        echo=echo,
        pool_size=1,
        max_overflow=0,
        poolclass=lane_pool(1),
        pool_timeout=120,
        # The pool's ROLLBACK on return is a hand-off to the connection's
        # thread after every write, though the write has committed: the
        # "reset" listener below rolls back only what is still open.
        pool_reset_on_return=None,
    )

    @event.listens_for(engine.sync_engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        _sqlite_settings(dbapi_connection, "PRAGMA foreign_keys=ON", "PRAGMA synchronous=NORMAL")

    @event.listens_for(engine.sync_engine, "reset")
    def _on_reset(dbapi_connection: Any, _record: Any, state: PoolResetState) -> None:
        # A transaction left open (work that failed half-way in the thread)
        # must not hold the write lock: end it as the pool would have.
        if state.asyncio_safe and _in_transaction(dbapi_connection):
            dbapi_connection.rollback()

    @event.listens_for(engine.sync_engine, "begin")
    def _on_begin(conn: Connection) -> None:
        # Take the write lock up front so a read-then-write transaction can
        # never fail half-way with SQLITE_BUSY.
        conn.exec_driver_sql("BEGIN IMMEDIATE")

    return engine


def _create_private(path: Path) -> None:
    """Create the database file readable by its owner only (answers and member
    ids are in it); SQLite gives its -wal and -shm files the same mode."""
    # It exists already, or cannot be made: then sqlite3.connect, next, says why.
    with contextlib.suppress(OSError):
        os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))


def _sqlite_reader(url: str, *, echo: bool) -> AsyncEngine:
    engine = create_async_engine(
        url,
        echo=echo,
        pool_size=SQLITE_READERS,
        max_overflow=SQLITE_READER_BURST,
        poolclass=lane_pool(SQLITE_READERS - 1),
        # Warm page and statement caches first, as on PostgreSQL above.
        pool_use_lifo=True,
        pool_timeout=120,
        # Every read ends its own transaction (SQLAlchemy's connection on close,
        # a one-hop read in its thread): the pool's extra ROLLBACK on return
        # would be one more hand-off to the connection's thread per read.
        pool_reset_on_return=None,
    )

    @event.listens_for(engine.sync_engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        # query_only: a write sent here by mistake fails at once instead of
        # competing with the write connection for SQLite's lock.
        _sqlite_settings(dbapi_connection, "PRAGMA query_only=ON")

    @event.listens_for(engine.sync_engine, "begin")
    def _on_begin(conn: Connection) -> None:
        # A deferred transaction: one snapshot for all of a read's queries,
        # taken at its first SELECT, and no lock that a writer waits for.
        begin_sqlite(conn, "BEGIN")

    return engine


def _in_transaction(dbapi_connection: Any) -> bool:
    """Whether the sqlite3 connection behind SQLAlchemy's aiosqlite adapter is
    inside a transaction (a flag read, no hand-off to its thread)."""
    return bool(dbapi_connection.driver_connection._conn.in_transaction)


def _sqlite_settings(dbapi_connection: Any, *pragmas: str) -> None:
    dbapi_connection.isolation_level = None  # we issue BEGIN ourselves (the "begin" events)
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA busy_timeout=30000")
    # WAL lets readers and the writer work at once; it is stored in the file,
    # so this only changes a database that is not in WAL mode yet.
    cursor.execute("PRAGMA journal_mode=WAL")
    for pragma in pragmas:
        cursor.execute(pragma)
    cursor.close()


def session_factory(engine: AsyncEngine) -> async_sessionmaker[Any]:
    return async_sessionmaker(engine, expire_on_commit=False)


def alembic_config() -> Config:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    return config


def _upgrade(connection: Connection, revision: str) -> None:
    config = alembic_config()
    config.attributes["connection"] = connection
    if connection.dialect.name == "sqlite":
        _upgrade_sqlite(connection, config, revision)
        return
    with connection.begin():
        # Two processes starting together must not both run the migrations.
        connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _MIGRATION_LOCK_KEY})
        command.upgrade(config, revision)


class BrokenReferences(Exception):
    """A migration left rows pointing at rows that are gone (rolled back)."""


def _upgrade_sqlite(connection: Connection, config: Config, revision: str) -> None:
    """SQLite cannot alter most of a table, so a migration rebuilds it (create a
    copy, fill it, drop the old one, rename). With foreign keys enforced, that
    drop would cascade into every table pointing at it: rebuilding `channels`
    deleted every quiz, post and answer. Enforcement is off for the migration
    (SQLite ignores the pragma inside a transaction, so it is set before one
    begins), and the references are checked before it commits."""
    raw = connection.connection.dbapi_connection
    assert raw is not None
    _pragma(raw, "PRAGMA foreign_keys=OFF")
    try:
        with connection.begin():
            command.upgrade(config, revision)
            broken = connection.exec_driver_sql("PRAGMA foreign_key_check").fetchall()
            if broken:
                raise BrokenReferences(f"{len(broken)} rows, first in table {broken[0][0]}")
    finally:
        _pragma(raw, "PRAGMA foreign_keys=ON")


def _pragma(raw: Any, pragma: str) -> None:
    cursor = raw.cursor()
    try:
        cursor.execute(pragma)
    finally:
        cursor.close()


async def upgrade(engine: AsyncEngine, revision: str = "head") -> None:
    """Create or upgrade the schema to the newest migration, or to `revision`
    (tests and benchmarks fill an older schema, then migrate it like a release).
    `_upgrade` begins each backend's transaction itself."""
    async with engine.connect() as connection:
        await connection.run_sync(_upgrade, revision)


def head_revision() -> str:
    """The newest migration this build has."""
    head = ScriptDirectory.from_config(alembic_config()).get_current_head()
    assert head is not None
    return head


class NoDatabase(Exception):
    """A SQLite file that does not exist (a check must not create it)."""


def _sqlite_revision(path: Path) -> str | None:
    if not path.is_file():
        raise NoDatabase(str(path))
    with contextlib.closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as plain:
        try:
            row = plain.execute("SELECT version_num FROM alembic_version").fetchone()
        except sqlite3.OperationalError:  # no such table: never migrated
            return None
    return str(row[0]) if row else None


async def current_revision(url: str) -> str | None:
    """The migration a database is at (None: none, an empty database), read
    without writing anything: on SQLite through a read-only connection, as
    opening the bot's engines would create the file and set its journal mode."""
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        return await asyncio.to_thread(_sqlite_revision, Path(parsed.database or ""))
    engine = create_engine(url)
    try:
        async with engine.connect() as connection:
            return await connection.run_sync(
                lambda sync: MigrationContext.configure(sync).get_current_revision()
            )
    finally:
        await engine.dispose()


async def check_read_models(engine: AsyncEngine) -> tuple[list[str], int]:
    """Differences between the read models and a recount from the answers,
    read in one snapshot so a running bot's writes cannot show up half-done."""
    async with engine.connect() as connection:
        if connection.dialect.name == "postgresql":
            await connection.execution_options(isolation_level="REPEATABLE READ")
        async with connection.begin():
            return await connection.run_sync(recount.differences)


async def rebuild_read_models(engine: AsyncEngine) -> None:
    async with engine.begin() as connection:
        # Every closed post's answers are counted afresh: a close still being
        # counted a slice at a time must not add its remaining slices again.
        await connection.execute(delete(ClosingPost))
        await connection.run_sync(recount.rebuild)
        await connection.run_sync(backfill_post_votes)
        await connection.run_sync(member_activity.backfill)
        await connection.run_sync(item_analysis.backfill_analysis)


async def ping(engine: AsyncEngine) -> bool:
    try:
        async with engine.connect() as connection:
            await connection.execute(text("SELECT 1"))
    except Exception:
        return False
    return True


# -- start-up failures, told in one sentence --------------------------------------------


def describe_database_error(error: BaseException, url: str) -> str | None:
    """One sentence saying why the database at `url` cannot be used at start-up and
    what to do, or None for an error we do not recognise. Never shows the password."""
    parsed = make_url(url)
    describe = _sqlite_sentence if parsed.get_backend_name() == "sqlite" else _postgres_sentence
    for cause in _causes(error):
        sentence = describe(cause, parsed)
        if sentence is not None:
            return sentence
    return None


def _causes(error: BaseException) -> Iterator[BaseException]:
    """The error and what it wraps: SQLAlchemy's `.orig`, then `__cause__`/`__context__`."""
    seen: set[int] = set()
    pending: list[BaseException] = [error]
    while pending:
        current = pending.pop(0)
        if id(current) in seen:
            continue
        seen.add(id(current))
        yield current
        for inner in (getattr(current, "orig", None), current.__cause__, current.__context__):
            if isinstance(inner, BaseException):
                pending.append(inner)


# SQLSTATEs of the login and set-up refusals (asyncpg raises InvalidPasswordError,
# InvalidAuthorizationSpecificationError, InvalidCatalogNameError, InsufficientPrivilegeError).
_BAD_PASSWORD, _BAD_ROLE, _NO_DATABASE, _NO_PRIVILEGE = "28P01", "28000", "3D000", "42501"


def _postgres_sentence(error: BaseException, url: URL) -> str | None:
    server = f"{url.host or 'localhost'}:{url.port or 5432}"
    role = url.username or "(none)"
    shown = url.render_as_string(hide_password=True)
    sqlstate = getattr(error, "sqlstate", None)
    if sqlstate == _BAD_PASSWORD:
        return (
            f"PostgreSQL at {server} rejected the password of role {role}; "
            "correct the password in QUIZ_DATABASE_URL"
        )
    if sqlstate == _BAD_ROLE:
        return (
            f"PostgreSQL at {server} refused role {role} ({error}); "
            "create the role, or correct the user name in QUIZ_DATABASE_URL"
        )
    if sqlstate == _NO_DATABASE:
        return (
            f"the database {url.database} does not exist on the PostgreSQL server at {server}; "
            f"create it (createdb {url.database}) or correct the name in QUIZ_DATABASE_URL"
        )
    if sqlstate == _NO_PRIVILEGE:
        return (
            f"role {role} may not create the tables in {url.database} ({error}); "
            "grant it CREATE on the database and its schema, or use the owner's role"
        )
    if isinstance(error, socket.gaierror):
        return (
            f"the database host {url.host} in QUIZ_DATABASE_URL cannot be found; "
            "check the host name"
        )
    if isinstance(error, TimeoutError):
        return (
            f"the PostgreSQL server at {server} did not answer in time; check that it "
            "runs and that this machine can reach it"
        )
    if isinstance(error, OSError):
        return (
            f"PostgreSQL at {server} is not accepting connections (QUIZ_DATABASE_URL={shown}); "
            "start PostgreSQL, or correct the host and port"
        )
    return None


def _sqlite_sentence(error: BaseException, url: URL) -> str | None:
    path = url.database or ""
    fix = "or set QUIZ_DATA_DIR (or QUIZ_DATABASE_URL) to a folder this user can write"
    if isinstance(error, OSError):  # creating the data folder failed
        folder = error.filename or Path(path).parent
        reasons = {
            errno.EEXIST: "a file is in the way",
            errno.ENOTDIR: "part of the path is a file, not a folder",
            errno.EACCES: "permission denied",
            errno.EPERM: "permission denied",
            errno.EROFS: "the file system is read-only",
        }
        reason = reasons.get(error.errno or 0, error.strerror or "it cannot be created")
        return f"the data folder {folder} cannot be created ({reason}); fix that, {fix}"
    if not isinstance(error, sqlite3.Error):
        return None
    message = str(error)
    if "unable to open database file" in message:
        return (
            f"the SQLite database {path} cannot be opened or created: its folder is missing "
            f"or not writable; make it writable, {fix}"
        )
    if "readonly database" in message:
        return (
            f"the SQLite database {path} is read-only; let this user write it and its folder, {fix}"
        )
    if "file is not a database" in message:
        return f"{path} is not a SQLite database; move it away, {fix}"
    return None


__all__ = [
    "Base",
    "Database",
    "create_engine",
    "describe_database_error",
    "open_database",
    "ping",
    "session_factory",
    "upgrade",
]
