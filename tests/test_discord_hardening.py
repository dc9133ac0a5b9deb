"""Discord at the edge, through real discord.py and the fake Discord: ids that
are not snowflakes go no further than the adapter, and members' own text
(submissions, report details, names) is shown literally, never as markdown,
links or mentions."""

from __future__ import annotations

import asyncio
import logging
import re

import pytest

from bot.adapters.discord.dialect import DISCORD_DIALECT
from bot.adapters.discord.ids import bad_ids
from bot.dialect import MemberText
from tests.fakes.fake_discord import (
    MANAGE_GUILD,
    MEMBER_PERMISSIONS,
    FakeDiscord,
    buttons_of,
    text_of,
)
from tests.test_discord import (  # the fixtures, shared with test_discord.py
    CHANNEL,
    GUILD,
    MOD,
    PLAYER,
    Bot,
    bot,
    database,
    fake,
    open_question,
    submit_question,
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


# -- members' text -----------------------------------------------------------------------

LINK = "[pytorch.org](https://evil.example/grab)"
HOSTILE_TYPED = {
    "prompt": f"Where are the docs? @everyone <@{MOD}>\n# Free nitro\n1. click {LINK}",
    "options": f"{LINK}\n**docs.pytorch.org**\n> quoted",
    "answer": "B",
    "explanation": "- it is ||the official|| site <@&330000000000000001>",
    "tags": "docs",
}


def _literal(shown: str) -> None:
    """Nothing a member typed formats, links or mentions in what Discord shows."""
    assert LINK not in shown and r"\[pytorch.org\]\(https\://evil.example/grab\)" in shown
    assert "\n# Free" not in shown and "\n\\# Free nitro" in shown
    assert "\n1. click" not in shown and "\n1\\. click" in shown
    assert f"\\<\\@{MOD}\\>" in shown and "\\@everyone" in shown
    members = re.sub(r"Submitted by <@\d+>\.", "", shown)  # our own mention stays live
    for bare in ("<@", "@everyone", "](http"):
        assert not re.search(rf"(?<!\\){re.escape(bare)}", members), bare


async def test_a_members_question_shows_literally_on_its_card_in_the_channel_and_in_dms(
    bot: Bot, fake: FakeDiscord
) -> None:
    await submit_question(bot, PLAYER, **HOSTILE_TYPED)
    _, card = await bot.command("submissions")
    _literal(text_of(card))
    assert "\\*\\*docs.pytorch.org\\*\\* ✅" in text_of(card)
    accept = next(b["custom_id"] for b in buttons_of(card) if b["label"] == "Accept")
    _, after = await fake.reply(await fake.click_reply(GUILD, CHANNEL, MOD, card, accept))
    assert "community-" in text_of(after)
    [dm] = await fake.wait_for(lambda: fake.direct_messages(PLAYER))
    assert "\\# Free nitro\n1\\. click \\[pyto" in text_of(dm)  # shortened, still literal

    _, started = await bot.command("start", questions=1, seconds=60, bank="community")
    assert text_of(started).startswith("Starting a quiz"), text_of(started)
    [question] = await fake.wait_for(lambda: fake.questions(CHANNEL))
    _literal(text_of(question))
    await bot.command("stop")
    # The reveal (an edit of the question) shows the member's explanation literally.
    revealed = await fake.wait_for(
        lambda: [m for m in fake.posted(CHANNEL) if "the official" in text_of(m)]
    )
    assert "\\- it is \\|\\|the official\\|\\| site \\<\\@&" in text_of(revealed[0])
    # Every message the bot sent disabled mentions (the second line of defence).
    sent = [
        c.body
        for c in fake.calls
        if c.method in ("POST", "PATCH") and "/messages" in c.path and isinstance(c.body, dict)
    ]
    assert sent and all(body.get("allowed_mentions") == {"parse": []} for body in sent)


def test_a_bank_keeps_its_markdown_and_a_member_never_gets_any() -> None:
    bank = "Use `torch.compile` — see **docs**"
    assert DISCORD_DIALECT.escape_text(bank) == bank
    assert DISCORD_DIALECT.escape_text(MemberText(bank)) == (
        "Use \\`torch.compile\\` — see \\*\\*docs\\*\\*"
    )
    assert DISCORD_DIALECT.escape_member("a\n+ b\n  2. c\nd.") == "a\n\\+ b\n  2\\. c\nd."
