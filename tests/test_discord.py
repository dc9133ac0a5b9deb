"""The Discord adapter end to end: the real discord.py client against a local fake
Discord (tests/fakes/fake_discord.py), the real quiz service and a SQLite database.

Question deadlines run on real time here (2 s per question), so these few tests
take some seconds; everything finer-grained is tested through the core's tests.
"""

from __future__ import annotations

import asyncio
import gc
import io
import logging
import random
import re
import signal
import zipfile
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import discord
import pytest
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from bot.adapters.discord import platform as discord_platform
from bot.adapters.discord.platform import DiscordPlatform, QuizClient
from bot.chat import Target
from bot.clock import Clock, SystemClock
from bot.config import Settings
from bot.platforms import StartError
from bot.quiz import texts
from bot.quiz.bank import Catalog
from bot.quiz.service import QuizService
from bot.storage.db import Database, open_database
from bot.storage.repository import Repository
from tests.dashboard_helpers import links_for, path_of, web_client
from tests.fakes.clock import ShiftedClock
from tests.fakes.fake_discord import (
    APP_ID,
    EPHEMERAL,
    MANAGE_GUILD,
    MEMBER_PERMISSIONS,
    FakeDiscord,
    buttons_of,
    text_of,
)
from tests.processes import bot_environment, free_port, start_run, wait_until_connected
from tests.test_surface import TOOT, TOOT_MESSAGE, add_tooter

GUILD = "110000000000000001"
CHANNEL = "220000000000000001"
OTHER_CHANNEL = "220000000000000002"
ROLE = "330000000000000001"
MOD = "440000000000000001"
PLAYER = "440000000000000002"
ROLE_HOLDER = "440000000000000003"
CROWD = [str(500000000000000000 + n) for n in range(30)]


class FastClient(QuizClient):
    """discord.py pauses 5 s before re-identifying; tests need no such courtesy."""

    async def before_identify_hook(self, shard_id: int | None, *, initial: bool = False) -> None:
        return None


@dataclass
class Bot:
    fake: FakeDiscord
    service: QuizService
    platform: DiscordPlatform
    timers: asyncio.Task[None]

    async def stop(self) -> None:
        self.service.shutdown()
        await self.platform.close()
        self.timers.cancel()
        await asyncio.gather(self.timers, return_exceptions=True)

    async def command(
        self, path: str, user: str = MOD, channel: str = CHANNEL, **options: Any
    ) -> tuple[Any, dict[str, Any]]:
        token = await self.fake.slash(GUILD, channel, user, path, options or None)
        return await self.fake.reply(token)

    async def click(self, user: str, message: dict[str, Any], letter: str) -> str:
        [button] = [b for b in buttons_of(message) if b["label"] == letter]
        token = await self.fake.click(GUILD, user, message["id"], button["custom_id"])
        _, final = await self.fake.reply(token)
        return text_of(final)


@pytest.fixture
async def database(tmp_path: Path, _templates: Any) -> AsyncIterator[Database]:
    """SQLite only: end to end through Discord, storage is not what varies (the
    storage tests cover PostgreSQL). Replaces conftest's two-backend `database`."""
    made = open_database(f"sqlite+aiosqlite:///{await _templates.sqlite_copy(tmp_path / 'q.db')}")
    yield made
    await made.dispose()


@pytest.fixture
async def fake() -> AsyncIterator[FakeDiscord]:
    made = FakeDiscord()
    made.add_guild(GUILD, [CHANNEL, OTHER_CHANNEL], roles={ROLE: "Quizmasters"})
    made.add_member(GUILD, MOD, "Mod", permissions=MEMBER_PERMISSIONS | MANAGE_GUILD)
    made.add_member(GUILD, PLAYER, "Player")
    made.add_member(GUILD, ROLE_HOLDER, "Holder", roles=[ROLE])
    for user_id in CROWD:
        made.add_member(GUILD, user_id)
    await made.start()
    yield made
    await made.close()


def settings_for(fake: FakeDiscord, **extra: str) -> Settings:
    values = {
        "DISCORD_TOKEN": fake.token,
        "QUIZ_DISCORD_GUILD_IDS": GUILD,
        "QUIZ_DISCORD_API_URL": fake.api_url,
        "QUIZ_DISCORD_GATEWAY_URL": fake.gateway_url,
        **extra,
    }
    return Settings(_env_file=None, **values)  # type: ignore[call-arg]


async def start_bot(
    fake: FakeDiscord, database: Database, catalog: Catalog, clock: Clock | None = None
) -> Bot:
    service = QuizService(
        Repository(database), catalog, clock or SystemClock(), rng=random.Random(7)
    )
    platform = discord_platform.platform(
        settings_for(fake), service, guild_ready_timeout=0.05, client_class=FastClient
    )
    service.register(platform.adapter)
    await platform.start()
    timers = asyncio.create_task(service.run_timers())
    return Bot(fake, service, platform, timers)


@pytest.fixture
async def bot(fake: FakeDiscord, database: Database, catalog: Catalog) -> AsyncIterator[Bot]:
    made = await start_bot(fake, database, catalog)
    yield made
    await made.stop()


def correct_letter(catalog: Catalog, message: dict[str, Any]) -> str:
    """The letter under which a posted question shows its bank's right answer."""
    shown = text_of(message)
    for question_id in catalog.pool():
        question = catalog.question(question_id)
        if question is not None and question.prompt in shown:
            right = question.options[question.answer_index]
            [letter] = re.findall(rf"\*\*([A-E])\.\*\* {re.escape(right)}$", shown, re.M)
            return str(letter)
    raise AssertionError("the posted question is not in the catalog")


# -- a whole quiz ------------------------------------------------------------------------


async def test_a_moderator_runs_a_two_question_quiz_that_closes_reveals_and_scores(
    bot: Bot, fake: FakeDiscord, catalog: Catalog
) -> None:
    reply, final = await bot.command("start", questions=2, seconds=2)
    assert reply.ephemeral
    assert text_of(final).startswith("Starting a quiz: 2 questions, 2 seconds each")

    first = await fake.wait_for(lambda: fake.questions(CHANNEL))
    [question] = first
    assert [b["label"] for b in buttons_of(question)] == ["A", "B", "C", "D"]
    embed = question["embeds"][0]
    assert "Question 1/2" in embed["title"]
    assert re.search(r"Closes <t:\d+:R>", embed["description"])
    right = correct_letter(bot.service.catalog, question)
    assert "Locked in" in await bot.click(PLAYER, question, right)

    await fake.wait_for(lambda: len(fake.questions(CHANNEL)) == 2, within=6)
    closed = fake.messages[question["id"]]
    letters = [b for b in buttons_of(closed) if b["custom_id"].startswith("qm:a:")]
    assert all(b["disabled"] for b in letters)
    green = [b["label"] for b in letters if b["style"] == 3]
    assert green == [right]
    # The one button still live: telling the moderators something is wrong with it.
    assert [b["label"] for b in buttons_of(closed) if not b["disabled"]] == ["Report a problem"]
    assert "(closed)" in closed["embeds"][0]["title"]
    assert f"First correct: <@{PLAYER}>" in text_of(closed)

    scoreboard = await fake.wait_for(
        lambda: [m for m in fake.posted(CHANNEL) if "final scores" in text_of(m)], within=6
    )
    assert f"<@{PLAYER}>" in text_of(scoreboard[0])
    second = fake.questions(CHANNEL)[1]
    assert all(
        b["disabled"]
        for b in buttons_of(fake.messages[second["id"]])
        if b["label"] != "Report a problem"
    )
    # Nothing the bot posted may ping anyone.
    for call in fake.calls_to("POST", rf"/channels/{CHANNEL}/messages"):
        assert call.body["allowed_mentions"]["parse"] == []


def post_id_of(message: dict[str, Any]) -> int:
    return int(buttons_of(message)[0]["custom_id"].split(":")[2])


async def open_question(bot: Bot, channel: str = CHANNEL, seconds: int = 60) -> dict[str, Any]:
    _, final = await bot.command("start", channel=channel, questions=1, seconds=seconds)
    assert text_of(final).startswith("Starting a quiz"), text_of(final)
    found = await bot.fake.wait_for(lambda: bot.fake.questions(channel))
    return dict(found[-1])


# -- clicks --------------------------------------------------------------------------------


async def test_thirty_members_clicking_at_once_each_get_a_private_reply_and_count_once(
    bot: Bot, fake: FakeDiscord
) -> None:
    question = await open_question(bot)
    tokens = await asyncio.gather(
        *(
            fake.click(GUILD, user, question["id"], buttons_of(question)[n % 4]["custom_id"])
            for n, user in enumerate(CROWD)
        )
    )
    replies = await asyncio.gather(*(fake.reply(token) for token in tokens))
    for reply, final in replies:
        assert reply.ephemeral
        assert text_of(final).startswith("Locked in")
    assert await bot.service.repository.answers.answer_count(post_id_of(question)) == 30

    again = await bot.click(CROWD[0], question, "D")
    assert again == "You already answered A: the first click counts."
    assert await bot.service.repository.answers.answer_count(post_id_of(question)) == 30
    # The public question is never edited per click.
    assert not fake.calls_to("PATCH", rf"/channels/{CHANNEL}/messages/\d+")


async def test_a_click_once_answered_is_freed_at_once_not_left_for_the_collector(
    bot: Bot, fake: FakeDiscord
) -> None:
    """discord.py's interaction and its response point at each other: left
    so, every click's objects waited for a collector pass, which stalled every
    click arriving meanwhile (22-43 ms at 200 clicks/s)."""

    def interactions() -> int:
        return sum(isinstance(found, discord.Interaction) for found in gc.get_objects())

    question = await open_question(bot)
    gc.collect()
    before = interactions()
    gc.disable()
    try:
        tokens = await asyncio.gather(
            *(
                fake.click(GUILD, user, question["id"], buttons_of(question)[0]["custom_id"])
                for user in CROWD[:10]
            )
        )
        replies = await asyncio.gather(*(fake.reply(token) for token in tokens))
        assert all(text_of(final).startswith("Locked in") for _, final in replies)
        for _ in range(200):  # the handlers end just after their replies are sent
            if interactions() == before:
                break
            await asyncio.sleep(0.01)
        assert interactions() == before
    finally:
        gc.enable()


# -- who may moderate ----------------------------------------------------------------------


async def test_a_member_without_manage_server_is_refused_privately_and_nothing_is_posted(
    bot: Bot, fake: FakeDiscord
) -> None:
    reply, final = await bot.command("start", user=PLAYER, questions=2, seconds=2)
    assert reply.ephemeral
    assert text_of(final).startswith("Only moderators can start a quiz")
    assert not fake.calls_to("POST", rf"/channels/{CHANNEL}/messages")


async def test_a_member_holding_the_configured_moderator_role_may_start_a_quiz(
    bot: Bot, fake: FakeDiscord
) -> None:
    refused = await bot.command("start", user=ROLE_HOLDER, seconds=30)
    assert text_of(refused[1]).startswith("Only moderators")

    saved = await bot.command("config set", setting="moderator-role", value="quizmasters")
    assert "Moderator role/group: quizmasters" in text_of(saved[1])
    _, final = await bot.command("start", user=ROLE_HOLDER, questions=1, seconds=30)
    assert text_of(final).startswith("Starting a quiz")
    await fake.wait_for(lambda: fake.questions(CHANNEL))


# -- scheduled daily questions -------------------------------------------------------------


async def test_a_scheduled_daily_question_is_posted_when_due_and_a_right_click_starts_a_streak(
    fake: FakeDiscord, database: Database, catalog: Catalog
) -> None:
    clock = ShiftedClock()
    bot = await start_bot(fake, database, catalog, clock)
    try:
        refused = await bot.command("schedule daily", user=PLAYER, time="09:00")
        assert refused[0].ephemeral
        assert text_of(refused[1]).startswith("Only moderators can change the schedule")
        reply, bad = await bot.command("schedule daily", time="25:00")
        assert reply.ephemeral
        assert "25:00 is not a time of day" in text_of(bad)
        _, shown = await bot.command("schedule show", user=PLAYER)
        assert "Nothing is scheduled here" in text_of(shown)

        due = clock.minute_due_in(2.0)
        reply, saved = await bot.command("schedule daily", time=f"{due:%H:%M}")
        assert reply.ephemeral
        assert text_of(saved).startswith(f"Daily question scheduled: daily {due:%H:%M} UTC")
        reply, shown = await bot.command("schedule show", user=PLAYER)
        assert reply.ephemeral
        assert f"daily {due:%H:%M} UTC every day" in text_of(shown)
        assert not fake.questions(CHANNEL)

        [question] = await fake.wait_for(lambda: fake.questions(CHANNEL), within=5)
        # Not early: the fake stamps messages with real time, the bot runs shifted.
        assert datetime.fromisoformat(question["timestamp"]) + clock.offset >= due
        assert question["embeds"][0]["title"].endswith("· Question of the day")
        [button] = [
            b for b in buttons_of(question) if b["label"] == correct_letter(catalog, question)
        ]
        token = await fake.click(GUILD, PLAYER, question["id"], button["custom_id"])
        reply, answered = await fake.reply(token)
        assert reply.ephemeral
        assert "is right!" in text_of(answered)
        assert "🔥 1-day streak" in text_of(answered)

        _, off = await bot.command("schedule off", which="daily")
        assert text_of(off) == "Turned off the daily question schedule here."
    finally:
        await bot.stop()


# -- restarts and the gateway --------------------------------------------------------------


async def test_a_click_on_a_question_posted_before_a_restart_is_recorded(
    fake: FakeDiscord, database: Database, catalog: Catalog
) -> None:
    first = await start_bot(fake, database, catalog)
    try:
        question = await open_question(first)
    finally:
        await first.stop()

    second = await start_bot(fake, database, catalog)
    try:
        assert len(fake.identifies) == 2
        assert (await second.click(PLAYER, question, "B")).startswith("Locked in B")
        assert await second.service.repository.answers.answer_count(post_id_of(question)) == 1
    finally:
        await second.stop()


async def test_a_dropped_gateway_connection_resumes_and_keeps_serving(
    bot: Bot, fake: FakeDiscord
) -> None:
    assert bot.platform.adapter.connected
    await fake.drop_gateway()
    await fake.wait_for(lambda: fake.resumes and bot.platform.adapter.connected)
    assert len(fake.identifies) == 1
    assert fake.resumes[0]["session_id"] == "fake-session-0-1"  # the session READY gave
    _, final = await bot.command("help", user=PLAYER)
    assert "/quiz start" in text_of(final)


# -- platform faults -----------------------------------------------------------------------


async def test_a_rate_limited_post_is_retried_and_nothing_is_lost(
    bot: Bot, fake: FakeDiscord
) -> None:
    fake.fail("POST", rf"/channels/{CHANNEL}/messages", 429, retry_after=0.3)
    question = await open_question(bot)
    statuses = [c.status for c in fake.calls_to("POST", rf"/channels/{CHANNEL}/messages")]
    assert statuses == [429, 200]
    assert len(fake.questions(CHANNEL)) == 1
    assert (await bot.click(PLAYER, question, "A")).startswith("Locked in A")


async def test_a_question_whose_post_reply_was_lost_is_retried_without_a_second_message(
    bot: Bot, fake: FakeDiscord
) -> None:
    """Discord made the message but answered 503 (which discord.py does not retry):
    the bot tries again a moment later with the post's same nonce, and Discord
    hands back the message it already made instead of a second one."""
    posts = rf"/channels/{CHANNEL}/messages"
    fake.fail("POST", posts, 503, after_work=True)
    _, reply = await bot.command("start", questions=1, seconds=30)
    assert "trying again" in text_of(reply)
    await fake.wait_for(lambda: len(fake.calls_to("POST", posts)) == 2)
    assert [c.status for c in fake.calls_to("POST", posts)] == [503, 200]
    [question] = fake.questions(CHANNEL)
    assert (await bot.click(PLAYER, question, "A")).startswith("Locked in A")


async def test_a_reveal_whose_reply_was_lost_is_not_sent_a_second_time(
    bot: Bot, fake: FakeDiscord
) -> None:
    """Discord made the reveal edit but answered 503: the next try reads the
    message back, finds the answer shown, and edits nothing again."""
    fake.fail("PATCH", rf"/channels/{CHANNEL}/messages/\d+", 503, after_work=True)
    await bot.command("start", questions=2, seconds=2)
    [first] = await fake.wait_for(lambda: fake.questions(CHANNEL))
    await fake.wait_for(
        lambda: any("final scores" in text_of(m) for m in fake.posted(CHANNEL)), within=10
    )
    edits = fake.calls_to("PATCH", rf"/channels/{CHANNEL}/messages/{first['id']}")
    assert [c.status for c in edits] == [503]
    assert "(closed)" in fake.messages[first["id"]]["embeds"][0]["title"]
    [second] = [m for m in fake.questions(CHANNEL) if m["id"] != first["id"]]
    assert "(closed)" in second["embeds"][0]["title"]


async def test_a_channel_the_bot_may_not_post_in_is_reported_and_others_keep_working(
    bot: Bot, fake: FakeDiscord
) -> None:
    fake.fail("POST", rf"/channels/{OTHER_CHANNEL}/messages", 403, times=10)
    reply, final = await bot.command("start", channel=OTHER_CHANNEL, seconds=30)
    assert reply.ephemeral
    assert text_of(final).startswith("I can't post in this channel (Discord said 403")

    _, shown = await bot.command("config show", channel=OTHER_CHANNEL)
    assert "My last post here failed: Discord said 403" in text_of(shown)

    await open_question(bot, CHANNEL)
    assert bot.platform.adapter.connected


# -- scores --------------------------------------------------------------------------------


async def test_leaderboard_is_public_and_stats_private_with_mentions_in_order(
    bot: Bot, fake: FakeDiscord, catalog: Catalog
) -> None:
    question = await open_question(bot, seconds=2)
    right = correct_letter(catalog, question)
    wrong = next(b["label"] for b in buttons_of(question) if b["label"] != right)
    await bot.click(CROWD[0], question, wrong)
    await bot.click(PLAYER, question, right)
    await fake.wait_for(
        lambda: any("final scores" in text_of(m) for m in fake.posted(CHANNEL)), within=6
    )

    reply, board = await bot.command("leaderboard", user=CROWD[5], period="all")
    assert not reply.ephemeral
    assert board["allowed_mentions"]["parse"] == []
    ranked = re.findall(r"<@(\d+)>: (\d+) pts", text_of(board))
    assert [user for user, _ in ranked] == [PLAYER, CROWD[0]]
    assert int(ranked[0][1]) > 10 and ranked[1][1] == "0"

    token = await fake.slash(
        GUILD,
        CHANNEL,
        CROWD[5],
        "stats",
        {"user": PLAYER},
        resolved={"users": {PLAYER: fake.guilds[GUILD].members[PLAYER].user()}},
    )
    reply, stats = await fake.reply(token)
    assert reply.ephemeral
    assert f"Stats for <@{PLAYER}>" in text_of(stats)
    assert "Correct: 1 (100%)" in text_of(stats)

    await bot.command("config set", setting="mentions", value="off")
    _, named = await bot.command("leaderboard", user=CROWD[5], period="all")
    assert re.findall(r"^\S+ (\w+): \d+ pts", text_of(named), re.M) == ["Player", "Member0000"]
    assert "<@" not in text_of(named)


async def test_dashboard_replies_privately_with_links_that_open_the_pages(
    bot: Bot, fake: FakeDiscord, catalog: Catalog
) -> None:
    question = await open_question(bot, seconds=2)
    await bot.click(PLAYER, question, correct_letter(catalog, question))
    await fake.wait_for(
        lambda: any("final scores" in text_of(m) for m in fake.posted(CHANNEL)), within=6
    )
    links = links_for(bot.service)
    bot.service.commands.links = links

    reply, message = await bot.command("dashboard", user=PLAYER)
    assert reply.ephemeral
    community, mine = re.findall(r"https?://\S+", text_of(message))
    async with web_client(bot.service, links) as client:
        board = await client.get(path_of(community) + "&period=all")
        assert board.status == 200
        assert "Player" in await board.text()  # the member's name, from the guild
        page = await client.get(path_of(mine))
        assert "<h1>Player</h1>" in await page.text()
        other = await client.get(path_of(community).replace(GUILD, "110000000000000002"))
        assert other.status == 403


async def test_bank_and_tag_options_autocomplete_from_the_loaded_banks(
    bot: Bot, fake: FakeDiscord, catalog: Catalog
) -> None:
    token = await fake.slash(GUILD, CHANNEL, MOD, "start", {"bank": "torch"}, focused="bank")
    reply = await fake.wait_for(lambda: fake.replies[token].callback)
    assert reply["type"] == 8
    assert [c["value"] for c in reply["data"]["choices"]] == ["pytorch-distributed-training"]

    token = await fake.slash(GUILD, CHANNEL, MOD, "start", {"tag": ""}, focused="tag")
    reply = await fake.wait_for(lambda: fake.replies[token].callback)
    assert [c["value"] for c in reply["data"]["choices"]] == catalog.tags()[:25]

    token = await fake.slash(
        GUILD, CHANNEL, MOD, "schedule daily", {"timezone": "berl"}, focused="timezone"
    )
    reply = await fake.wait_for(lambda: fake.replies[token].callback)
    assert [c["value"] for c in reply["data"]["choices"]] == ["Europe/Berlin"]


# -- the shapes discord.py and Discord agree on --------------------------------------------


async def test_canary_login_ready_sync_and_interaction_shapes_match_the_pinned_discord_py(
    bot: Bot, fake: FakeDiscord
) -> None:
    """If this fails after a discord.py upgrade, the fake (and maybe the adapter)
    no longer describes what the library sends and expects: update both."""
    assert discord.__version__.startswith("2.7.")
    first_calls = [(c.method, c.path, c.status) for c in fake.calls[:3]]
    assert first_calls == [
        ("GET", "/users/@me", 200),
        ("GET", "/oauth2/applications/@me", 200),
        ("PUT", f"/applications/{APP_ID}/guilds/{GUILD}/commands", 200),
    ]
    [identify] = fake.identifies
    assert identify["token"] == fake.token
    assert identify["intents"] == discord.Intents(guilds=True).value  # no message content
    assert fake.heartbeats >= 1

    [quiz] = fake.commands[GUILD]
    assert quiz["name"] == "quiz"
    assert quiz["contexts"] == [0]
    assert quiz.get("default_member_permissions") is None
    subcommands = {o["name"]: o for o in quiz["options"]}
    assert set(subcommands) == {
        "start", "stop", "skip", "leaderboard", "stats", "forget-me", "help", "config",
        "schedule", "review", "export", "submit", "submissions", "remove-question", "dashboard",
        "reports", "health", "restore",
    }  # fmt: skip
    schedule = {o["name"]: o for o in subcommands["schedule"]["options"]}
    assert set(schedule) == {"daily", "leaderboard", "show", "off"}
    daily = {o["name"]: o for o in schedule["daily"]["options"]}
    assert daily["time"]["required"] is True and daily["timezone"]["autocomplete"] is True
    assert [c["value"] for c in schedule["leaderboard"]["options"][0]["choices"]][:2] == [
        "mon",
        "tue",
    ]
    start_options = {o["name"]: o for o in subcommands["start"]["options"]}
    assert start_options["questions"]["min_value"] == 1
    assert start_options["bank"]["autocomplete"] is True
    assert [c["value"] for c in subcommands["leaderboard"]["options"][0]["choices"]] == [
        "channel",
        "server",
    ]

    token = await fake.slash(GUILD, CHANNEL, PLAYER, "help")
    await fake.reply(token)
    [callback] = [c for c in fake.calls if c.path.endswith(f"/{token}/callback")]
    assert callback.query == {"with_response": "1"}
    assert callback.body["type"] == 4
    assert callback.body["data"]["flags"] == EPHEMERAL


# -- `quizmaster run` as a process, against the fake --------------------------------------


def run_environment(fake: FakeDiscord, tmp_path: Path, health_port: int) -> dict[str, str]:
    return bot_environment(
        tmp_path,
        DISCORD_TOKEN=fake.token,
        QUIZ_DISCORD_GUILD_IDS=GUILD,
        QUIZ_DISCORD_API_URL=fake.api_url,
        QUIZ_DISCORD_GATEWAY_URL=fake.gateway_url,
        QUIZ_HEALTH_PORT=str(health_port),
    )


async def test_quizmaster_run_connects_syncs_commands_and_plays_a_whole_quiz(
    fake: FakeDiscord, tmp_path: Path
) -> None:
    port = free_port()
    process = await start_run(tmp_path, run_environment(fake, tmp_path, port))
    try:
        health = await wait_until_connected(port, "discord", process)
        assert health["platforms"] == {"discord": "connected"}
        assert fake.commands[GUILD][0]["name"] == "quiz"

        token = await fake.slash(GUILD, CHANNEL, MOD, "start", {"questions": 1, "seconds": 2})
        _, started = await fake.reply(token)
        assert text_of(started).startswith("Starting a quiz: 1 question, 2 seconds.")
        [question] = await fake.wait_for(lambda: fake.questions(CHANNEL))
        click = await fake.click(
            GUILD, PLAYER, question["id"], buttons_of(question)[1]["custom_id"]
        )
        assert text_of((await fake.reply(click))[1]).startswith("Locked in B")
        [scores] = await fake.wait_for(
            lambda: [m for m in fake.posted(CHANNEL) if "final scores" in text_of(m)], within=10
        )
        assert f"<@{PLAYER}>" in text_of(scores)
        assert "(closed)" in fake.messages[question["id"]]["embeds"][0]["title"]
    finally:
        if process.returncode is None:
            process.send_signal(signal.SIGTERM)
        _, err = await asyncio.wait_for(process.communicate(), 20)
    assert process.returncode == 0, err.decode()
    assert fake.token not in err.decode()


async def test_a_server_that_refuses_the_command_sync_stops_start_up_with_a_clear_error(
    fake: FakeDiscord, database: Database, catalog: Catalog
) -> None:
    fake.fail("PUT", rf"/applications/{APP_ID}/guilds/{GUILD}/commands", 403)
    with pytest.raises(StartError, match=r"invite the bot there with the applications\.commands"):
        await start_bot(fake, database, catalog)
    assert not fake.identifies


async def test_quizmaster_run_with_a_rejected_token_exits_2_without_printing_it(
    fake: FakeDiscord, tmp_path: Path
) -> None:
    fake.reject_token = True
    process = await start_run(tmp_path, run_environment(fake, tmp_path, 0))
    _, err = await asyncio.wait_for(process.communicate(), 30)
    stderr = err.decode()
    assert process.returncode == 2, stderr
    assert "Cannot start: Discord rejected DISCORD_TOKEN" in stderr
    assert fake.token not in stderr
    assert not fake.identifies


# -- answering late: defer, then follow up --------------------------------------------------


async def test_slow_answers_are_deferred_then_followed_up_privately_or_publicly(
    bot: Bot, fake: FakeDiscord, monkeypatch: pytest.MonkeyPatch
) -> None:
    question = await open_question(bot)
    # Make the service slower than the adapter's direct-reply window.
    monkeypatch.setattr(discord_platform, "REPLY_WITHIN", 0.1)
    for name in ("handle_click", "handle_command"):
        original = getattr(bot.service, name)

        async def slow(event: Any, original: Any = original) -> Any:
            await asyncio.sleep(0.3)
            return await original(event)

        monkeypatch.setattr(bot.service, name, slow)

    [button] = [b for b in buttons_of(question) if b["label"] == "C"]
    token = await fake.click(GUILD, PLAYER, question["id"], button["custom_id"])
    reply, final = await fake.reply(token)
    assert reply.callback_type == 5 and reply.ephemeral
    assert text_of(final).startswith("Locked in C")
    assert final["flags"] == EPHEMERAL

    token = await fake.slash(GUILD, CHANNEL, PLAYER, "leaderboard")
    reply, board = await fake.reply(token)
    assert reply.callback_type == 5
    assert "Leaderboard: this channel, this week" in text_of(board)
    assert not board.get("flags")  # the result itself is public
    assert fake.calls_to("DELETE", rf"/webhooks/{APP_ID}/{token}/messages/@original")


# -- hardening: every click answered, acknowledged means stored ---------------------------

UNKNOWN_POST = "qm:a:999999:0"


async def test_a_click_on_a_question_that_does_not_exist_is_answered_privately(
    bot: Bot, fake: FakeDiscord
) -> None:
    question = await open_question(bot)
    token = await fake.click(GUILD, PLAYER, question["id"], UNKNOWN_POST)
    reply, final = await fake.reply(token, within=5)
    assert reply.ephemeral
    assert text_of(final) == "I don't know that question any more; it may have been removed."
    assert await bot.service.repository.answers.answer_count(post_id_of(question)) == 0


class HeldDatabase:
    """The test engine keeps one SQLite write connection; holding it stalls every
    write the bot makes, as a hung database would, until released."""

    def __init__(self, engine: AsyncEngine) -> None:
        self.engine = engine
        self.connection: AsyncConnection | None = None

    async def __aenter__(self) -> HeldDatabase:
        self.connection = await self.engine.connect()
        return self

    async def release(self) -> None:
        if self.connection is not None:
            await self.connection.close()
            self.connection = None

    async def __aexit__(self, *_exc: object) -> None:
        await self.release()


async def test_a_click_the_database_refuses_is_told_it_did_not_count_and_a_retry_counts(
    bot: Bot, fake: FakeDiscord, engine: AsyncEngine
) -> None:
    question = await open_question(bot)
    async with engine.begin() as connection:
        await connection.exec_driver_sql("ALTER TABLE answers RENAME TO answers_away")
    refused = await bot.click(PLAYER, question, "B")
    assert refused.startswith("Your answer did not go through")
    assert "click again" in refused

    async with engine.begin() as connection:
        await connection.exec_driver_sql("ALTER TABLE answers_away RENAME TO answers")
    assert (await bot.click(PLAYER, question, "B")).startswith("Locked in B")
    assert await bot.service.repository.answers.answer_count(post_id_of(question)) == 1


async def test_a_click_stuck_on_a_hung_database_is_told_in_bounded_time_to_click_again(
    bot: Bot, fake: FakeDiscord, engine: AsyncEngine, monkeypatch: pytest.MonkeyPatch
) -> None:
    question = await open_question(bot)
    monkeypatch.setattr(discord_platform, "REPLY_WITHIN", 0.1)
    monkeypatch.setattr(discord_platform, "ANSWER_WITHIN", 0.5)
    [button] = [b for b in buttons_of(question) if b["label"] == "C"]
    async with HeldDatabase(engine):
        token = await fake.click(GUILD, PLAYER, question["id"], button["custom_id"])
        reply, final = await fake.reply(token, within=5)
        assert reply.callback_type == 5 and reply.ephemeral
        assert final["flags"] == EPHEMERAL
        assert text_of(final).startswith("Your answer did not go through")

    # The stalled write finished after all; clicking again says so instead of counting twice.
    again = await bot.click(PLAYER, question, "A")
    assert again == "You already answered C: the first click counts."
    assert await bot.service.repository.answers.answer_count(post_id_of(question)) == 1


async def test_a_click_whose_interaction_response_fails_is_still_stored(
    bot: Bot, fake: FakeDiscord
) -> None:
    question = await open_question(bot)
    fake.fail("POST", r"/interactions/\d+/[^/]+/callback", 503)
    [button] = [b for b in buttons_of(question) if b["label"] == "D"]
    token = await fake.click(GUILD, PLAYER, question["id"], button["custom_id"])
    await fake.wait_for(lambda: fake.calls_to("POST", rf"/interactions/\d+/{token}/callback"))
    await fake.wait_for(lambda: fake.replies[token].callback_type is None)
    assert await bot.service.repository.answers.answer_count(post_id_of(question)) == 1
    again = await bot.click(PLAYER, question, "A")
    assert again == "You already answered D: the first click counts."


async def test_closing_finishes_clicks_in_flight_and_asks_new_ones_to_retry(
    bot: Bot, fake: FakeDiscord, engine: AsyncEngine, monkeypatch: pytest.MonkeyPatch
) -> None:
    question = await open_question(bot)
    monkeypatch.setattr(discord_platform, "REPLY_WITHIN", 0.1)
    buttons = buttons_of(question)
    clickers = CROWD[:5]
    async with HeldDatabase(engine) as held:
        tokens = [
            await fake.click(GUILD, user, question["id"], buttons[0]["custom_id"])
            for user in clickers
        ]
        # Every click is in flight: deferred ("thinking…"), its write stalled.
        await fake.wait_for(lambda: all(fake.replies[t].callback_type == 5 for t in tokens))
        closing = asyncio.create_task(bot.platform.close())
        late = await fake.click(GUILD, PLAYER, question["id"], buttons[1]["custom_id"])
        reply, final = await fake.reply(late, within=5)
        assert reply.ephemeral
        assert text_of(final) == texts.common.restarting().text
        assert not closing.done()
        await held.release()
        await asyncio.wait_for(closing, 15)

    for token in tokens:
        reply, final = await fake.reply(token, within=1)
        assert text_of(final).startswith("Locked in A")
    assert await bot.service.repository.answers.answer_count(post_id_of(question)) == len(clickers)
    assert await bot.service.repository.answers.answer_slot(post_id_of(question), PLAYER) is None


# -- hardening: a passing outage is one warning ---------------------------------------------


async def test_a_passing_gateway_outage_logs_one_warning_and_the_bot_keeps_answering(
    bot: Bot, fake: FakeDiscord, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    await fake.outage(refusals=1)
    await fake.wait_for(
        # After a refused resume the shard identifies afresh (discord.py's sharded client).
        lambda: (
            (fake.resumes or len(fake.identifies) > 1)
            and fake.refused_gateways == 0
            and bot.platform.adapter.connected
        ),
        within=10,
    )
    noisy = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert [r.levelname for r in noisy] == ["WARNING"], [r.getMessage() for r in noisy]
    [warning] = noisy
    assert "reconnect" in warning.getMessage()
    assert "503" in warning.getMessage()
    assert warning.exc_info is None and "\n" not in warning.getMessage()
    assert "Traceback" not in caplog.text

    _, final = await bot.command("help", user=PLAYER)
    assert "/quiz start" in text_of(final)


# -- hardening: names are shown as written ---------------------------------------------------

ODD = "440000000000000009"
ODD_NAME = "**bold** <@123> @everyone"
ODD_SHOWN = r"\*\*bold\*\* \<\@123\> \@everyone"


async def test_with_mentions_off_a_markdown_name_is_shown_literally_in_reveal_and_scores(
    bot: Bot, fake: FakeDiscord, catalog: Catalog
) -> None:
    fake.add_member(GUILD, ODD, ODD_NAME)
    await bot.command("config set", setting="mentions", value="off")
    question = await open_question(bot, seconds=2)
    assert "is right" not in await bot.click(ODD, question, correct_letter(catalog, question))

    [scores] = await fake.wait_for(
        lambda: [m for m in fake.posted(CHANNEL) if "final scores" in text_of(m)], within=6
    )
    assert f"🥇 {ODD_SHOWN}: " in text_of(scores)
    revealed = text_of(fake.messages[question["id"]])
    assert f"First correct: {ODD_SHOWN}" in revealed
    for shown in (text_of(scores), revealed):
        assert ODD_NAME not in shown

    _, board = await bot.command("leaderboard", user=PLAYER, period="all")
    assert f"🥇 {ODD_SHOWN}: " in text_of(board)


# -- the study loop ------------------------------------------------------------------------


async def miss_two_questions(bot: Bot, catalog: Catalog, user: str) -> None:
    """A two-question quiz in which `user` picks a wrong letter each time."""
    _, started = await bot.command("start", questions=2, seconds=60)
    assert text_of(started).startswith("Starting a quiz"), text_of(started)
    for number, next_step in ((1, "skip"), (2, "stop")):
        posted = await bot.fake.wait_for(
            lambda n=number: len(bot.fake.questions(CHANNEL)) >= n and bot.fake.questions(CHANNEL)
        )
        question = posted[number - 1]
        right = correct_letter(catalog, question)
        wrong = next(b["label"] for b in buttons_of(question) if b["label"] != right)
        assert (await bot.click(user, question, wrong)).startswith("Locked in")
        await bot.command(next_step)


async def click_reply(bot: Bot, user: str, shown: dict[str, Any], label: str) -> tuple[Any, str]:
    [button] = [b for b in buttons_of(shown) if b["label"] == label]
    token = await bot.fake.click_reply(GUILD, CHANNEL, user, shown, button["custom_id"])
    reply, final = await bot.fake.reply(token)
    return reply, final


async def test_review_shows_due_cards_privately_and_a_click_rates_and_moves_on(
    fake: FakeDiscord, database: Database, catalog: Catalog
) -> None:
    clock = ShiftedClock()
    bot = await start_bot(fake, database, catalog, clock)
    try:
        reply, nothing = await bot.command("review", user=PLAYER)
        assert reply.ephemeral
        assert text_of(nothing).startswith("Nothing to review yet.")
        await miss_two_questions(bot, catalog, PLAYER)
        points_before = text_of((await bot.command("stats", user=PLAYER))[1])

        _, soon = await bot.command("review", user=PLAYER)
        assert re.match(
            r"Nothing to review\. Next review: \w{3} \d\d \w{3} \d\d:\d\d$", text_of(soon)
        )
        clock.offset += timedelta(minutes=11)
        reply, card = await bot.command("review", user=PLAYER, count=5)
        assert reply.ephemeral
        assert card["embeds"][0]["title"].startswith("Review · ")
        assert [b["label"] for b in buttons_of(card)][:2] == ["A", "B"]
        assert all(b["custom_id"].startswith("qm:r:") for b in buttons_of(card))
        assert "Card 1 of at most 5 · 2 due" in text_of(card)

        other, refused = await click_reply(bot, MOD, card, "A")
        assert other.ephemeral
        assert text_of(refused).startswith("This review card belongs to someone else")

        answered, following = await click_reply(bot, PLAYER, card, "A")
        assert answered.ephemeral
        assert re.search(r"^(✅ A is right!|❌ A is not it)", text_of(following), re.M)
        assert "Card 2 of at most 5" in text_of(following)
        _, done = await click_reply(bot, PLAYER, following, "B")
        assert "Review done: 2 cards." in text_of(done)
        assert [b["label"] for b in buttons_of(done)] == ["Report a problem"]
        # Review answers change no points or streaks.
        assert text_of((await bot.command("stats", user=PLAYER))[1]) == points_before
    finally:
        await bot.stop()


async def test_export_replies_privately_with_the_anki_file_attached(
    bot: Bot, fake: FakeDiscord, catalog: Catalog
) -> None:
    await miss_two_questions(bot, catalog, PLAYER)
    reply, final = await bot.command("export", user=PLAYER)
    assert reply.ephemeral
    assert text_of(final).startswith("Your Anki deck: 2 questions you missed.")
    [(name, data)] = reply.uploads.items()
    assert name == "quizmaster-missed.apkg"
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        assert "collection.anki2" in archive.namelist()
    # Nothing was posted in the channel for everyone.
    assert not [m for m in fake.posted(CHANNEL) if "Anki" in text_of(m)]

    reply, nothing = await bot.command("export", user=MOD, questions="all")
    assert text_of(nothing) == "No answered questions to export yet."
    assert not reply.uploads


# -- member submissions and review ----------------------------------------------------------

QUESTION_TYPED = {
    "prompt": "Which collective leaves the sum of every rank's tensor on all ranks?",
    "options": "all_reduce\nbroadcast\nscatter",
    "answer": "A",
    "explanation": "all_reduce sums and shares the result with every rank.",
    "tags": "collectives",
}


async def submit_question(bot: Bot, user: str, **typed: str) -> tuple[Any, dict[str, Any]]:
    """`/quiz submit`, then the modal submitted with `typed` over QUESTION_TYPED."""
    token = await bot.fake.slash(GUILD, CHANNEL, user, "submit")
    modal = await bot.fake.modal(token)
    sent = await bot.fake.submit_modal(GUILD, CHANNEL, user, modal, {**QUESTION_TYPED, **typed})
    return await bot.fake.reply(sent)


async def test_a_member_submits_through_a_modal_and_fixes_a_mistake(
    bot: Bot, fake: FakeDiscord
) -> None:
    token = await fake.slash(GUILD, CHANNEL, PLAYER, "submit")
    modal = await fake.modal(token)
    assert modal["custom_id"] == "qm:f:submit" and modal["title"] == "Submit a question"
    inputs = [label["component"] for label in modal["components"]]
    assert [label["type"] for label in modal["components"]] == [18] * 5
    assert [i["custom_id"] for i in inputs] == [
        "prompt",
        "options",
        "answer",
        "explanation",
        "tags",
    ]
    assert inputs[1]["style"] == 2 and inputs[4]["required"] is False

    # A modal cannot show errors: the problem comes privately, with what was typed kept.
    sent = await fake.submit_modal(GUILD, CHANNEL, PLAYER, modal, {**QUESTION_TYPED, "answer": "E"})
    reply, final = await fake.reply(sent)
    assert reply.ephemeral
    assert "not queued" in text_of(final) and "names no option" in text_of(final)
    [edit] = buttons_of(final)
    assert edit["label"] == "Edit my question"
    again = await fake.click_reply(GUILD, CHANNEL, PLAYER, final, edit["custom_id"])
    refilled = await fake.modal(again)
    typed = {
        label["component"]["custom_id"]: label["component"].get("value")
        for label in refilled["components"]
    }
    assert typed["answer"] == "E" and typed["prompt"] == QUESTION_TYPED["prompt"]

    fixed = await fake.submit_modal(GUILD, CHANNEL, PLAYER, refilled, {"answer": "A"})
    reply, final = await fake.reply(fixed)
    assert reply.ephemeral and "waiting for a moderator" in text_of(final)
    assert await bot.service.repository.submissions.pending_total("discord", GUILD) == 1


async def test_a_moderator_accepts_and_the_question_is_drawn_here(
    bot: Bot, fake: FakeDiscord
) -> None:
    await submit_question(bot, PLAYER)
    reply, final = await bot.command("submissions", user=PLAYER)
    assert reply.ephemeral and "moderator" in text_of(final)

    reply, card = await bot.command("submissions")
    assert reply.ephemeral and "Submission #" in text_of(card)
    assert "all\\_reduce ✅" in text_of(card)  # a member's text: its _ shown, not italics
    labels = {b["label"]: b["custom_id"] for b in buttons_of(card)}
    assert list(labels) == ["Accept", "Reject", "Skip"]
    # A member who is not a moderator cannot use the buttons either.
    token = await fake.click_reply(GUILD, CHANNEL, PLAYER, card, labels["Accept"])
    _, refused = await fake.reply(token)
    assert "moderator" in text_of(refused)

    token = await fake.click_reply(GUILD, CHANNEL, MOD, card, labels["Accept"])
    reply, after = await fake.reply(token)
    assert reply.ephemeral and "community-" in text_of(after)
    [dm] = await fake.wait_for(lambda: fake.direct_messages(PLAYER))
    assert "was accepted" in text_of(dm)

    _, started = await bot.command("start", questions=1, seconds=60, bank="community")
    assert text_of(started).startswith("Starting a quiz"), text_of(started)
    [question] = await fake.wait_for(lambda: fake.questions(CHANNEL))
    assert QUESTION_TYPED["prompt"] in text_of(question)


async def test_a_moderator_rejects_with_a_reason_in_a_modal(bot: Bot, fake: FakeDiscord) -> None:
    await submit_question(bot, PLAYER)
    _, card = await bot.command("submissions")
    reject = next(b["custom_id"] for b in buttons_of(card) if b["label"] == "Reject")
    token = await fake.click_reply(GUILD, CHANNEL, MOD, card, reject)
    modal = await fake.modal(token)
    assert modal["title"] == "Reject submission"
    sent = await fake.submit_modal(
        GUILD, CHANNEL, MOD, modal, {"reason": "Asked already in pdt-04."}
    )
    reply, final = await fake.reply(sent)
    assert reply.ephemeral and "Rejected submission" in text_of(final)
    [dm] = await fake.wait_for(lambda: fake.direct_messages(PLAYER))
    assert "not accepted" in text_of(dm) and "Asked already in pdt\\-04." in text_of(dm)
    assert await bot.service.repository.submissions.pending_total("discord", GUILD) == 0


async def test_a_member_with_ten_pending_gets_no_form(bot: Bot, fake: FakeDiscord) -> None:
    store = bot.service.repository.submissions
    for number in range(10):
        await store.submit(
            platform="discord",
            community=GUILD,
            channel=CHANNEL,
            author_id=PLAYER,
            author_name=None,
            question={"prompt": f"Q{number}"},
            now=datetime.now(UTC),
            limit=10,
        )
    reply, final = await bot.command("submit", user=PLAYER)
    assert reply.modal is None and reply.ephemeral
    assert "10 questions waiting" in text_of(final)


async def test_an_author_who_takes_no_dms_does_not_undo_the_review(
    bot: Bot, fake: FakeDiscord
) -> None:
    await submit_question(bot, PLAYER)
    _, card = await bot.command("submissions")
    accept = next(b["custom_id"] for b in buttons_of(card) if b["label"] == "Accept")
    # Discord refuses DMs to a member who closed them to server members.
    fake.fail("POST", r"/channels/\d+/messages", 403)
    token = await fake.click_reply(GUILD, CHANNEL, MOD, card, accept)
    _, after = await fake.reply(token)
    assert "community-" in text_of(after)
    assert fake.direct_messages(PLAYER) == []
    bank = await bot.service.repository.submissions.community_bank("discord", GUILD)
    assert [row.author_id for row in bank] == [PLAYER]


async def test_a_new_button_kind_is_routed_on_discord(
    fake: FakeDiscord, database: Database, catalog: Catalog
) -> None:
    bot = await start_bot(fake, database, catalog)
    try:
        tooter = add_tooter(bot.service)
        target = Target("discord", GUILD, CHANNEL)
        sent = await bot.platform.adapter.send(target, TOOT_MESSAGE)
        token = await fake.click(GUILD, PLAYER, sent.message_id, TOOT.id(7))
        _, final = await fake.reply(token)
        assert "toot 7" in text_of(final)
        assert tooter.pressed == [(PLAYER, 7)]
    finally:
        await bot.stop()


# -- question reports --------------------------------------------------------------------


async def test_a_member_reports_a_revealed_question_in_a_modal_and_a_moderator_removes_it(
    bot: Bot, fake: FakeDiscord
) -> None:
    await bot.command("start", questions=1, seconds=60)
    [question] = await fake.wait_for(lambda: fake.questions(CHANNEL))
    await bot.click(PLAYER, question, "A")
    await bot.command("skip")
    closed = await fake.wait_for(
        lambda: [m for m in [fake.messages[question["id"]]] if "(closed)" in text_of(m)]
    )
    [report] = [b for b in buttons_of(closed[0]) if b["label"] == "Report a problem"]
    assert not report["disabled"]
    token = await fake.click(GUILD, PLAYER, question["id"], report["custom_id"])
    modal = await fake.modal(token)
    assert modal["title"] == "Report a problem"
    # A modal closes on submit: a reason that is none of the five comes back privately.
    sent = await fake.submit_modal(GUILD, CHANNEL, PLAYER, modal, {"reason": "meh", "text": ""})
    reply, final = await fake.reply(sent)
    assert reply.ephemeral and "is not a reason" in text_of(final)
    typed = {"reason": "wrong answer", "text": "@everyone the key should be B"}
    sent = await fake.submit_modal(GUILD, CHANNEL, PLAYER, modal, typed)
    reply, final = await fake.reply(sent)
    assert reply.ephemeral and "with the moderators" in text_of(final)

    _, refused = await bot.command("reports", user=PLAYER)
    assert "moderator" in text_of(refused)
    reply, card = await bot.command("reports")
    assert reply.ephemeral and "wrong answer:" in text_of(card)
    assert card["allowed_mentions"]["parse"] == []  # the member's words cannot ping
    question_id = re.search(r"Report \d+ on (\S+)", text_of(card)).group(1)  # type: ignore[union-attr]
    _, after = await click_reply(bot, MOD, card, "Remove from this community")
    assert "no longer drawn in this community" in text_of(after)
    [dm] = await fake.wait_for(lambda: fake.direct_messages(PLAYER))
    assert "no longer asked in this community" in text_of(dm)
    pool = await bot.service.questions.pool(Target("discord", GUILD, CHANNEL), None, None)
    assert question_id not in pool

    _, health = await bot.command("health", question=question_id)
    assert f"Health of {question_id}" in text_of(health) and "1 answer," in text_of(health)
