"""Hints, pictures, true/false, study mode, reading time and team games end to
end through the real slack-bolt app against the fake Slack."""

from __future__ import annotations

import asyncio
import re
from collections import Counter

import pytest

from bot.quiz.bank import Catalog
from tests.fakes.fake_slack import Call
from tests.play_banks import HINT, IMAGE, IMAGE_ALT, play_catalog
from tests.test_slack import CHANNEL, MEMBER, PLAYERS, MakeSlack, Slack, fake, make_slack

__all__ = ["fake", "make_slack"]  # fixtures shared with tests/test_slack.py


@pytest.fixture(scope="module")
def catalog(tmp_path_factory: pytest.TempPathFactory) -> Catalog:
    return play_catalog(tmp_path_factory.mktemp("banks"))


async def start(slack: Slack, typed: str) -> tuple[str, Call]:
    reply = await slack.command(typed)
    assert reply.private and reply.text.startswith("Starting a quiz"), reply.text
    return reply.text, await slack.next_question()


async def reply_to(slack: Slack, user: str, after: int) -> str:
    found = await slack.fake.wait_for(
        lambda: slack.fake.ephemerals(user)[after:], what=f"reply {after + 1} to {user}"
    )
    return str(found[0].text)


async def test_a_hint_on_slack_is_private_and_halves_the_points(make_slack: MakeSlack) -> None:
    slack = await make_slack()
    _, question = await start(slack, "start 1 60 bank=hints")
    assert list(question.buttons()) == ["A", "B", "C", "D", "Hint"]
    assert HINT not in question.text

    await slack.click(question, "Hint", MEMBER)
    hint = await reply_to(slack, MEMBER, 0)
    assert HINT in hint and "half its points" in hint
    right = slack.letter(question, correct=True)
    await slack.click(question, right, MEMBER)
    assert "half its points" in await reply_to(slack, MEMBER, 1)
    await slack.click(question, right, PLAYERS[0])

    await slack.command("skip")
    reveal = await slack.reveal_of(question)
    assert f"<@{PLAYERS[0]}> +15" in reveal.text
    assert f"<@{MEMBER}> +7 (took the hint: half points)" in reveal.text


async def test_a_picture_comes_in_an_image_block_with_alt_text(make_slack: MakeSlack) -> None:
    slack = await make_slack()
    _, question = await start(slack, "start 1 60 bank=pictures")
    [image] = [block for block in question.blocks if block["type"] == "image"]
    assert image["image_url"] == IMAGE
    assert image["alt_text"] == IMAGE_ALT
    assert f"Picture: {IMAGE_ALT} ({IMAGE})" in question.text  # the notification text


async def test_true_false_buttons_and_study_mode_on_slack(make_slack: MakeSlack) -> None:
    slack = await make_slack()
    saved = await slack.command("config set mode study")
    assert "Mode: study" in saved.text
    _, question = await start(slack, "start 1 60 bank=truefalse")
    assert sorted(question.buttons()) == ["False", "True"]
    await slack.click(question, "True", MEMBER)
    reply = await reply_to(slack, MEMBER, 0)
    assert reply.startswith("✅ True is right! Its all-reduce sums them")
    assert "+10 points" in reply  # no speed bonus in study mode, however quick


async def test_reading_time_on_slack_and_a_bad_setting_gets_one_line(
    make_slack: MakeSlack,
) -> None:
    slack = await make_slack()
    refused = await slack.command("config set reading-time maybe")
    assert refused.private and refused.text == (
        "reading-time must be `on` or `off` (got maybe). Try `/quiz help`."
    )
    assert "Reading time: on" in (await slack.command("config set reading-time on")).text
    text, question = await start(slack, "start 1 20 bank=long")
    assert "the questions get 30 s" in text
    assert "30 seconds to answer" in str(question.blocks)


async def test_teams_out_of_range_gets_one_private_line(make_slack: MakeSlack) -> None:
    slack = await make_slack()
    refused = await slack.command("start 1 60 bank=hints teams=9")
    assert refused.private
    assert refused.text == "teams must be a whole number from 2 to 4 (got 9). Try `/quiz help`."
    assert not slack.fake.questions(CHANNEL)


async def test_a_slack_team_quiz_of_thirty_gives_three_even_teams_and_a_team_board(
    make_slack: MakeSlack,
) -> None:
    slack = await make_slack()
    text, question = await start(slack, "start 1 60 bank=hints teams=3")
    assert "Team game, 3 teams" in text
    await asyncio.gather(
        *(slack.click(question, "ABCD"[n % 4], player) for n, player in enumerate(PLAYERS))
    )
    replies = await slack.fake.wait_for(
        lambda: (
            len(found := [c for c in slack.fake.ephemerals() if c.params["user"] in PLAYERS]) == 30
            and found
        ),
        what="30 replies",
    )
    told = [re.search(r"You play for (Team \d) \(of 3\)", call.text) for call in replies]
    assert sorted(Counter(found.group(1) for found in told if found).values()) == [10, 10, 10]
    await slack.command("skip")
    reveal = await slack.reveal_of(question)
    assert "Teams so far:" in reveal.text and "10 members" in reveal.text
    scores = await slack.fake.wait_for(
        lambda: [c for c in slack.fake.posts(CHANNEL) if "Quiz over" in c.text],
        what="the scoreboard",
    )
    assert "Teams:" in scores[0].text and "points per member" in scores[0].text
