"""Several `quizmaster run` processes: on PostgreSQL three share the Discord
shards and the timers, and when one is killed (kill -9) mid-quiz the others
close its open question once and carry the quiz on; on SQLite a second
process on the same file is refused in one line."""

from __future__ import annotations

import asyncio
import signal
import time
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import asyncpg
import pytest
from sqlalchemy.engine import make_url

from tests.conftest import POSTGRES_URL, SKIP_POSTGRES
from tests.fakes.fake_discord import (
    MANAGE_GUILD,
    MEMBER_PERMISSIONS,
    FakeDiscord,
    buttons_of,
    text_of,
)
from tests.processes import bot_environment, free_port, start_run, wait_until_connected
from tests.test_discord_shards import guild_on

MOD = "440000000000000001"
PLAYERS = [f"4500000000000000{n:02d}" for n in range(5)]
SHARDS = 3


def environment(fake: FakeDiscord, cwd: Path, port: int, **extra: str) -> dict[str, str]:
    return bot_environment(
        cwd,
        DISCORD_TOKEN=fake.token,
        QUIZ_DISCORD_API_URL=fake.api_url,
        QUIZ_DISCORD_GATEWAY_URL=fake.gateway_url,
        QUIZ_HEALTH_PORT=str(port),
        **extra,
    )


async def stop(process: asyncio.subprocess.Process) -> str:
    if process.returncode is None:
        process.send_signal(signal.SIGTERM)
    _, err = await asyncio.wait_for(process.communicate(), 30)
    return err.decode()


@pytest.fixture
async def fake() -> AsyncIterator[FakeDiscord]:
    made = FakeDiscord(shards=SHARDS)
    await made.start()
    yield made
    await made.close()


def add_guild(fake: FakeDiscord, guild_id: str) -> str:
    channel = str(int(guild_id) + 7)
    fake.add_guild(guild_id, [channel])
    fake.add_member(guild_id, MOD, "Mod", permissions=MEMBER_PERMISSIONS | MANAGE_GUILD)
    for player in PLAYERS:
        fake.add_member(guild_id, player)
    return channel


async def test_a_second_process_on_the_same_sqlite_file_is_refused_in_one_line(
    fake: FakeDiscord, tmp_path: Path
) -> None:
    add_guild(fake, guild_on(0, SHARDS))
    port = free_port()
    first = await start_run(tmp_path, environment(fake, tmp_path, port))
    try:
        await wait_until_connected(port, "discord", first)
        second = await start_run(tmp_path, environment(fake, tmp_path, 0))
        _, err = await asyncio.wait_for(second.communicate(), 30)
        stderr = err.decode()
        assert second.returncode == 2, stderr
        [line] = [row for row in stderr.splitlines() if row.startswith("Cannot start")]
        assert f"another quizmaster process (pid {first.pid}) is serving" in line
        assert "PostgreSQL" in line
        assert "Traceback" not in stderr
    finally:
        assert "Traceback" not in await stop(first)


@pytest.fixture
async def cluster_database() -> AsyncIterator[str]:
    """A database of its own on the test server, for processes to share."""
    if not POSTGRES_URL:
        pytest.skip(SKIP_POSTGRES)
    url = make_url(POSTGRES_URL)
    name = f"qm_cluster_{uuid.uuid4().hex[:10]}"
    admin_dsn = url.set(drivername="postgresql").render_as_string(hide_password=False)
    admin = await asyncpg.connect(admin_dsn)
    try:
        await admin.execute(f'CREATE DATABASE "{name}"')
        yield url.set(database=name).render_as_string(hide_password=False)
    finally:
        await admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1", name
        )
        await admin.execute(f'DROP DATABASE IF EXISTS "{name}"')
        await admin.close()


def closed_edits(fake: FakeDiscord, message_id: str) -> list[Any]:
    """The edits that revealed a question (its title marked closed)."""
    return [
        call
        for call in fake.calls_to("PATCH", rf"/channels/\d+/messages/{message_id}")
        if any("(closed)" in (embed.get("title") or "") for embed in call.body.get("embeds") or [])
    ]


async def test_three_processes_share_the_shards_and_a_killed_ones_quiz_goes_on(
    fake: FakeDiscord, tmp_path: Path, cluster_database: str
) -> None:
    guild = guild_on(1, SHARDS)  # its events arrive at the process holding shard 1
    channel = add_guild(fake, guild)
    daily_guild = guild_on(1, SHARDS, 3)  # a daily question there comes due after the kill
    daily_channel = add_guild(fake, daily_guild)
    add_guild(fake, guild_on(0, SHARDS, 1))
    add_guild(fake, guild_on(2, SHARDS, 2))
    processes: dict[int, asyncio.subprocess.Process] = {}
    ports: dict[int, int] = {}
    try:
        for shard in range(SHARDS):
            folder = tmp_path / f"p{shard}"
            folder.mkdir()
            ports[shard] = free_port()
            processes[shard] = await start_run(
                folder,
                environment(
                    fake,
                    folder,
                    ports[shard],
                    QUIZ_DATABASE_URL=cluster_database,
                    QUIZ_DISCORD_SHARD_COUNT=str(SHARDS),
                    QUIZ_DISCORD_SHARD_IDS=str(shard),
                ),
            )
        for shard in range(SHARDS):
            health = await wait_until_connected(ports[shard], "discord", processes[shard], 60)
            assert health["parts"] == {"discord": {f"shard {shard}": "connected"}}
        assert sorted(i["shard"][0] for i in fake.identifies) == [0, 1, 2]
        assert len(fake.calls_to("PUT", r"/applications/\d+/commands")) == 1

        token = await fake.slash(
            daily_guild, daily_channel, MOD, "schedule daily", {"time": "09:00"}
        )
        assert text_of((await fake.reply(token))[1]).startswith("Daily question scheduled")

        token = await fake.slash(guild, channel, MOD, "start", {"questions": 2, "seconds": 4})
        _, started = await fake.reply(token)
        assert text_of(started).startswith("Starting a quiz: 2 questions")
        [first] = await fake.wait_for(lambda: fake.questions(channel))
        acknowledged = []
        for player in PLAYERS:
            click = await fake.click(guild, player, first["id"], buttons_of(first)[0]["custom_id"])
            if text_of((await fake.reply(click))[1]).startswith("Locked in"):
                acknowledged.append(player)
        assert acknowledged == PLAYERS

        processes[1].send_signal(signal.SIGKILL)  # holder of the guild's shard, mid-question
        await processes[1].wait()
        killed_at = time.monotonic()
        # The daily question comes due now (instead of at 09:00): the others post it once.
        stored = await asyncpg.connect(
            make_url(cluster_database).set(drivername="postgresql").render_as_string(False)
        )
        try:
            await stored.execute("UPDATE schedules SET next_fire = now()")
        finally:
            await stored.close()

        await fake.wait_for(lambda: len(fake.questions(channel)) >= 2, 20)
        took = time.monotonic() - killed_at
        assert took <= 15, f"the next question came {took:.1f} s after the kill"
        second = fake.questions(channel)[1]
        await fake.wait_for(
            lambda: [m for m in fake.posted(channel) if "final scores" in text_of(m)], 20
        )
        # Each question revealed once, by whichever process claimed its close.
        assert len(closed_edits(fake, first["id"])) == 1
        assert len(closed_edits(fake, second["id"])) == 1
        assert len(fake.questions(channel)) == 2
        await fake.wait_for(lambda: fake.questions(daily_channel), 15)
        await asyncio.sleep(6)  # a second post would come within a tick of the first
        assert len(fake.questions(daily_channel)) == 1
        # No acknowledged answer was lost with the killed process.
        stored = await asyncpg.connect(
            make_url(cluster_database).set(drivername="postgresql").render_as_string(False)
        )
        try:
            answered = await stored.fetch("SELECT user_id FROM answers")
        finally:
            await stored.close()
        assert sorted(row["user_id"] for row in answered) == sorted(acknowledged)
    finally:
        for shard, process in processes.items():
            if process.returncode is None:
                err = await stop(process)
                assert "Traceback" not in err, (shard, err[-2000:])


async def test_a_question_whose_sender_was_killed_mid_send_is_posted_by_another_within_15_s(
    fake: FakeDiscord, tmp_path: Path, cluster_database: str
) -> None:
    """The sender holds a post for a minute (so a slow one is not doubled); one
    that was killed while Discord had not yet taken the message used to leave
    its channel waiting out that minute. Its liveness lock goes with it, so
    the other process sends the question at its next tick."""
    guild = guild_on(1, 2)  # its events, and its quiz's posts, belong to the process of shard 1
    channel = add_guild(fake, guild)
    add_guild(fake, guild_on(0, 2, 1))
    processes: dict[int, asyncio.subprocess.Process] = {}
    try:
        for shard in range(2):
            folder = tmp_path / f"p{shard}"
            folder.mkdir()
            port = free_port()
            processes[shard] = await start_run(
                folder,
                environment(
                    fake,
                    folder,
                    port,
                    QUIZ_DATABASE_URL=cluster_database,
                    QUIZ_DISCORD_SHARD_COUNT="2",
                    QUIZ_DISCORD_SHARD_IDS=str(shard),
                ),
            )
            await wait_until_connected(port, "discord", processes[shard], 60)
        token = await fake.slash(guild, channel, MOD, "start", {"questions": 2, "seconds": 3})
        await fake.reply(token)
        await fake.wait_for(lambda: fake.questions(channel))
        # The second question's send hangs at Discord; its sender is killed there.
        sending = fake.stall("POST", rf"/channels/{channel}/messages")
        await asyncio.wait_for(sending.entered.wait(), 20)
        processes[1].send_signal(signal.SIGKILL)
        await processes[1].wait()
        killed_at = time.monotonic()

        await fake.wait_for(lambda: len(fake.questions(channel)) >= 2, 30)
        took = time.monotonic() - killed_at
        assert took <= 15, f"the second question came {took:.1f} s after the kill"
        await fake.wait_for(
            lambda: [m for m in fake.posted(channel) if "final scores" in text_of(m)], 20
        )
        assert len(fake.questions(channel)) == 2  # sent once, closed and revealed once
        assert len(closed_edits(fake, fake.questions(channel)[1]["id"])) == 1
    finally:
        for shard, process in processes.items():
            if process.returncode is None:
                err = await stop(process)
                assert "Traceback" not in err, (shard, err[-2000:])
