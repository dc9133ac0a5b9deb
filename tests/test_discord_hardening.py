"""Discord at the edge, through real discord.py and the fake Discord: ids that
are not snowflakes go no further than the adapter, and members' own text
(submissions, report details, names) is shown literally, never as markdown,
links or mentions."""

from __future__ import annotations

import asyncio
import logging

import pytest

from bot.adapters.discord.ids import bad_ids
from tests.fakes.fake_discord import MANAGE_GUILD, MEMBER_PERMISSIONS, FakeDiscord
from tests.test_discord import (  # the fixtures, shared with test_discord.py
    CHANNEL,
    GUILD,
    PLAYER,
    Bot,
    bot,
    database,
    fake,
    open_question,
)

__all__ = ["bot", "database", "fake"]  # fixtures used by name

# Not snowflakes, though discord.py reads each as an int: zero, negative, past 64 bits.
NOT_SNOWFLAKES = ["0", "-440000000000000009", "9" * 25]


def _ignored(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if "is not one Discord makes" in r.getMessage()]


@pytest.mark.parametrize("user", NOT_SNOWFLAKES)
async def test_a_command_from_an_id_discord_never_makes_does_nothing(
    bot: Bot, fake: FakeDiscord, caplog: pytest.LogCaptureFixture, user: str
) -> None:
    caplog.set_level(logging.INFO)
    fake.add_member(GUILD, user, "Odd", permissions=MEMBER_PERMISSIONS | MANAGE_GUILD)
    token = await fake.slash(GUILD, CHANNEL, user, "start", {"questions": 1, "seconds": 30})
    await asyncio.sleep(0.4)
    assert fake.replies[token].final is None  # not answered: it never reached the quiz
    assert fake.questions(CHANNEL) == []
    assert _ignored(caplog) == ["ignored a Discord command: its user id is not one Discord makes"]


async def test_a_click_from_an_id_discord_never_makes_is_not_an_answer(
    bot: Bot, fake: FakeDiscord, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    question = await open_question(bot)
    fake.add_member(GUILD, "9" * 25, "Odd")
    custom_id = question["components"][0]["components"][0]["custom_id"]
    token = await fake.click(GUILD, "9" * 25, question["id"], custom_id)
    await asyncio.sleep(0.4)
    assert fake.replies[token].final is None
    assert _ignored(caplog) == ["ignored a Discord click: its user id is not one Discord makes"]
    # A real member's click still counts.
    played = await fake.click(GUILD, PLAYER, question["id"], custom_id)
    _, final = await fake.reply(played)
    assert "Locked in" in str(final.get("content") or final)


async def test_a_server_whose_id_is_past_64_bits_is_ignored(
    bot: Bot, fake: FakeDiscord, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    huge = str(2**64)
    fake.add_guild(huge, [CHANNEL])
    fake.add_member(huge, PLAYER, "Player", permissions=MEMBER_PERMISSIONS | MANAGE_GUILD)
    fake.commands[huge] = fake.commands[GUILD]  # as if /quiz were registered there
    token = await fake.slash(huge, CHANNEL, PLAYER, "help")
    await asyncio.sleep(0.4)
    assert fake.replies[token].final is None
    assert _ignored(caplog) == ["ignored a Discord command: its server id is not one Discord makes"]


def test_snowflake_shapes() -> None:
    assert bad_ids("110000000000000001", "220000000000000001", str(2**64 - 1)) is None
    assert bad_ids(None, None, "440000000000000001") is None  # a DM: said elsewhere
    assert bad_ids("1", "2", "3", {"user": "U0SLACK"}) == "user option"
    assert bad_ids("١٢٣", "2", "3") == "server id"  # digits, but not ASCII ones
