"""Check the PyTorch distributed-training bank against its seed material.

The seed lives outside the repository (``shared/seed`` next to the checkout):
the quiz's option texts in ``000_9284301fdd0c4123.txt`` and the correct option
for each question in ``answer-key.md``. Both are parsed here, so the bank is
compared with the source itself rather than with copies of it.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
SEED_DIR = Path(__file__).resolve().parents[2] / "shared" / "seed"
SEED_FILE = SEED_DIR / "000_9284301fdd0c4123.txt"
ANSWER_KEY = SEED_DIR / "answer-key.md"
BANK_FILE = REPO / "questions" / "pytorch-distributed-training.yaml"

QUESTION_COUNT = 30
OPTIONS_PER_QUESTION = 4
LETTERS = "ABCD"
DIFFICULTIES = {"easy", "medium", "hard"}
TAG_RE = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")


def _require_seed() -> None:
    if not SEED_DIR.is_dir():
        pytest.skip(f"seed folder not found at {SEED_DIR} (shared/ must sit beside the repo)")
    for path in (SEED_FILE, ANSWER_KEY):
        if not path.is_file():
            pytest.skip(f"seed file missing: {path}")


@pytest.fixture(scope="module")
def seed_options() -> list[list[str]]:
    """The seed's options grouped per question, in seed order, verbatim."""
    _require_seed()
    lines = SEED_FILE.read_text(encoding="utf-8").splitlines()
    # First line is the quiz title; after it, option lines separated by blank lines.
    options = [line for line in lines[1:] if line.strip()]
    assert len(options) == QUESTION_COUNT * OPTIONS_PER_QUESTION, "unexpected seed layout"
    return [
        options[i : i + OPTIONS_PER_QUESTION] for i in range(0, len(options), OPTIONS_PER_QUESTION)
    ]


@pytest.fixture(scope="module")
def answer_key() -> dict[int, str]:
    """Question number -> correct option text, from the markdown table."""
    _require_seed()
    key: dict[int, str] = {}
    for line in ANSWER_KEY.read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if not line.startswith("|"):
            continue
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        if len(cells) < 2 or not cells[0].isdigit():
            continue  # header or separator row
        number = int(cells[0])
        assert number not in key, f"answer key lists question {number} twice"
        key[number] = cells[1]
    assert sorted(key) == list(range(1, QUESTION_COUNT + 1)), "answer key rows incomplete"
    return key


@pytest.fixture(scope="module")
def bank() -> dict[str, Any]:
    data = yaml.safe_load(BANK_FILE.read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


@pytest.fixture(scope="module")
def questions(bank: dict[str, Any]) -> list[dict[str, Any]]:
    items = bank["questions"]
    assert isinstance(items, list)
    return items


def test_bank_header(bank: dict[str, Any]) -> None:
    assert bank["id"] == "pytorch-distributed-training"
    assert bank["title"] == "Distributed Training in PyTorch"
    assert isinstance(bank.get("description"), str) and bank["description"].strip()


def test_thirty_questions_with_unique_ids(questions: list[dict[str, Any]]) -> None:
    assert len(questions) == QUESTION_COUNT
    ids = [q["id"] for q in questions]
    assert len(set(ids)) == len(ids), "duplicate question ids"
    assert ids == [f"pdt-{n:02d}" for n in range(1, QUESTION_COUNT + 1)]


def test_seed_title_matches(bank: dict[str, Any]) -> None:
    _require_seed()
    title = SEED_FILE.read_text(encoding="utf-8").splitlines()[0]
    assert title.startswith(bank["title"])


def test_options_are_the_seed_options_verbatim_in_order(
    questions: list[dict[str, Any]], seed_options: list[list[str]]
) -> None:
    assert len(questions) == len(seed_options)
    for number, (question, expected) in enumerate(zip(questions, seed_options, strict=True), 1):
        assert question["options"] == expected, f"question {number} ({question['id']})"


def test_answer_letter_points_at_answer_key_option(
    questions: list[dict[str, Any]],
    seed_options: list[list[str]],
    answer_key: dict[int, str],
) -> None:
    for number, question in enumerate(questions, 1):
        correct = answer_key[number]
        assert correct in seed_options[number - 1], (
            f"answer key option for question {number} is not among the seed's options"
        )
        letter = question["answer"]
        assert isinstance(letter, str) and letter in LETTERS, f"{question['id']}: bad answer"
        chosen = question["options"][LETTERS.index(letter)]
        assert chosen == correct, f"{question['id']}: {letter} is {chosen!r}, key says {correct!r}"


def test_text_fields_tags_and_difficulty(questions: list[dict[str, Any]]) -> None:
    for question in questions:
        qid = question["id"]
        for field in ("prompt", "explanation"):
            value = question.get(field)
            assert isinstance(value, str) and value.strip(), f"{qid}: empty {field}"
        tags = question.get("tags")
        assert isinstance(tags, list) and tags, f"{qid}: no tags"
        assert all(isinstance(t, str) and TAG_RE.match(t) for t in tags), f"{qid}: bad tag"
        assert question.get("difficulty") in DIFFICULTIES, f"{qid}: bad difficulty"
