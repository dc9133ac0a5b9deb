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


# --- What an expert read found (issue 13): giveaways and slips that must not return.

# Words too common in this quiz to give an answer away.
COMMON_WORDS = {
    "with", "from", "that", "this", "each", "into", "over", "than", "more", "most", "which",
    "what", "their", "does", "between", "during", "across", "other", "training",
}  # fmt: skip
# Where the stem must name the right option's distinctive word, because the key's
# concept is that very thing.
NAMED_BY_THE_CONCEPT = {
    "pdt-08": "the parameter-server architecture is the topic",
    "pdt-13": "the parameter-server architecture is the topic",
    "pdt-27": "the advantage of model parallelism is the topic",
}


def _word_stems(text: str) -> set[str]:
    """Words by their first five letters, so 'limits' meets 'Limited'."""
    words = re.findall(r"[a-z0-9]+", text.lower())
    return {word[:5] for word in words if len(word) >= 4 and word not in COMMON_WORDS}


def _by_id(questions: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {q["id"]: q for q in questions}


def test_no_stem_shares_a_word_with_only_its_right_option(
    questions: list[dict[str, Any]],
) -> None:
    for question in questions:
        if question["id"] in NAMED_BY_THE_CONCEPT:
            continue
        right = question["options"][LETTERS.index(question["answer"])]
        wrong = set().union(*(_word_stems(o) for o in question["options"] if o != right))
        giveaway = (_word_stems(right) - wrong) & _word_stems(question["prompt"])
        assert not giveaway, f"{question['id']}: the stem echoes {sorted(giveaway)} of {right!r}"


def test_ensemble_robustness_stands_apart_from_generalization_and_from_pdt_23(
    questions: list[dict[str, Any]],
) -> None:
    robust, ensemble = _by_id(questions)["pdt-21"], _by_id(questions)["pdt-23"]
    assert robust["prompt"].split()[:3] != ensemble["prompt"].split()[:3]
    for word in ("averag", "ensemble", "robust", "generaliz"):
        assert word not in robust["prompt"].lower()
    # The explanation rules generalization out instead of granting it.
    assert "indirect effect" not in robust["explanation"]
    assert "broader" not in robust["explanation"]


def test_fsdp_is_never_said_to_split_the_model(questions: list[dict[str, Any]]) -> None:
    for question in questions:
        for sentence in re.split(r"(?<=\.)\s+", question["explanation"]):
            if "FSDP" in sentence and "split" in sentence:
                assert "data parallelism" in sentence, f"{question['id']}: {sentence}"


def test_the_compression_pair_asks_for_different_knowledge(
    questions: list[dict[str, Any]],
) -> None:
    technique, reason = _by_id(questions)["pdt-01"], _by_id(questions)["pdt-15"]
    hooks = [set(re.findall(r"\w+_hook", q["prompt"])) for q in (technique, reason)]
    assert hooks[0] and hooks[1] and not hooks[0] & hooks[1], hooks
    assert "bytes" not in technique["prompt"]
    for paraphrase in ("slow", "bandwidth", "network", "nodes"):
        assert paraphrase not in reason["prompt"].lower()


def test_staleness_and_the_parameter_server_cap_are_stated_correctly(
    questions: list[dict[str, Any]],
) -> None:
    asynchronous = _by_id(questions)["pdt-18"]["explanation"]
    assert "applied to stale weights" not in asynchronous
    assert re.search(r"computed from stale weights is applied to newer ones", asynchronous)
    server = _by_id(questions)["pdt-10"]["explanation"].lower()
    assert "removes the cap" not in server


def test_a_question_whose_stem_defines_its_answer_is_not_hard(
    questions: list[dict[str, Any]],
) -> None:
    by_id = _by_id(questions)
    for qid in ("pdt-15", "pdt-28"):
        assert by_id[qid]["difficulty"] != "hard", qid
    # pdt-09 stays hard: its stem names only the APIs, not what they amount to.
    assert by_id["pdt-09"]["difficulty"] == "hard"
    for word in ("combin", "both", "hybrid", "mix", "at the same time"):
        assert word not in by_id["pdt-09"]["prompt"].lower()
