# ruff: noqa: F811  (the fixtures come from tests/test_discord.py)
"""Languages end to end on Discord: the real discord.py client against the fake
Discord. A German community's channel posts read German, a member whose client is
Spanish gets Spanish private replies there, the command picker carries each
language's descriptions, and a pseudo-locale run finds no reply built outside
the catalogs."""

from __future__ import annotations

import re
from typing import Any

import pytest

from bot.quiz.bank import Catalog
from bot.storage.db import Database
from tests.fakes.fake_discord import FakeDiscord, buttons_of, text_of
from tests.pseudo import greek, untranslated  # noqa: F401  (greek: a fixture)
from tests.test_discord import (  # noqa: F401  (fixtures)
    CHANNEL,
    GUILD,
    MOD,
    PLAYER,
    Bot,
    bot,
    correct_letter,
    database,
    fake,
    start_bot,
)

SPANISH = "440000000000000009"


async def test_config_set_language_de_makes_the_question_reveal_and_leaderboard_german(
    bot: Bot, fake: FakeDiscord, catalog: Catalog
) -> None:
    fake.member_locales[PLAYER] = "de"  # the moderator's client stays English (en-US)
    _, saved = await bot.command("config set", setting="language", value="de")
    # A private reply: the moderator's own language, naming the community's.
    assert "Language of channel posts (whole community): `de` (Deutsch)" in text_of(saved)

    _, started = await bot.command("start", questions=1, seconds=2)
    assert text_of(started).startswith("Starting a quiz: 1 question, 2 seconds.")
    [question] = await fake.wait_for(lambda: fake.questions(CHANNEL))
    embed = question["embeds"][0]
    assert "Frage 1/1" in embed["title"]
    assert re.search(r"Schließt <t:\d+:R>", embed["description"])
    assert "eine Antwort pro Person, der erste Klick zählt" in embed["footer"]["text"]
    right = correct_letter(bot.service.catalog, question)
    assert (await bot.click(PLAYER, question, right)).startswith(f"Eingeloggt: {right}.")

    revealed = await fake.wait_for(
        lambda: (
            "(geschlossen)" in text_of(fake.messages[question["id"]])
            and fake.messages[question["id"]]
        ),
        within=8,
    )
    shown = text_of(revealed)
    assert f"Zuerst richtig: <@{PLAYER}>" in shown
    assert "So hat der Kanal abgestimmt" in shown
    assert [b["label"] for b in buttons_of(revealed) if not b["disabled"]] == ["Ein Problem melden"]
    board = await fake.wait_for(
        lambda: [m for m in fake.posted(CHANNEL) if "Endstand" in text_of(m)], within=8
    )
    assert text_of(board[0]).startswith("Quiz vorbei: Endstand")

    # The leaderboard is posted for the whole channel: German, asked in English.
    _, leaderboard = await bot.command("leaderboard", user=MOD, period="all")
    assert text_of(leaderboard).startswith("Bestenliste: dieser Kanal, insgesamt")
    assert f"<@{PLAYER}>: " in text_of(leaderboard) and " Pkt. (1/1 richtig)" in text_of(
        leaderboard
    )


async def test_a_member_whose_client_is_spanish_gets_spanish_replies_in_a_german_community(
    bot: Bot, fake: FakeDiscord
) -> None:
    fake.add_member(GUILD, SPANISH, "Sofía")
    fake.member_locales[SPANISH] = "es-ES"
    await bot.command("config set", setting="language", value="de")
    await bot.command("start", questions=1, seconds=60)
    [question] = await fake.wait_for(lambda: fake.questions(CHANNEL))
    assert "Frage 1/1" in question["embeds"][0]["title"]  # the channel's post: German

    reply = await bot.click(SPANISH, question, "A")
    assert reply.startswith("Registrado: A.")
    again = await bot.click(SPANISH, question, "B")
    assert again == "Ya respondiste A: cuenta el primer clic."
    # Each member reads their own client's language: German here, English there.
    fake.member_locales[PLAYER] = "de"
    assert (await bot.click(PLAYER, question, "B")).startswith("Eingeloggt: B.")
    assert (await bot.click(MOD, question, "C")).startswith("Locked in C.")
    _, stats = await bot.command("stats", user=SPANISH)
    assert text_of(stats).startswith(f"Estadísticas de <@{SPANISH}>")


async def test_the_command_picker_shows_localised_descriptions_option_names_stay_english(
    bot: Bot, fake: FakeDiscord
) -> None:
    [quiz] = [c for c in fake.commands[GUILD] if c["name"] == "quiz"]
    assert quiz["description"] == "Multiple-choice quizzes in this channel"
    assert quiz["description_localizations"]["de"] == "Multiple-Choice-Quizze in diesem Kanal"
    start = next(o for o in quiz["options"] if o["name"] == "start")
    for locale in ("de", "es-ES", "es-419", "fr", "pt-BR"):
        assert start["description_localizations"][locale], locale
    assert start["description_localizations"]["es-ES"] != start["description"]
    questions = next(o for o in start["options"] if o["name"] == "questions")
    assert questions["description_localizations"]["de"].startswith("Wie viele Fragen (1–")
    assert "name_localizations" not in questions or not questions["name_localizations"]
    # English clients read the English default, with nothing to localise.
    assert "en-US" not in start["description_localizations"]


# -- the pseudo-locale: every reply a person reads comes from the catalogs ----------------


async def test_a_pseudo_locale_run_finds_no_reply_built_outside_the_catalogs(
    fake: FakeDiscord, database: Database, greek: Catalog, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("QUIZ_PSEUDO_LOCALE", "1")
    for member in (MOD, PLAYER):  # private replies: the members' own (pseudo) language
        fake.member_locales[member] = "en-XA"
    bot = await start_bot(fake, database, greek)
    try:
        seen: list[str] = []

        async def ask(path: str, user: str = MOD, **options: Any) -> dict[str, Any]:
            _, final = await bot.command(path, user=user, **options)
            seen.append(text_of(final))
            seen.extend(b["label"] for b in buttons_of(final))
            return final

        await ask("config set", setting="language", value="en_XA")
        for path in (
            "help",
            "config show",
            "schedule show",
            "stats",
            "review",
            "health",
            "reports",
            "submissions",
            "dashboard",
        ):
            await ask(path)
        await ask("leaderboard", period="all")
        await ask("start", questions=2, seconds=2)
        first = (await fake.wait_for(lambda: fake.questions(CHANNEL)))[0]
        hint = next(b for b in buttons_of(first) if b["custom_id"].startswith("qm:h:"))
        token = await fake.click(GUILD, PLAYER, first["id"], hint["custom_id"])
        seen.append(text_of((await fake.reply(token))[1]))
        seen.append(await bot.click(PLAYER, first, buttons_of(first)[1]["label"]))
        seen.append(await bot.click(PLAYER, first, buttons_of(first)[0]["label"]))
        await fake.wait_for(
            lambda: [m for m in fake.posted(CHANNEL) if "ƒíñáļ" in text_of(m)], within=10
        )
        for message in fake.posted(CHANNEL):
            seen.append(text_of(message))
            seen.extend(b["label"] for b in buttons_of(message))
        found = {text: untranslated(text) for text in seen if untranslated(text)}
        assert not found, found
        assert len(seen) > 15
    finally:
        await bot.stop()
