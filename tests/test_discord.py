"""The Discord adapter end to end: the real discord.py client against a local fake
Discord (tests/fakes/fake_discord.py), the real quiz service and a SQLite database.

Question deadlines run on real time here (2 s per question), so these few tests
take some seconds; everything finer-grained is tested through the core's tests.
"""

from __future__ import annotations

import asyncio
import random
import re
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import discord
import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.adapters import discord_platform
from bot.adapters.discord_platform import DiscordPlatform, QuizClient
from bot.clock import SystemClock
from bot.config import Settings
from bot.quiz.bank import Catalog
from bot.quiz.service import QuizService
from bot.storage.repository import Repository
from tests.fakes.fake_discord import (
    APP_ID,
    EPHEMERAL,
    MANAGE_GUILD,
    MEMBER_PERMISSIONS,
    FakeDiscord,
    buttons_of,
    text_of,
)

# End-to-end through Discord: SQLite is enough (storage has its own PostgreSQL tests).
pytestmark = pytest.mark.parametrize("engine", ["sqlite"], indirect=True)

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


async def start_bot(fake: FakeDiscord, engine: AsyncEngine, catalog: Catalog) -> Bot:
    service = QuizService(Repository(engine), catalog, SystemClock(), rng=random.Random(7))
    platform = discord_platform.platform(
        settings_for(fake), service, guild_ready_timeout=0.05, client_class=FastClient
    )
    service.register(platform.adapter)
    await platform.start()
    timers = asyncio.create_task(service.run_timers())
    return Bot(fake, service, platform, timers)


@pytest.fixture
async def bot(fake: FakeDiscord, engine: AsyncEngine, catalog: Catalog) -> AsyncIterator[Bot]:
    made = await start_bot(fake, engine, catalog)
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
    assert all(b["disabled"] for b in buttons_of(closed))
    green = [b["label"] for b in buttons_of(closed) if b["style"] == 3]
    assert green == [right]
    assert "(closed)" in closed["embeds"][0]["title"]
    assert f"First correct: <@{PLAYER}>" in text_of(closed)

    scoreboard = await fake.wait_for(
        lambda: [m for m in fake.posted(CHANNEL) if "final scores" in text_of(m)], within=6
    )
    assert f"<@{PLAYER}>" in text_of(scoreboard[0])
    second = fake.questions(CHANNEL)[1]
    assert all(b["disabled"] for b in buttons_of(fake.messages[second["id"]]))
    # Nothing the bot posted may ping anyone.
    for call in fake.calls_to("POST", rf"/channels/{CHANNEL}/messages"):
        assert call.body["allowed_mentions"]["parse"] == []
