"""Engine set-up for SQLite and PostgreSQL, and schema migrations with Alembic."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from alembic import command
from alembic.config import Config
from sqlalchemy import Connection, event, text
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncEngine, async_sessionmaker, create_async_engine

from bot.storage.models import Base

MIGRATIONS_DIR = Path(__file__).resolve().parent / "migrations"
# Any number will do, as long as every Quizmaster process uses the same one.
_MIGRATION_LOCK_KEY = 7_141_592


def create_engine(url: str, *, echo: bool = False, search_path: str | None = None) -> AsyncEngine:
    """An engine for `url`. `search_path` puts PostgreSQL tables in that schema."""
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite":
        connect_args = {"server_settings": {"search_path": search_path}} if search_path else {}
        return create_async_engine(
            url,
            echo=echo,
            pool_size=10,
            max_overflow=20,
            pool_pre_ping=True,
            connect_args=connect_args,
        )

    if parsed.database and parsed.database != ":memory:":
        Path(parsed.database).parent.mkdir(parents=True, exist_ok=True)
    # SQLite allows one writer at a time. One pooled connection serialises this
    # process's transactions fairly in asyncio instead of making them spin in
    # SQLite's busy handler; the busy timeout covers other processes (the CLI).
    engine = create_async_engine(url, echo=echo, pool_size=1, max_overflow=0, pool_timeout=120)

    @event.listens_for(engine.sync_engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.isolation_level = None  # we issue BEGIN ourselves, below
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute("PRAGMA busy_timeout=30000")
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.close()

    @event.listens_for(engine.sync_engine, "begin")
    def _on_begin(conn: Connection) -> None:
        # Take the write lock up front so a read-then-write transaction can
        # never fail half-way with SQLITE_BUSY.
        conn.exec_driver_sql("BEGIN IMMEDIATE")

    return engine


def session_factory(engine: AsyncEngine) -> async_sessionmaker[Any]:
    return async_sessionmaker(engine, expire_on_commit=False)


def alembic_config() -> Config:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    return config


def _upgrade(connection: Connection) -> None:
    if connection.dialect.name == "postgresql":
        # Two processes starting together must not both run the migrations.
        connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _MIGRATION_LOCK_KEY})
    config = alembic_config()
    config.attributes["connection"] = connection
    command.upgrade(config, "head")


async def upgrade(engine: AsyncEngine) -> None:
    """Create or upgrade the schema to the newest migration."""
    async with engine.begin() as connection:
        await connection.run_sync(_upgrade)


async def ping(engine: AsyncEngine) -> bool:
    try:
        async with engine.connect() as connection:
            await connection.execute(text("SELECT 1"))
    except Exception:
        return False
    return True


__all__ = ["Base", "create_engine", "ping", "session_factory", "upgrade"]
