"""Pieces the benchmarks share: an adapter with no network, and a throwaway
PostgreSQL schema to measure in."""

from __future__ import annotations

import asyncio
import sys
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bot.chat import Command, Interaction, MessageRef, OutMessage, Target  # noqa: E402
from bot.dialect import PLAIN  # noqa: E402
from bot.quiz.scheduler import DAILY  # noqa: E402
from bot.storage.repository import Repository  # noqa: E402


class NullAdapter:
    """Accepts posts without a network, so only the quiz core and database are
    timed; `latency` seconds per post stands in for a platform's round trip."""

    platform = "bench"
    dialect = PLAIN
    connected = True

    def __init__(self, latency: float = 0.0) -> None:
        self.latency = latency
        self.buttons: tuple[str, ...] = ()
        self.posts = 0

    async def send(self, target: Target, message: OutMessage) -> MessageRef:
        if self.latency:
            await asyncio.sleep(self.latency)
        if message.buttons:
            self.buttons = tuple(button.custom_id for button in message.buttons)
            self.posts += 1
        return MessageRef(target, "1")

    async def edit(self, ref: MessageRef, message: OutMessage) -> None:
        return None

    async def reply_private(self, event: Command | Interaction, message: OutMessage) -> None:
        return None

    async def display_names(self, target: Target, user_ids: list[str]) -> dict[str, str]:
        return {}


class HeldClock:
    """A clock held where the benchmark puts it (`moment`); waits return at once,
    so only the bot's own work is timed."""

    def __init__(self, moment: datetime) -> None:
        self.moment = moment

    def now(self) -> datetime:
        return self.moment

    async def wait(self, event: asyncio.Event, seconds: float | None) -> None:
        return None


async def schedule_daily(repository: Repository, channels: int, due: datetime) -> None:
    """Channels c0 … c{channels-1}, each with a daily question due at `due` (UTC)."""
    for number in range(channels):
        channel = await repository.channels.channel(Target("bench", "guild", f"c{number}"), due)
        await repository.schedules.set_schedule(
            channel.id,
            DAILY,
            at_time=due.strftime("%H:%M"),
            zone="UTC",
            days=list(range(7)),
            bank=None,
            tag=None,
            next_fire=due,
            created_by="bench",
            now=due,
        )


@asynccontextmanager
async def postgres_schema(url: str) -> AsyncIterator[str]:
    """A new, empty schema on the server at `url`, dropped afterwards."""
    import asyncpg
    from sqlalchemy.engine import make_url

    schema = f"bench_{uuid.uuid4().hex[:8]}"
    dsn = make_url(url).set(drivername="postgresql").render_as_string(False)
    admin = await asyncpg.connect(dsn)
    await admin.execute(f'CREATE SCHEMA "{schema}"')
    try:
        yield schema
    finally:
        await admin.execute(f'DROP SCHEMA "{schema}" CASCADE')
        await admin.close()
