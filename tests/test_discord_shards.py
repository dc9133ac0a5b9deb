"""Discord shards end to end: the real discord.py sharded client against the fake
Discord, which routes each server's events to the shard `(guild_id >> 22) % count`.

One process may run every shard (the gateway's recommendation) or a range of
them beside other processes on one database; only the process holding shard 0
registers `/quiz`, and posts reach every server over REST whatever shard its
events arrive on."""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from aiohttp.test_utils import TestClient, TestServer

from bot.adapters.discord import platform as discord_platform
from bot.adapters.discord.platform import DiscordPlatform
from bot.adapters.discord.shards import parse_shard_ids
from bot.clock import Clock, SystemClock
from bot.config import Settings
from bot.health import health_app
from bot.platforms import StartError, settings_problem
from bot.quiz.bank import Catalog
from bot.quiz.service import QuizService
from bot.storage.db import Database, open_database
from bot.storage.repository import Repository
from tests.fakes.clock import ShiftedClock
from tests.fakes.fake_discord import (
    MANAGE_GUILD,
    MEMBER_PERMISSIONS,
    FakeDiscord,
    buttons_of,
    text_of,
)
from tests.test_discord import correct_letter

MOD = "440000000000000001"
PLAYER = "440000000000000002"


def guild_on(shard: int, count: int, n: int = 0) -> str:
    """A server id that Discord puts on `shard` of `count` (ids carry a time
    stamp above bit 22; the shard is that stamp modulo the count)."""
    stamp = 1_000_000_000_000 + n * count
    stamp += (shard - stamp) % count
    return str((stamp << 22) | 1)


def channel_of(guild_id: str) -> str:
    return str(int(guild_id) + 7)


def make_fake(guilds: list[str], **options: int) -> FakeDiscord:
    fake = FakeDiscord(**options)
    for guild_id in guilds:
        fake.add_guild(guild_id, [channel_of(guild_id)])
        fake.add_member(guild_id, MOD, "Mod", permissions=MEMBER_PERMISSIONS | MANAGE_GUILD)
        fake.add_member(guild_id, PLAYER, "Player")
    return fake


def settings_for(fake: FakeDiscord, **extra: str) -> Settings:
    values = {
        "DISCORD_TOKEN": fake.token,
        "QUIZ_DISCORD_API_URL": fake.api_url,
        "QUIZ_DISCORD_GATEWAY_URL": fake.gateway_url,
        **extra,
    }
    return Settings(_env_file=None, **values)  # type: ignore[call-arg]


@dataclass
class Process:
    """One bot process: its service and its Discord platform (its shards)."""

    service: QuizService
    platform: DiscordPlatform
    timers: asyncio.Task[None] | None

    async def stop(self) -> None:
        self.service.shutdown()
        await self.platform.close()
        if self.timers is not None:
            self.timers.cancel()
            await asyncio.gather(self.timers, return_exceptions=True)


async def start_process(
    fake: FakeDiscord,
    database: Database,
    catalog: Catalog,
    *,
    clock: Clock | None = None,
    timers: bool = True,
    identify_interval: float = 0.0,
    **shard_settings: str,
) -> Process:
    service = QuizService(
        Repository(database), catalog, clock or SystemClock(), rng=random.Random(7)
    )
    platform = discord_platform.platform(
        settings_for(fake, **shard_settings),
        service,
        guild_ready_timeout=0.05,
        identify_interval=identify_interval,
    )
    service.register(platform.adapter)
    await platform.start()
    running = asyncio.create_task(service.run_timers()) if timers else None
    return Process(service, platform, running)


@pytest.fixture
async def database(tmp_path: Path, _templates: Any) -> AsyncIterator[Database]:
    made = open_database(f"sqlite+aiosqlite:///{await _templates.sqlite_copy(tmp_path / 'q.db')}")
    yield made
    await made.dispose()


async def command(
    fake: FakeDiscord, guild_id: str, path: str, user: str = MOD, **options: Any
) -> str:
    token = await fake.slash(guild_id, channel_of(guild_id), user, path, options or None)
    _, final = await fake.reply(token)
    return text_of(final)


async def healthz(process: Process) -> tuple[int, dict[str, Any]]:
    async def database_ok() -> bool:
        return True

    app = health_app(process.service.adapters, database_ok)
    async with TestClient(TestServer(app, host="127.0.0.1")) as client:
        response = await client.get("/healthz")
        return response.status, await response.json()


# -- settings --------------------------------------------------------------------------------


def test_shard_ranges_are_read_as_people_write_them_and_mistakes_get_one_line() -> None:
    assert parse_shard_ids("0-3") == [0, 1, 2, 3]
    assert parse_shard_ids("4, 5") == [4, 5]
    assert parse_shard_ids("6,0-1") == [0, 1, 6]
    assert parse_shard_ids("") is None
    with pytest.raises(ValueError, match="'3-1' is a range that runs backwards"):
        parse_shard_ids("3-1")
    with pytest.raises(ValueError, match="'x' is not a shard number"):
        parse_shard_ids("0,x")

    fake = FakeDiscord()
    settings = settings_for(fake, QUIZ_DISCORD_SHARD_COUNT="2", QUIZ_DISCORD_SHARD_IDS="1-3")
    assert settings_problem(settings) == (
        "QUIZ_DISCORD_SHARD_IDS names shard 3, but there are only 2 shards "
        "(0-1; QUIZ_DISCORD_SHARD_COUNT)"
    )
    with pytest.raises(ValueError, match="whole number of shards"):
        settings_for(fake, QUIZ_DISCORD_SHARD_COUNT="0")


async def test_a_shard_range_beyond_the_gateways_recommendation_is_refused_at_start(
    database: Database, catalog: Catalog
) -> None:
    fake = make_fake([guild_on(0, 2)], shards=2)
    await fake.start()
    try:
        with pytest.raises(StartError, match="names shard 3, but there are only 2 shards"):
            await start_process(fake, database, catalog, QUIZ_DISCORD_SHARD_IDS="3")
        assert fake.identifies == []
    finally:
        await fake.close()


# -- one process, every shard ---------------------------------------------------------------


async def test_one_process_runs_the_recommended_shards_and_each_server_is_served_on_its_own(
    database: Database, catalog: Catalog
) -> None:
    guilds = [guild_on(shard, 3) for shard in range(3)]
    fake = make_fake(guilds, shards=3)
    await fake.start()
    process = await start_process(fake, database, catalog)
    try:
        assert sorted(tuple(i["shard"]) for i in fake.identifies) == [(0, 3), (1, 3), (2, 3)]
        for shard, session in fake.shard_sessions().items():
            assert session.serves(guilds[shard])
        assert process.platform.adapter.parts == {"shard 0": True, "shard 1": True, "shard 2": True}
        for guild_id in guilds:
            assert "/quiz start" in await command(fake, guild_id, "help", user=PLAYER)
        status, body = await healthz(process)
        assert status == 200
        assert body["parts"] == {"discord": {f"shard {n}": "connected" for n in range(3)}}
        assert len(fake.calls_to("PUT", r"/applications/\d+/commands")) == 1
    finally:
        await process.stop()
        await fake.close()


async def test_a_dropped_shard_reconnects_alone_and_health_says_which_was_down(
    database: Database, catalog: Catalog
) -> None:
    guilds = [guild_on(shard, 2) for shard in range(2)]
    fake = make_fake(guilds, shards=2)
    await fake.start()
    process = await start_process(fake, database, catalog)
    adapter = process.platform.adapter
    try:
        steady = fake.shard_sessions()[0]
        fake.refused_gateways = 1  # shard 1's first try to come back fails
        await fake.drop_gateway(shard=1)
        await fake.wait_for(lambda: adapter.parts["shard 1"] is False)
        status, body = await healthz(process)
        assert status == 503
        assert body["status"] == "degraded"
        assert body["parts"]["discord"] == {"shard 0": "connected", "shard 1": "disconnected"}
        # Shard 0's server is answered while shard 1 is away.
        assert "/quiz start" in await command(fake, guilds[0], "help", user=PLAYER)

        await fake.wait_for(lambda: adapter.parts["shard 1"] and 1 in fake.shard_sessions(), 15)
        assert fake.shard_sessions()[0] is steady  # never cut or re-identified
        assert [i["shard"][0] for i in fake.identifies].count(0) == 1
        assert "/quiz start" in await command(fake, guilds[1], "help", user=PLAYER)
        assert (await healthz(process))[0] == 200
    finally:
        await process.stop()
        await fake.close()


async def test_identifies_are_paced_per_bucket_of_the_gateways_max_concurrency(
    database: Database, catalog: Catalog
) -> None:
    fake = make_fake([guild_on(0, 4)], shards=4, max_concurrency=2)
    await fake.start()
    process = await start_process(fake, database, catalog, identify_interval=2.0)
    try:
        at = dict(fake.identified_at)
        assert sorted(at) == [0, 1, 2, 3]
        # Shards 0 and 2 share bucket 0, 1 and 3 bucket 1: each bucket waits
        # the interval, the other bucket does not wait for it.
        assert at[2] - at[0] >= 1.95
        assert at[3] - at[1] >= 1.95
        assert at[1] - at[0] < 1.5
    finally:
        await process.stop()
        await fake.close()


# -- two processes on one database -----------------------------------------------------------


async def test_two_processes_split_the_shards_and_posts_reach_servers_on_the_other_shard(
    database: Database, catalog: Catalog
) -> None:
    first, second = guild_on(0, 2), guild_on(1, 2)
    fake = make_fake([first, second], shards=2)
    await fake.start()
    clock = ShiftedClock()
    # Only the process holding shard 0 runs timers here, so the daily post of
    # the server on shard 1 must be made by it, over REST.
    holder_of_0 = await start_process(
        fake,
        database,
        catalog,
        clock=clock,
        QUIZ_DISCORD_SHARD_COUNT="2",
        QUIZ_DISCORD_SHARD_IDS="0",
    )
    holder_of_1 = await start_process(
        fake,
        database,
        catalog,
        clock=clock,
        timers=False,
        QUIZ_DISCORD_SHARD_COUNT="2",
        QUIZ_DISCORD_SHARD_IDS="1",
    )
    try:
        assert [tuple(i["shard"]) for i in fake.identifies] == [(0, 2), (1, 2)]
        assert len(fake.calls_to("PUT", r"/applications/\d+/commands")) == 1
        assert holder_of_0.platform.adapter.parts == {"shard 0": True}
        assert holder_of_1.platform.adapter.parts == {"shard 1": True}

        due = clock.minute_due_in(2.0)
        saved = await command(fake, second, "schedule daily", time=f"{due:%H:%M}")
        assert saved.startswith("Daily question scheduled")
        # Another process finds a new schedule within its idle time (30 s on SQLite);
        # the test wakes it rather than wait.
        holder_of_0.service.wake()
        [question] = await fake.wait_for(lambda: fake.questions(channel_of(second)), within=8)
        posts = fake.calls_to("POST", rf"/channels/{channel_of(second)}/messages")
        assert len(posts) == 1

        # The click arrives on shard 1's socket and is answered from the shared database.
        right = correct_letter(catalog, question)
        [button] = [b for b in buttons_of(question) if b["label"] == right]
        token = await fake.click(second, PLAYER, question["id"], button["custom_id"])
        _, answered = await fake.reply(token)
        assert "is right!" in text_of(answered)
    finally:
        await holder_of_1.stop()
        await holder_of_0.stop()
        await fake.close()
