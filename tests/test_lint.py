"""`quizmaster questions lint`: the shipped bank passes (its reviewed
findings kept in its `.lint` file), and a bank with each problem a reviewer
would flag gets one line per problem and exit 1 (0 with --warn-only)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from tests.conftest import ROOT
from tests.test_cli import run_cli


def _q(qid: str, prompt: str, options: list[str], answer: str, why: str) -> dict[str, Any]:
    return {"id": qid, "prompt": prompt, "options": options, "answer": answer, "explanation": why}


FLAWED = {
    "id": "flawed",
    "title": "A bank with one of each problem",
    "questions": [
        _q(
            "cue-01",
            "Which collective leaves the summed tensor on every rank?",
            [
                "Broadcast of one rank's tensor",
                "Scatter of the pieces",
                "All-reduce of the summed values",
                "Gather onto one rank",
            ],
            "C",
            "All-reduce adds the tensors and hands every rank the result.",
        ),
        _q(
            "long-01",
            "What does a barrier do?",
            [
                "Blocks",
                "Waits until every process of the group has reached it, then lets all go on",
                "Sends",
                "Sums",
            ],
            "B",
            "A barrier holds each rank until all have arrived.",
        ),
        _q(
            "twin-01",
            "Which backend suits GPUs best?",
            ["NCCL", "Gloo", "MPI"],
            "A",
            "NCCL is built for NVIDIA GPUs.",
        ),
        _q(
            "twin-02",
            "Which backend would you pick for multi-node GPU jobs?",
            ["Gloo", "NCCL", "MPI"],
            "B",
            "NCCL again: it speaks NVLink and InfiniBand.",
        ),
        _q(
            "expl-01",
            "Which call starts the default process group?",
            ["init_process_group", "new_group", "get_rank"],
            "A",
            "The answer is B: new_group makes the default group.",
        ),
        _q(
            "same-01",
            "DDP caps the bucket size in megabytes with bucket_cap_mb; what does it cap?",
            ["Bucket size in megabytes", "Learning rate", "World size"],
            "A",
            "It caps each gradient bucket's size in MiB.",
        ),
        _q(
            "fine-01",
            "Which rank usually writes the checkpoint?",
            ["Rank 0", "The last rank", "Every rank at once"],
            "A",
            "By convention rank 0 saves, so the file is written once.",
        ),
    ],
}


def write_bank(folder: Path, bank: dict[str, Any]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{bank['id']}.yaml"
    path.write_text(yaml.safe_dump(bank, sort_keys=False))
    return path


def test_the_shipped_bank_passes(tmp_path: Path) -> None:
    result = run_cli("questions", "lint", str(ROOT / "questions"), cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "30 question(s) linted: 0 finding(s) (5 kept by review)" in result.stdout


def test_each_problem_is_reported_once_with_its_rule(tmp_path: Path) -> None:
    path = write_bank(tmp_path / "banks", FLAWED)
    result = run_cli("questions", "lint", str(path), cwd=tmp_path)
    assert result.returncode == 1
    lines = [line for line in result.stdout.splitlines() if line.startswith("flawed.yaml: ")]
    found = {tuple(line.split(": ")[1:3]) for line in lines}
    assert found == {
        ("cue-01", "cue"),
        ("long-01", "longest"),
        ("twin-02", "twin"),
        ("expl-01", "explanation"),
        ("same-01", "restates"),
        ("same-01", "cue"),  # a restated key shares its words with the stem, too
    }
    assert any("summed" in line and "key C" in line for line in lines)
    assert any("same options and key as twin-01" in line for line in lines)
    assert any("says B is the answer; the key is A" in line for line in lines)
    assert any("contains the key “Bucket size in megabytes”" in line for line in lines)
    assert "7 question(s) linted: 6 finding(s)" in result.stdout

    warned = run_cli("questions", "lint", "--warn-only", str(path), cwd=tmp_path)
    assert warned.returncode == 0 and "6 finding(s)" in warned.stdout


def test_a_finding_a_reviewer_kept_is_skipped(tmp_path: Path) -> None:
    path = write_bank(tmp_path / "banks", FLAWED)
    path.with_suffix(".lint").write_text(
        "# kept on purpose\ncue-01 cue  the stem has to say what is summed\n"
    )
    result = run_cli("questions", "lint", str(tmp_path / "banks"), cwd=tmp_path)
    assert result.returncode == 1
    assert "cue-01" not in result.stdout
    assert "5 finding(s) (1 kept by review)" in result.stdout
