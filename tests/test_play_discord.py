"""Hints, pictures, true/false, study mode, reading time and team games end to
end through the real discord.py client against the fake Discord."""

from __future__ import annotations

import asyncio
import re
from collections import Counter
from collections.abc import AsyncIterator
from typing import Any

import pytest
from sqlalchemy import select

from bot.quiz.bank import Catalog
from bot.storage.db import Database
from bot.storage.models import Answer
from tests.fakes.fake_discord import FakeDiscord, buttons_of, text_of
from tests.play_banks import HINT, IMAGE, IMAGE_ALT, play_catalog
from tests.test_discord import (
    CHANNEL,
    CROWD,
    GUILD,
    PLAYER,
    Bot,
    database,
    fake,
    post_id_of,
    start_bot,
)

__all__ = ["database", "fake"]  # fixtures shared with tests/test_discord.py


@pytest.fixture(scope="module")
def catalog(tmp_path_factory: pytest.TempPathFactory) -> Catalog:
    return play_catalog(tmp_path_factory.mktemp("banks"))


@pytest.fixture
async def bot(fake: FakeDiscord, database: Database, catalog: Catalog) -> AsyncIterator[Bot]:
    made = await start_bot(fake, database, catalog)
    yield made
    await made.stop()


async def start(bot: Bot, bank: str, **options: Any) -> tuple[str, dict[str, Any]]:
    """A one-question quiz from `bank`; the moderator's reply and the question."""
    _, reply = await bot.command("start", questions=1, seconds=60, bank=bank, **options)
    assert text_of(reply).startswith("Starting a quiz"), text_of(reply)
    [question] = await bot.fake.wait_for(lambda: bot.fake.questions(CHANNEL))
    return text_of(reply), question


async def reveal_of(bot: Bot, question: dict[str, Any]) -> dict[str, Any]:
    _, skipped = await bot.command("skip")
    assert "revealing" in text_of(skipped)
    return dict(
        await bot.fake.wait_for(
            lambda: (
                (shown := bot.fake.messages[question["id"]])
                and "(closed)" in text_of(shown)
                and shown
            )
        )
    )


async def stored(database: Database, post_id: int) -> dict[str, tuple[int, bool]]:
    async with database.writer.connect() as connection:
        rows = await connection.execute(
            select(Answer.user_id, Answer.points, Answer.hinted).where(Answer.post_id == post_id)
        )
        return {user: (points, hinted) for user, points, hinted in rows}


async def test_a_hint_is_private_and_halves_the_points_of_the_member_who_took_it(
    bot: Bot, database: Database
) -> None:
    _, question = await start(bot, "hints")
    assert [b["label"] for b in buttons_of(question)] == ["A", "B", "C", "D", "Hint"]
    assert HINT not in text_of(question)  # the channel does not see it

    hint = await bot.click(PLAYER, question, "Hint")
    assert HINT in hint and "half its points" in hint
    letter = re.search(r"\*\*([A-D])\.\*\* 8$", text_of(question), re.M)
    assert letter is not None
    right = letter.group(1)
    assert "half its points" in await bot.click(PLAYER, question, right)
    assert "Locked in" in await bot.click(CROWD[0], question, right)

    points = await stored(database, post_id_of(question))
    # A right answer within the first seconds of 60: 10 + 5 for speed; halved after the hint.
    assert points[CROWD[0]] == (15, False)
    assert points[PLAYER] == (7, True)
    closed = await reveal_of(bot, question)
    [field] = [f for f in closed["embeds"][0]["fields"] if f["name"] == "Points"]
    assert field["value"].splitlines() == [
        f"<@{CROWD[0]}> +15",
        f"<@{PLAYER}> +7 (took the hint: half points)",
    ]


async def test_a_hint_after_answering_or_on_a_closed_question_is_refused_in_one_line(
    bot: Bot,
) -> None:
    _, question = await start(bot, "hints")
    await bot.click(PLAYER, question, "A")
    refused = await bot.click(PLAYER, question, "Hint")
    assert refused == "You have already answered this question, so the hint would not help now."
    await reveal_of(bot, question)
    token = await bot.fake.click(GUILD, CROWD[1], question["id"], f"qm:h:{post_id_of(question)}")
    _, final = await bot.fake.reply(token)
    assert text_of(final).startswith("This question has closed")


async def test_a_picture_goes_in_the_embed_with_its_alt_text(bot: Bot) -> None:
    _, question = await start(bot, "pictures")
    [embed] = question["embeds"]
    assert embed["image"]["url"] == IMAGE
    assert IMAGE_ALT in embed["description"]
    assert "Hint" not in [b["label"] for b in buttons_of(question)]


async def test_a_true_false_question_says_true_and_false_on_its_buttons_and_reveal(
    bot: Bot,
) -> None:
    _, question = await start(bot, "truefalse")
    assert sorted(b["label"] for b in buttons_of(question)) == ["False", "True"]
    assert await bot.click(PLAYER, question, "True") == (
        "Locked in True. The answer is revealed when the question closes."
    )
    closed = await reveal_of(bot, question)
    green = [b["label"] for b in buttons_of(closed) if b["style"] == 3]
    assert green == ["True"]
    [answer] = [f for f in closed["embeds"][0]["fields"] if f["name"] == "Answer"]
    assert answer["value"] == "True"
    assert re.search(r"^True █+░* 1 \(100%\)$", text_of(closed), re.M)


async def test_in_study_mode_points_do_not_depend_on_speed_and_the_reply_explains(
    bot: Bot, database: Database
) -> None:
    _, saved = await bot.command("config set", setting="mode", value="study")
    assert "Mode: study" in text_of(saved)
    reply, question = await start(bot, "truefalse")
    assert "Study mode" in reply
    first = await bot.click(PLAYER, question, "True")
    assert first.startswith("✅ True is right! Its all-reduce sums them")
    assert "+10 points" in first
    wrong = await bot.click(CROWD[0], question, "False")
    assert wrong.startswith("❌ False is not it: the answer is True.")
    # A quick right answer in compete mode earns 15; in study mode 10, however fast.
    assert (await stored(database, post_id_of(question)))[PLAYER] == (10, False)


async def test_reading_time_lengthens_a_long_question_by_a_second_per_fifteen_words(
    bot: Bot,
) -> None:
    _, saved = await bot.command("config set", setting="reading-time", value="on")
    assert "Reading time: on" in text_of(saved)
    _, reply = await bot.command("start", questions=1, seconds=20, bank="long")
    # 150 words of prompt and options: 10 s more than the 20 asked for.
    assert "the questions get 30 s" in text_of(reply)
    [question] = await bot.fake.wait_for(lambda: bot.fake.questions(CHANNEL))
    assert "30 seconds to answer" in text_of(question)
    post = await bot.service.repository.posts.post(post_id_of(question))
    assert post is not None
    assert (post.closes_at - post.posted_at).total_seconds() == 30


async def test_a_team_quiz_of_thirty_members_deals_three_even_teams_and_a_team_board(
    bot: Bot,
) -> None:
    reply, question = await start(bot, "hints", teams=3)
    assert "Team game, 3 teams" in reply and "round-robin" in reply
    tokens = await asyncio.gather(
        *(
            bot.fake.click(GUILD, user, question["id"], buttons_of(question)[n % 4]["custom_id"])
            for n, user in enumerate(CROWD)
        )
    )
    replies = [text_of(final) for _, final in await asyncio.gather(*map(bot.fake.reply, tokens))]
    told = [re.search(r"You play for (Team \d) \(of 3\)", reply) for reply in replies]
    teams = Counter(found.group(1) for found in told if found)
    assert sorted(teams.values()) == [10, 10, 10]

    closed = await reveal_of(bot, question)
    [board] = [f for f in closed["embeds"][0]["fields"] if f["name"] == "Teams so far"]
    assert len(board["value"].splitlines()) == 3
    assert "10 members" in board["value"]
    scores = await bot.fake.wait_for(
        lambda: [m for m in bot.fake.posted(CHANNEL) if "final scores" in text_of(m)]
    )
    assert "points per member" in text_of(scores[0])
    quiz = await bot.service.repository.posts.post(post_id_of(question))
    assert quiz is not None and quiz.quiz_id is not None
    kept = await bot.service.repository.teams.results(quiz.quiz_id)
    assert kept is not None and sorted(row.members for row in kept) == [10, 10, 10]
