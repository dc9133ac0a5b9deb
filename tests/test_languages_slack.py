# ruff: noqa: F811  (the fixtures come from tests/test_slack.py)
"""Languages end to end on Slack: the real slack-bolt app against the fake Slack,
which answers users.info with each member's locale when asked for it."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from bot.quiz.bank import Catalog
from tests.fakes.fake_slack import FakeSlack
from tests.pseudo import greek, untranslated  # noqa: F401  (greek: a fixture)
from tests.test_slack import (  # noqa: F401  (fixtures)
    ADMIN,
    CHANNEL,
    MEMBER,
    MakeSlack,
    fake,
    make_slack,
)

FRENCH = "U0FRANCE"


@pytest.fixture
def catalog(greek: Catalog) -> Catalog:
    """Every test here plays the Greek bank: no English comes from bank text."""
    return greek


async def test_a_member_whose_slack_is_french_gets_french_private_replies(
    make_slack: MakeSlack, fake: FakeSlack
) -> None:
    fake.add_user(FRENCH, "Camille", locale="fr-FR")
    slack = await make_slack()
    started = await slack.command("start 1 60")  # the admin's Slack is en-US
    assert started.text.startswith("Starting a quiz: 1 question")
    question = await slack.next_question()
    assert "Question 1/1" in question.text  # the community's language: English

    assert await slack.click(question, "A", FRENCH) == 200
    [reply] = await fake.wait_for(lambda: fake.ephemerals(FRENCH), what="the French reply")
    assert reply.text.startswith("C'est noté : A.")
    help_reply = await slack.command("help", user=FRENCH)
    assert help_reply.private
    assert help_reply.text.startswith("**Quizmaster** organise des quiz à choix multiples")
    # The workspace's roster was read once, with locales, when the question was
    # posted; nobody was looked up alone.
    [roster] = fake.calls_to("users.list")
    assert str(roster.params.get("include_locale")).lower() in ("1", "true")
    assert not [c for c in fake.calls_to("users.info") if c.params.get("user") == FRENCH]


async def test_a_roster_of_many_pages_is_read_to_its_end_and_a_newcomer_is_looked_up_alone(
    make_slack: MakeSlack, fake: FakeSlack
) -> None:
    for number in range(450):  # three pages of 200
        fake.add_user(f"U0MANY{number:03d}", f"Member {number}", locale="de-DE")
    slack = await make_slack()
    await slack.command("start 1 60")
    question = await slack.next_question()
    last = "U0MANY449"  # on the third page
    assert await slack.click(question, "A", last) == 200
    [reply] = await fake.wait_for(lambda: fake.ephemerals(last), what="the reply")
    assert reply.text.startswith("Eingeloggt: A.")
    assert len(fake.calls_to("users.list")) == 3
    assert not fake.calls_to("users.info")

    fake.add_user(FRENCH, "Camille", locale="fr-FR")  # joined after the roster was read
    assert await slack.click(question, "B", FRENCH) == 200
    [reply] = await fake.wait_for(lambda: fake.ephemerals(FRENCH), what="the French reply")
    assert reply.text.startswith("C'est noté : B.")
    assert [c.params.get("user") for c in fake.calls_to("users.info")] == [FRENCH]
    assert len(fake.calls_to("users.list")) == 3  # not read again within the hour


async def test_a_failed_roster_read_leaves_each_member_looked_up_alone(
    make_slack: MakeSlack, fake: FakeSlack
) -> None:
    fake.add_user(FRENCH, "Camille", locale="fr-FR")
    fake.fail("users.list", "ratelimited")
    slack = await make_slack()
    await slack.command("start 1 60")
    question = await slack.next_question()
    assert await slack.click(question, "A", FRENCH) == 200
    [reply] = await fake.wait_for(lambda: fake.ephemerals(FRENCH), what="the French reply")
    assert reply.text.startswith("C'est noté : A.")
    alone = [c.params.get("user") for c in fake.calls_to("users.info")]
    assert alone.count(FRENCH) == 1


async def test_a_german_workspace_posts_german_and_a_member_without_a_locale_reads_it(
    make_slack: MakeSlack, fake: FakeSlack
) -> None:
    fake.locales[MEMBER] = ""  # Slack says nothing: the community's language
    slack = await make_slack()
    saved = await slack.command("config set language de")
    assert "`de` (Deutsch)" in saved.text
    await slack.command("start 1 60")
    question = await slack.next_question()
    assert "Frage 1/1" in question.text
    assert await slack.click(question, "B", MEMBER) == 200
    [reply] = await fake.wait_for(lambda: fake.ephemerals(MEMBER), what="the reply")
    assert reply.text.startswith("Eingeloggt: B.")
    refused = await slack.command("config set language xx")
    assert refused.text.startswith("`xx` is not a language I speak. Choose one of `en` (English)")


async def test_a_slow_users_info_costs_the_member_their_language_not_the_reply(
    make_slack: MakeSlack, fake: FakeSlack
) -> None:
    fake.add_user(FRENCH, "Camille", locale="fr-FR")
    slack = await make_slack()
    slack.platform.directory.locale_within = 0.0  # nothing answers in no time
    reply = await slack.command("help", user=FRENCH)
    assert reply.text.startswith("**Quizmaster** runs multiple-choice quizzes")


async def test_a_pseudo_locale_run_on_slack_finds_no_reply_built_outside_the_catalogs(
    make_slack: MakeSlack,
    fake: FakeSlack,
    greek: Catalog,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("QUIZ_PSEUDO_LOCALE", "1")
    for user in (ADMIN, MEMBER):
        fake.locales[user] = "en-XA"
    slack = await make_slack()
    assert set(slack.catalog.banks) == {"greek"}
    seen: list[str] = []
    for text in ("config set language en_XA", "help", "config", "stats", "leaderboard all"):
        seen.append((await slack.command(text)).text)
    seen.append((await slack.command("start 2 2")).text)
    question = await slack.next_question()
    seen.append(question.text)
    assert await slack.click(question, "A", MEMBER) == 200
    await fake.wait_for(lambda: fake.ephemerals(MEMBER), what="the reply")
    await fake.wait_for(
        lambda: [c for c in fake.posts(CHANNEL) if "ƒíñáļ" in c.text], what="the scoreboard"
    )
    await asyncio.sleep(0)
    calls: list[Any] = [*fake.posts(CHANNEL), *fake.calls_to("chat.update"), *fake.ephemerals()]
    seen += [call.text for call in calls]
    seen += [label for call in calls for label in call.buttons()]
    found = {text: untranslated(text) for text in seen if untranslated(text)}
    assert not found, found


async def test_a_hanging_roster_read_costs_a_click_only_its_language_and_stops_at_shutdown(
    make_slack: MakeSlack, fake: FakeSlack
) -> None:
    fake.add_user(FRENCH, "Camille", locale="fr-FR")
    fake.hang("users.list")
    slack = await make_slack()
    slack.platform.directory.locale_within = 0.3
    await slack.command("start 1 60")
    question = await slack.next_question()
    assert await slack.click(question, "A", FRENCH) == 200
    [reply] = await fake.wait_for(lambda: fake.ephemerals(FRENCH), what="the reply")
    assert reply.text.startswith("Locked in A.")  # the community's language, in time
    await asyncio.wait_for(slack.platform.close(), 10)  # the hanging read is cancelled
    fake.release()
