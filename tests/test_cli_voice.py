"""The command line speaks as a command line: flags in its hints, help on a bare
command and on -h, one plain line per error, exit 2 for a usage error and 1 when
there is nothing to do."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.test_cli import run_cli


def _one_line(result_stderr: str) -> str:
    lines = result_stderr.strip().splitlines()
    assert len(lines) == 1, lines
    assert "╭" not in lines[0] and "/quiz" not in lines[0]
    return lines[0]


def test_a_bare_command_and_h_show_help(tmp_path: Path) -> None:
    bare = run_cli(cwd=tmp_path)
    assert "Commands:" in bare.stdout and "play" in bare.stdout
    assert "Missing command" not in bare.stdout + bare.stderr
    short = run_cli("-h", cwd=tmp_path)
    assert short.returncode == 0 and "Commands:" in short.stdout
    assert run_cli("play", "-h", cwd=tmp_path).returncode == 0
    assert "Commands:" in run_cli("questions", cwd=tmp_path).stdout


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (["play", "--questions", "0"], "--questions must be between 1 and 50 (got 0)."),
        (["play", "--seconds", "1"], "--seconds must be between 2 and 3600 (got 1)."),
        (["review", "--count", "0"], "--count must be between 1 and 50 (got 0)."),
        (["review", "--count", "51"], "--count must be between 1 and 50 (got 51)."),
    ],
)
def test_ranges_are_one_line_naming_the_flag_with_exit_2(
    tmp_path: Path, args: list[str], line: str
) -> None:
    result = run_cli(*args, cwd=tmp_path)
    assert result.returncode == 2
    assert _one_line(result.stderr) == line


def test_an_unknown_tag_or_bank_names_the_ones_there_are(tmp_path: Path) -> None:
    tag = run_cli("play", "--tag", "ddp", cwd=tmp_path)
    assert tag.returncode == 2
    listed = _one_line(tag.stderr)
    assert listed.startswith("--tag ddp: no question has that tag. Tags: ")
    assert "data-parallelism" in listed  # a tag the shipped bank has
    bank = run_cli("play", "--bank", "nope", cwd=tmp_path)
    assert bank.returncode == 2
    assert "Banks: pytorch-distributed-training." in _one_line(bank.stderr)


def test_no_bank_loaded_is_nothing_to_do_not_a_bad_choice(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    played = run_cli("play", cwd=tmp_path, env={"QUIZ_QUESTIONS_DIR": str(empty)})
    assert played.returncode == 1
    line = _one_line(played.stderr)
    assert line.startswith(f"No question banks loaded from {empty}")
    assert "No questions match your choice" not in played.stdout
    validated = run_cli("questions", "validate", str(empty), cwd=tmp_path)
    assert validated.returncode == 1
    assert "Nothing to validate" in _one_line(validated.stderr)


def test_export_with_nothing_names_the_flag(tmp_path: Path) -> None:
    out = tmp_path / "deck.apkg"
    args = ["export", "anki", "--platform", "console", "--user", "local", "--out", str(out)]
    result = run_cli(*args, cwd=tmp_path)
    assert result.returncode == 1
    assert _one_line(result.stderr) == (
        "No missed questions to export yet; --all exports every answered one."
    )
    assert not out.exists()


@pytest.mark.parametrize(
    "args",
    [
        ["forget-user", "discrod", "123"],
        ["export", "anki", "--platform", "slak", "--user", "U1", "--out", "x.apkg"],
    ],
)
def test_a_platform_name_is_checked(tmp_path: Path, args: list[str]) -> None:
    result = run_cli(*args, cwd=tmp_path)
    assert result.returncode == 2
    assert "use discord, slack or console." in _one_line(result.stderr)
    assert not (tmp_path / "data").exists(), "no database is opened for a typo"
