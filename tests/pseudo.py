"""The pseudo-locale checks the platform tests share: a bank written in Greek (so
no English can come from bank text) and the finder of English words in a reply."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bot.quiz.bank import Catalog, load_banks

# What a reply may show that is not a sentence of ours: what members type
# (`code`), markup (<@id>, <t:…>), links, and the test bank's own (Greek) text.
LEFT_ALONE = re.compile(r"`[^`]*`|<[^>]*>|https?://\S+")
ENGLISH_WORD = re.compile(r"[A-Za-z]{2,}")


# Setting values as members type them, and the zone's name.
TYPED = {"UTC", "compete", "study", "shuffle", "adaptive"}


def untranslated(text: str) -> list[str]:
    words = ENGLISH_WORD.findall(LEFT_ALONE.sub(" ", text))
    return [word for word in words if word not in TYPED]


GREEK_BANK = """
id: greek
title: Ελληνικά
language: en
questions:
  - id: gr-01
    prompt: "Πόσο κάνει δύο και δύο;"
    options: ["τρία", "τέσσερα", "πέντε", "έξι"]
    answer: B
    explanation: "Δύο και δύο κάνουν τέσσερα."
    hint: "Μετρήστε στα δάχτυλα."
  - id: gr-02
    prompt: "Ο ήλιος είναι αστέρι;"
    options: ["true", "false"]
    answer: A
    explanation: "Ο ήλιος είναι αστέρι."
"""


@pytest.fixture
def greek(tmp_path: Path) -> Catalog:
    folder = tmp_path / "banks"
    folder.mkdir()
    (folder / "greek.yaml").write_text(GREEK_BANK, encoding="utf-8")
    found, problems = load_banks([folder])
    assert not problems
    return found
