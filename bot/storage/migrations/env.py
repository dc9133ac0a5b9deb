"""Alembic environment. Quizmaster runs migrations itself (`quizmaster db upgrade`
and at start-up), handing over an open connection; for `alembic revision
--autogenerate` during development it connects with the bot's settings."""

from __future__ import annotations

import asyncio

from alembic import context
from sqlalchemy import Connection

from bot.storage.models import Base


def _run(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=Base.metadata,
        render_as_batch=connection.dialect.name == "sqlite",
    )
    with context.begin_transaction():
        context.run_migrations()


async def _run_with_settings() -> None:
    from bot.config import load_settings
    from bot.storage.db import create_engine

    engine = create_engine(load_settings().resolved_database_url)
    async with engine.begin() as connection:
        await connection.run_sync(_run)
    await engine.dispose()


given = context.config.attributes.get("connection")
if given is not None:
    _run(given)
else:
    asyncio.run(_run_with_settings())
