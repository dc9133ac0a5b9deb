"""The `quizmaster` command as a person runs it: real processes, real files."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest
import yaml

from tests.processes import QUIZMASTER, ROOT, bot_environment


def run_cli(
    *args: str, cwd: Path, stdin: str = "", env: dict[str, str] | None = None, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    environment = bot_environment(cwd, **(env or {}))
    return subprocess.run(
        [*QUIZMASTER, *args],
        cwd=cwd,
        input=stdin,
        capture_output=True,
        text=True,
        env=environment,
        timeout=timeout,
    )


def test_piped_play_reveals_each_question_and_keeps_stats_between_runs(tmp_path: Path) -> None:
    first = run_cli("play", "--questions", "3", cwd=tmp_path, stdin="A\nB\nC\n")
    assert first.returncode == 0, first.stderr
    verdicts = re.findall(r"✓ Right, \+\d+ points|✗ Not quite: the answer is [A-E]", first.stdout)
    assert len(verdicts) == 3
    assert first.stdout.count("\nScore ") == 3  # a running score after each question
    assert "── Quiz over ──" in first.stdout
    assert "All time: 3 answered" in first.stdout

    second = run_cli("play", "--questions", "3", cwd=tmp_path, stdin="A\nB\nC\n")
    assert second.returncode == 0, second.stderr
    assert "All time: 6 answered" in second.stdout


def _posted_prompts(output: str) -> list[str]:
    lines = output.splitlines()
    return [lines[index + 1] for index, line in enumerate(lines) if "· Question" in line]


def test_play_does_not_repeat_questions_until_the_bank_is_used_up(tmp_path: Path) -> None:
    prompts: list[str] = []
    for _ in range(3):
        result = run_cli("play", "--questions", "10", cwd=tmp_path, stdin="A\n" * 10)
        assert result.returncode == 0, result.stderr
        prompts += _posted_prompts(result.stdout)
    assert len(prompts) == 30
    assert len(set(prompts)) == 30

    fourth = run_cli("play", "--questions", "5", cwd=tmp_path, stdin="A\n" * 5)
    assert set(_posted_prompts(fourth.stdout)) <= set(prompts)


def test_play_rejects_out_of_range_values(tmp_path: Path) -> None:
    result = run_cli("play", "--questions", "51", cwd=tmp_path)
    assert result.returncode == 1
    assert "questions must be between 1 and 50" in result.stdout


def test_play_stops_when_input_ends(tmp_path: Path) -> None:
    result = run_cli("play", "--questions", "3", "--seconds", "60", cwd=tmp_path, stdin="B\n")
    assert result.returncode == 0, result.stderr
    assert "── Quiz over ──" in result.stdout
    assert "Right: " in result.stdout and " of 1" in result.stdout
    assert "All time: 1 answered" in result.stdout


def test_export_holds_the_seed_quiz_with_answers_from_the_key(tmp_path: Path) -> None:
    result = run_cli("questions", "export", "--format", "json", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    exported = json.loads(result.stdout)
    (bank,) = [b for b in exported["banks"] if b["id"] == "pytorch-distributed-training"]
    assert len(bank["questions"]) == 30
    source = yaml.safe_load((ROOT / "questions" / "pytorch-distributed-training.yaml").read_text())
    for question, original in zip(bank["questions"], source["questions"], strict=True):
        assert question["options"] == original["options"]
        assert (
            question["options"][question["answer"]]
            == original["options"]["ABCDE".index(original["answer"])]
        )


def test_validate_reports_the_bad_file_and_exits_1(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        "id: broken\ntitle: Broken\nquestions:\n"
        "  - id: b-1\n    prompt: Two plus two?\n    options: [four, four]\n"
        "    answer: A\n    explanation: Arithmetic.\n"
    )
    result = run_cli("questions", "validate", str(bad), str(ROOT / "questions"), cwd=tmp_path)
    assert result.returncode == 1
    assert "bad.yaml:4 (question b-1)" in result.stderr
    assert "unique" in result.stderr
    assert "1 bank(s), 30 question(s) valid" in result.stdout

    good = run_cli("questions", "validate", cwd=tmp_path)
    assert good.returncode == 0, good.stderr


def test_validate_reports_deep_huge_and_duplicate_banks_once_each(tmp_path: Path) -> None:
    folder = tmp_path / "banks"
    folder.mkdir()
    shipped = (ROOT / "questions" / "pytorch-distributed-training.yaml").read_text()
    (folder / "a-shipped.yaml").write_text(shipped)
    (folder / "b-deep.yaml").write_text("id: deep\ntitle: Deep\nquestions: " + "[" * 50_000)
    (folder / "c-huge.yaml").write_text("id: huge\n" + "# padding\n" * 200_000)
    (folder / "d-extra.yaml").write_text(
        "id: extra\ntitle: Extra\nquestions:\n"
        "  - id: extra-1\n    prompt: One?\n    options: [Sure, Nope]\n    answer: A\n"
        "    explanation: Yes.\n"
        "  - id: pdt-01\n    prompt: A copy?\n    options: [Sure, Nope]\n    answer: A\n"
        "    explanation: Yes.\n"
    )

    result = run_cli("questions", "validate", str(folder), cwd=tmp_path)

    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert result.stderr.splitlines() == [
        f"{folder / 'b-deep.yaml'}:3: nested more than 20 levels deep; a bank needs only 5",
        f"{folder / 'c-huge.yaml'}: larger than 1,000,000 bytes, the most a bank file may "
        "hold; split it into several files",
        f"{folder / 'd-extra.yaml'}:9 (question pdt-01): question id already used in "
        f"{folder / 'a-shipped.yaml'}; this copy is skipped",
    ]
    assert "2 bank(s), 31 question(s) valid; 3 problem(s)." in result.stdout


def test_schema_and_list(tmp_path: Path) -> None:
    schema = run_cli("questions", "schema", cwd=tmp_path)
    assert schema.returncode == 0
    assert "questions" in json.loads(schema.stdout)["properties"]
    listing = run_cli("questions", "list", cwd=tmp_path)
    assert "pytorch-distributed-training\t30 questions" in listing.stdout


def test_forget_user_removes_the_players_answers(tmp_path: Path) -> None:
    played = run_cli("play", "--questions", "2", cwd=tmp_path, stdin="A\nB\n")
    assert "All time: 2 answered" in played.stdout
    forgot = run_cli("forget-user", "console", "local", cwd=tmp_path)
    assert forgot.returncode == 0
    assert "Deleted 2 answer(s)" in forgot.stdout
    again = run_cli("play", "--questions", "1", cwd=tmp_path, stdin="A\n")
    assert "All time: 1 answered" in again.stdout


def test_db_upgrade_creates_the_database(tmp_path: Path) -> None:
    result = run_cli("db", "upgrade", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "data" / "quizmaster.db").exists()


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("QUIZ_HEALTH_PORT", "eighty", "QUIZ_HEALTH_PORT"),
        ("QUIZ_HEALTH_PORT", "70000", "QUIZ_HEALTH_PORT"),
        ("QUIZ_LOG_LEVEL", "LOUD", "QUIZ_LOG_LEVEL"),
        ("QUIZ_DATABASE_URL", "mysql://x", "QUIZ_DATABASE_URL"),
    ],
)
def test_bad_settings_are_named_and_stop_start_up(
    tmp_path: Path, name: str, value: str, message: str
) -> None:
    result = run_cli("play", cwd=tmp_path, env={name: value})
    assert result.returncode == 2
    assert f"Bad setting {message}" in result.stderr


def _cards_due_now(cwd: Path) -> int:
    """Let time pass for the local player's cards (they are due minutes to days
    after a quiz): move every due time into the past. How many cards there are."""
    import sqlite3

    connection = sqlite3.connect(cwd / "data" / "quizmaster.db")
    try:
        with connection:
            connection.execute("UPDATE review_cards SET due = '2000-01-01 00:00:00.000000'")
        return int(connection.execute("SELECT count(*) FROM review_cards").fetchone()[0])
    finally:
        connection.close()


def test_piped_review_answers_the_local_players_due_cards(tmp_path: Path) -> None:
    nothing = run_cli("review", cwd=tmp_path)
    assert nothing.returncode == 0, nothing.stderr
    assert "Nothing to review yet." in nothing.stdout

    played = run_cli("play", "--questions", "3", cwd=tmp_path, stdin="A\nB\nC\n")
    assert played.returncode == 0, played.stderr
    assert _cards_due_now(tmp_path) == 3
    reviewed = run_cli("review", "--count", "2", cwd=tmp_path, stdin="x\nA\nA\n")
    assert reviewed.returncode == 0, reviewed.stderr
    assert reviewed.stdout.count("Review · ") == 2
    assert "Type one of A, B" in reviewed.stdout
    assert "Review done: 2 cards. Next review: " in reviewed.stdout
    # Out of range: typer refuses it before anything runs.
    assert run_cli("review", "--count", "0", cwd=tmp_path).returncode == 2


def test_export_anki_writes_the_package_for_a_member(tmp_path: Path) -> None:
    played = run_cli("play", "--questions", "3", cwd=tmp_path, stdin="A\nA\nA\n")
    assert played.returncode == 0, played.stderr
    out = tmp_path / "deck.apkg"
    every = run_cli(
        "export", "anki", "--platform", "console", "--user", "local", "--all", "--out", str(out),
        cwd=tmp_path,
    )  # fmt: skip
    assert every.returncode == 0, every.stderr
    assert every.stdout.strip() == f"Wrote 3 question(s) to {out}."
    import zipfile

    with zipfile.ZipFile(out) as archive:
        assert "collection.anki2" in archive.namelist()

    nobody = run_cli(
        "export", "anki", "--platform", "slack", "--user", "U0NOBODY", "--out", str(out),
        cwd=tmp_path,
    )  # fmt: skip
    assert nobody.returncode == 1
    assert "No missed questions to export yet." in nobody.stderr
