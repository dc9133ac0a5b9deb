"""Banks in other languages: a community draws from the banks in its language
first, from every bank when none of those fits, and `bank=` picks any bank."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.quiz.bank import Catalog, load_banks
from tests.conftest import ROOT, Host, restart

GERMAN_BANK = """
id: allgemeinwissen
title: Allgemeinwissen
language: de
questions:
  - id: aw-01
    prompt: "Wie viele Beine hat eine Spinne?"
    options: ["sechs", "acht", "zehn"]
    answer: B
    explanation: "Spinnen haben acht Beine."
    tags: [tiere]
"""


@pytest.fixture
def catalog(tmp_path: Path) -> Catalog:
    """The shipped English bank beside a German one."""
    folder = tmp_path / "banks"
    folder.mkdir()
    (folder / "allgemeinwissen.yaml").write_text(GERMAN_BANK, encoding="utf-8")
    found, problems = load_banks([ROOT / "questions", folder])
    assert not problems
    return found


def test_a_bank_says_its_language_and_english_is_the_default(catalog: Catalog) -> None:
    assert catalog.banks["allgemeinwissen"].language == "de"
    assert catalog.banks["pytorch-distributed-training"].language == "en"
    assert catalog.pool(language="de") == ["aw-01"]
    assert "aw-01" not in catalog.pool(language="en")
    # No German question has this tag: every bank's then.
    assert catalog.pool(tag="communication", language="de") == catalog.pool(tag="communication")
    assert catalog.pool(bank="pytorch-distributed-training", language="de")


async def test_a_german_community_draws_the_german_bank_and_bank_picks_any(host: Host) -> None:
    await host.command("config", key="language", value="de")
    await host.command("start", questions=1, seconds=30)
    shown = host.current().message
    assert "Wie viele Beine hat eine Spinne?" in shown.text
    assert "Allgemeinwissen · Frage 1/1" in (shown.title or "")
    await host.command("stop")
    await host.command("start", questions=1, seconds=30, bank="pytorch-distributed-training")
    assert "Distributed Training in PyTorch · Frage 1/1" in (host.current().message.title or "")


def test_a_bank_language_must_look_like_a_language_code(tmp_path: Path) -> None:
    (tmp_path / "bad.yaml").write_text(
        GERMAN_BANK.replace("language: de", "language: German"), encoding="utf-8"
    )
    _, problems = load_banks([tmp_path])
    assert problems and "language" in problems[0].message


async def test_another_process_sees_a_new_community_language_within_a_minute(host: Host) -> None:
    other = restart(host)  # a second process on the same database
    assert (await other.command("help", user="ada", moderator=False)).text.startswith(
        "**Quizmaster** runs"
    )
    await host.command("config", key="language", value="fr")
    host.clock.advance(seconds=61)
    assert (await other.command("help", user="ada", moderator=False)).text.startswith(
        "**Quizmaster** organise"
    )
