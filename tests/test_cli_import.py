"""`quizmaster questions import` as a person runs it: a real process, real files."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from tests.test_cli import run_cli
from tests.test_import_formats import CSV, OPENTDB


def test_import_prints_the_bank_on_stdout_and_the_report_on_stderr(tmp_path: Path) -> None:
    (tmp_path / "sheet.csv").write_text(CSV, encoding="utf-8")

    result = run_cli(
        "questions", "import", "sheet.csv", "--format", "csv", "--bank", "pub", cwd=tmp_path
    )

    assert result.returncode == 0, result.stderr
    bank = yaml.safe_load(result.stdout)
    assert bank["id"] == "pub" and len(bank["questions"]) == 3
    report = result.stderr.splitlines()
    assert (
        "skipped line 7: answer 'Q' is neither a letter A to E, an option number 1 to 5 "
        "nor the text of one option"
    ) in report
    assert "note: columns not imported: notes" in report
    assert report[-1] == "3 question(s) imported, 4 skipped."
    (tmp_path / "banks").mkdir()
    (tmp_path / "banks" / "pub.yaml").write_text(result.stdout, encoding="utf-8")
    check = run_cli("questions", "validate", "banks", cwd=tmp_path)
    assert check.returncode == 0, check.stderr


def test_import_to_a_file_is_listed_with_the_other_banks_and_never_overwrites(
    tmp_path: Path,
) -> None:
    (tmp_path / "trivia.json").write_text(json.dumps(OPENTDB), encoding="utf-8")
    banks = tmp_path / "banks"
    banks.mkdir()
    out = banks / "trivia.yaml"
    args = ("questions", "import", "trivia.json", "--format", "opentdb", "--bank", "trivia")

    first = run_cli(*args, "--title", "Games night", "--out", str(out), cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    assert first.stdout.strip() == f"Wrote bank trivia to {out}: 2 question(s) imported, 5 skipped."
    listing = run_cli("questions", "list", cwd=tmp_path, env={"QUIZ_QUESTIONS_DIR": str(banks)})
    assert listing.stdout.startswith("trivia\t2 questions\tGames night\ttags: ")

    again = run_cli(*args, "--out", str(out), cwd=tmp_path)
    assert again.returncode == 2
    assert "exists; pass --force" in again.stderr
    assert yaml.safe_load(out.read_text())["title"] == "Games night"
    forced = run_cli(*args, "--out", str(out), "--force", cwd=tmp_path)
    assert forced.returncode == 0, forced.stderr
    assert yaml.safe_load(out.read_text())["title"] == "Open Trivia DB"


def test_import_exits_1_when_nothing_could_be_imported(tmp_path: Path) -> None:
    (tmp_path / "none.txt").write_text("Only a question?\nANSWER: A\n", encoding="utf-8")
    (tmp_path / "binary.gift").write_bytes(b"\x00\x01\x02junk")

    nothing = run_cli(
        "questions", "import", "none.txt", "--format", "aiken", "--bank", "x", cwd=tmp_path
    )
    assert nothing.returncode == 1
    assert nothing.stdout == ""
    assert "skipped line 1: no options" in nothing.stderr
    assert "Nothing imported from none.txt: 0 question(s) imported, 1 skipped." in nothing.stderr

    binary = run_cli(
        "questions", "import", "binary.gift", "--format", "gift", "--bank", "x", cwd=tmp_path
    )
    assert binary.returncode == 1
    assert "binary" in binary.stderr and "Traceback" not in binary.stderr

    missing = run_cli(
        "questions", "import", "absent.txt", "--format", "gift", "--bank", "x", cwd=tmp_path
    )
    assert missing.returncode == 1
    assert "cannot read absent.txt" in missing.stderr


def test_import_refuses_bad_arguments_with_exit_2(tmp_path: Path) -> None:
    (tmp_path / "quiz.txt").write_text("Q?\nA. a\nB. b\nANSWER: A\n", encoding="utf-8")
    result = run_cli(
        "questions", "import", "quiz.txt", "--format", "xml", "--bank", "x", cwd=tmp_path
    )
    assert result.returncode == 2
    assert "unknown format 'xml'; use one of opentdb, aiken, gift, csv, red, json" in result.stderr


def test_export_then_import_through_the_command_line_keeps_the_questions(tmp_path: Path) -> None:
    exported = run_cli("questions", "export", "--format", "json", cwd=tmp_path)
    assert exported.returncode == 0, exported.stderr
    (tmp_path / "export.json").write_text(exported.stdout, encoding="utf-8")

    result = run_cli(
        "questions", "import", "export.json", "--format", "json", "--bank", "copy", cwd=tmp_path
    )

    assert result.returncode == 0, result.stderr
    imported = yaml.safe_load(result.stdout)["questions"]
    original = json.loads(exported.stdout)["banks"][0]["questions"]
    assert [q["prompt"] for q in imported] == [q["prompt"] for q in original]
    assert [q["options"] for q in imported] == [q["options"] for q in original]
    assert ["ABCDE".index(q["answer"]) for q in imported] == [q["answer"] for q in original]


def test_import_warns_when_a_loaded_bank_already_has_the_id(tmp_path: Path) -> None:
    (tmp_path / "quiz.txt").write_text("Q?\nA. a\nB. b\nANSWER: A\n", encoding="utf-8")
    taken = "pytorch-distributed-training"
    result = run_cli(
        "questions", "import", "quiz.txt", "--format", "aiken", "--bank", taken, cwd=tmp_path
    )
    assert result.returncode == 0, result.stderr
    assert f"note: bank id {taken} is already used by " in result.stderr
    fresh = run_cli(
        "questions", "import", "quiz.txt", "--format", "aiken", "--bank", "fresh", cwd=tmp_path
    )
    assert "already used" not in fresh.stderr


def test_an_imported_bank_can_be_played_at_once(tmp_path: Path) -> None:
    (tmp_path / "quiz.gift").write_text(
        "::one:: Which is a fruit? {=apple ~brick ~stone}\n\n::two:: Ice is cold. {T}\n",
        encoding="utf-8",
    )
    banks = tmp_path / "banks"
    banks.mkdir()
    imported = run_cli(
        "questions", "import", "quiz.gift", "--format", "gift", "--bank", "mine",
        "--out", str(banks / "mine.yaml"), cwd=tmp_path,
    )  # fmt: skip
    assert imported.returncode == 0, imported.stderr

    # The true/false question takes `true` or `false`, not a letter; in either
    # order of the two questions one of these lines is refused and the rest answer.
    played = run_cli(
        "play", "--questions", "2", "--bank", "mine", cwd=tmp_path, stdin="A\ntrue\nA\n",
        env={"QUIZ_QUESTIONS_DIR": str(banks)},
    )  # fmt: skip

    assert played.returncode == 0, played.stderr
    assert "Which is a fruit?" in played.stdout
    assert "Ice is cold." in played.stdout
    assert played.stdout.count("\nScore ") == 2  # both questions revealed


def test_field_encoding_is_named_on_the_command_line_and_checked(tmp_path: Path) -> None:
    corpus = Path(__file__).parent / "corpus" / "opentdb" / "base64.json"
    (tmp_path / "b64.json").write_bytes(corpus.read_bytes())
    args = ("questions", "import", "b64.json", "--format", "opentdb", "--bank", "b64")

    named = run_cli(*args, "--field-encoding", "base64", cwd=tmp_path)
    assert named.returncode == 0, named.stderr
    prompts = [q["prompt"] for q in yaml.safe_load(named.stdout)["questions"]]
    assert "Which gas do plants take in for photosynthesis?" in prompts
    # Named wrongly, every field is reported rather than imported as garbage.
    wrong = run_cli(*args, "--field-encoding", "url3986", cwd=tmp_path)
    assert wrong.returncode == 1
    assert "neither 'multiple' nor 'boolean'" in wrong.stderr
    unknown = run_cli(*args, "--field-encoding", "rot13", cwd=tmp_path)
    assert unknown.returncode == 2
    assert "unknown field encoding 'rot13'" in unknown.stderr
    (tmp_path / "quiz.txt").write_text("Q?\nA. a\nB. b\nANSWER: A\n", encoding="utf-8")
    other = run_cli(
        "questions", "import", "quiz.txt", "--format", "aiken", "--bank", "q",
        "--field-encoding", "base64", cwd=tmp_path,
    )  # fmt: skip
    assert other.returncode == 2
    assert "only to --format opentdb" in other.stderr
