"""Loading question banks: a bad file is reported precisely and never stops a good
one; the published JSON schema and the export format."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from bot.quiz.bank import BankProblem, export, json_schema, load_banks

ROOT = Path(__file__).resolve().parent.parent

Question = dict[str, Any]


def question(question_id: str, **changes: Any) -> Question:
    made: Question = {
        "id": question_id,
        "prompt": f"What is {question_id}?",
        "options": ["First", "Second", "Third", "Fourth"],
        "answer": "B",
        "explanation": "Because the second one is right.",
        "tags": ["sample"],
        "difficulty": "easy",
    }
    made.update(changes)
    return made


def write_bank(path: Path, bank_id: str, questions: list[Question]) -> str:
    text = yaml.safe_dump(
        {"id": bank_id, "title": f"The {bank_id} bank", "questions": questions},
        sort_keys=False,
        allow_unicode=True,
        width=10_000,
    )
    path.write_text(text, encoding="utf-8")
    return text


def line_of(text: str, question_id: str) -> int:
    """1-based line where the question's list item starts."""
    lines = text.splitlines()
    [index] = [i for i, line in enumerate(lines) if line.lstrip() == f"- id: {question_id}"]
    return index + 1


@pytest.fixture
def good_bank(tmp_path: Path) -> Path:
    path = tmp_path / "a-good.yaml"
    write_bank(path, "good", [question("good-1"), question("good-2", answer="D")])
    return path


def assert_good_bank_loaded(folder: Path) -> list[BankProblem]:
    catalog, problems = load_banks([folder])
    assert list(catalog.banks) == ["good"]
    assert catalog.pool() == ["good-1", "good-2"]
    return problems


BAD_QUESTIONS: dict[str, tuple[Callable[[], Question], str]] = {
    "one option": (lambda: question("bad-1", options=["Alone"], answer="A"), "options"),
    "six options": (
        lambda: question("bad-1", options=["a", "b", "c", "d", "e", "f"], answer="A"),
        "options",
    ),
    "duplicate options": (
        lambda: question("bad-1", options=["Same", "Other", "Same"], answer="B"),
        "unique",
    ),
    "answer beyond options": (
        lambda: question("bad-1", options=["One", "Two", "Three"], answer="D"),
        "answer D",
    ),
    "answer not a letter": (lambda: question("bad-1", answer="Z"), "answer"),
    "empty prompt": (lambda: question("bad-1", prompt=""), "prompt"),
    "blank explanation": (lambda: question("bad-1", explanation="   "), "explanation"),
    "unknown difficulty": (lambda: question("bad-1", difficulty="brutal"), "difficulty"),
    "prompt too long": (lambda: question("bad-1", prompt="x" * 1001), "prompt"),
}


@pytest.mark.parametrize("case", list(BAD_QUESTIONS))
def test_a_bad_question_is_reported_with_file_id_and_line(
    tmp_path: Path, good_bank: Path, case: str
) -> None:
    make, mentioned = BAD_QUESTIONS[case]
    bad = tmp_path / "b-broken.yaml"
    text = write_bank(bad, "broken", [question("fine-1"), make(), question("fine-2")])

    problems = assert_good_bank_loaded(tmp_path)

    assert problems, "the broken bank was reported"
    assert all(problem.path == bad for problem in problems)
    [problem] = [p for p in problems if p.question_id == "bad-1"]
    assert problem.line == line_of(text, "bad-1")
    assert mentioned in problem.message
    described = str(problem)
    assert "b-broken.yaml" in described
    assert "bad-1" in described
    assert f":{problem.line}" in described


def test_a_prompt_at_the_length_limit_is_fine(tmp_path: Path) -> None:
    write_bank(tmp_path / "long.yaml", "long", [question("q-1", prompt="x" * 1000)])
    catalog, problems = load_banks([tmp_path])
    assert problems == []
    assert catalog.pool() == ["q-1"]


def test_invalid_yaml_is_reported_with_its_line(tmp_path: Path, good_bank: Path) -> None:
    bad = tmp_path / "b-broken.yaml"
    bad.write_text(
        "id: broken\ntitle: Broken\nquestions:\n  - id: q-1\n    prompt: [not closed\n"
        "    options: [a, b]\n",
        encoding="utf-8",
    )

    problems = assert_good_bank_loaded(tmp_path)

    [problem] = problems
    assert problem.path == bad
    assert "YAML" in problem.message
    assert problem.line is not None and 4 <= problem.line <= 7
    assert "b-broken.yaml" in str(problem) and f":{problem.line}" in str(problem)


def test_a_file_that_is_not_a_bank_is_reported(tmp_path: Path, good_bank: Path) -> None:
    bad = tmp_path / "b-list.yaml"
    bad.write_text("- just\n- a list\n", encoding="utf-8")
    [problem] = assert_good_bank_loaded(tmp_path)
    assert problem.path == bad


def test_a_question_id_used_twice_keeps_the_first_files_question(
    tmp_path: Path, good_bank: Path
) -> None:
    clash = tmp_path / "c-clash.yaml"
    text = write_bank(
        clash, "clash", [question("clash-1"), question("good-2", prompt="A copy?"), question("c-3")]
    )

    catalog, problems = load_banks([tmp_path])

    assert list(catalog.banks) == ["good", "clash"], "both banks load"
    assert catalog.pool(bank="good") == ["good-1", "good-2"]
    assert catalog.pool(bank="clash") == ["clash-1", "c-3"], "the rest of the later bank stays"
    assert catalog.question("good-2") is not None
    assert catalog.question("good-2").prompt == "What is good-2?", "the first file's question"
    [problem] = problems
    assert problem.path == clash
    assert problem.question_id == "good-2"
    assert problem.line == line_of(text, "good-2")
    assert "a-good.yaml" in problem.message, "names the file that already uses the id"
    described = str(problem)
    assert f"c-clash.yaml:{problem.line} (question good-2)" in described
    assert "\n" not in described


def test_a_bank_whose_questions_are_all_taken_is_reported(tmp_path: Path, good_bank: Path) -> None:
    copy = tmp_path / "c-copy.yaml"
    write_bank(copy, "copy", [question("good-1")])

    problems = assert_good_bank_loaded(tmp_path)

    assert [p.question_id for p in problems] == ["good-1", None]
    assert all(p.path == copy for p in problems)


def test_deeply_nested_yaml_is_one_problem_not_a_crash(tmp_path: Path, good_bank: Path) -> None:
    deep = tmp_path / "b-deep.yaml"
    deep.write_text("id: deep\ntitle: Deep\nquestions: " + "[" * 50_000 + "]" * 50_000 + "\n")

    [problem] = assert_good_bank_loaded(tmp_path)

    assert problem.path == deep
    assert "nested more than" in problem.message
    assert problem.line == 3
    assert str(problem).startswith(f"{deep}:3: ")


def test_deep_block_nesting_is_refused_too(tmp_path: Path, good_bank: Path) -> None:
    deep = tmp_path / "b-deep.yaml"
    deep.write_text("id: deep\n" + "".join(" " * i + f"k{i}:\n" for i in range(1000)))

    [problem] = assert_good_bank_loaded(tmp_path)

    assert problem.path == deep and "nested more than" in problem.message


def test_a_bank_file_over_the_size_cap_is_refused_unparsed(tmp_path: Path, good_bank: Path) -> None:
    big = tmp_path / "b-big.yaml"
    padding = "# " + "x" * 98 + "\n"
    big.write_text(
        "id: big\ntitle: Big\nquestions: [" + padding * 20_000 + "\n", encoding="utf-8"
    )  # 2 MB, and not even valid YAML: refused before parsing
    assert big.stat().st_size > 2_000_000

    [problem] = assert_good_bank_loaded(tmp_path)

    assert problem.path == big
    assert "1,000,000 bytes" in problem.message
    assert "YAML" not in problem.message


def test_the_shipped_banks_load_cleanly() -> None:
    catalog, problems = load_banks([ROOT / "questions"])
    assert problems == []
    assert len(catalog.pool()) == 30


# -- schema and export -------------------------------------------------------------------


def test_json_schema_describes_the_bank_format() -> None:
    schema = json.loads(json_schema())

    assert schema["$schema"].startswith("https://json-schema.org/")
    assert schema["type"] == "object"
    assert set(schema["properties"]) == {"id", "title", "description", "language", "questions"}
    assert {"id", "title", "questions"} <= set(schema["required"])
    questions = schema["properties"]["questions"]
    assert questions["type"] == "array" and questions["minItems"] == 1
    reference = questions["items"]["$ref"].rsplit("/", 1)[-1]
    item = schema["$defs"][reference]
    assert set(item["properties"]) == {
        "id",
        "prompt",
        "options",
        "answer",
        "explanation",
        "tags",
        "difficulty",
        "hint",
        "image",
        "image_alt",
    }
    assert {"id", "prompt", "options", "answer", "explanation"} <= set(item["required"])
    options = item["properties"]["options"]
    assert (options["minItems"], options["maxItems"]) == (2, 5)
    difficulty = item["properties"]["difficulty"]
    if "$ref" in difficulty:
        difficulty = schema["$defs"][difficulty["$ref"].rsplit("/", 1)[-1]]
    assert set(difficulty["enum"]) == {"easy", "medium", "hard"}


def test_export_gives_answers_as_indexes_into_options(tmp_path: Path) -> None:
    write_bank(
        tmp_path / "letters.yaml",
        "letters",
        [
            question("first", answer="A"),
            question("third", answer="C"),
            question("last", options=["a", "b", "c", "d", "e"], answer="E"),
        ],
    )
    catalog, problems = load_banks([tmp_path])
    assert problems == []

    exported = json.loads(json.dumps(export(catalog)))

    [bank] = exported["banks"]
    answers = {q["id"]: (q["answer"], q["options"][q["answer"]]) for q in bank["questions"]}
    assert answers == {"first": (0, "First"), "third": (2, "Third"), "last": (4, "e")}


def test_export_of_the_shipped_bank_points_at_the_lettered_options() -> None:
    catalog, _ = load_banks([ROOT / "questions"])
    raw = yaml.safe_load((ROOT / "questions" / "pytorch-distributed-training.yaml").read_text())
    by_id = {q["id"]: q for q in raw["questions"]}

    [bank] = export(catalog)["banks"]

    for exported in bank["questions"]:
        source = by_id[exported["id"]]
        letter_position = ord(source["answer"]) - ord("A")
        assert exported["options"][exported["answer"]] == source["options"][letter_position]
