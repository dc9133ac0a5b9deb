"""What a newcomer's first `make run` costs: the install's wall time from nothing
and the size of the .venv it leaves, beside a bare `pip install .` of the project.

It copies what a clone holds into a temporary folder (so the checkout's own
.venv is untouched), runs the install step of `make run` there (not the bot
itself: that waits for input), then does the same with `python -m venv` and
`pip install .`. Goal: under 45 s and under 200 MB. Usage:

    python bench/first_run.py [--rounds N]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CLONE_PARTS = ["Makefile", "pyproject.toml", "requirements.lock", "README.md", "LICENSE"]
CLONE_FOLDERS = ["bot", "questions"]
TIME_GOAL_S, SIZE_GOAL_MB = 45.0, 200.0


def _folder_mb(path: Path) -> float:
    total = sum(f.stat().st_size for f in path.rglob("*") if f.is_file() and not f.is_symlink())
    return total / 1e6


def _fresh_clone(into: Path) -> None:
    for name in CLONE_PARTS:
        shutil.copy2(ROOT / name, into / name)
    for name in CLONE_FOLDERS:
        shutil.copytree(ROOT / name, into / name, ignore=shutil.ignore_patterns("__pycache__"))


def _timed(command: list[str], cwd: Path) -> float:
    started = time.perf_counter()
    subprocess.run(command, cwd=cwd, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - started


def make_run_install(work: Path) -> tuple[float, float]:
    """`make run` up to the bot's start: the runtime stamp is its only prerequisite."""
    _fresh_clone(work)
    seconds = _timed(["make", "--no-print-directory", ".venv/.installed-run"], work)
    return seconds, _folder_mb(work / ".venv")


def bare_install(work: Path) -> tuple[float, float]:
    _fresh_clone(work)
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "venv", ".venv"], cwd=work, check=True)
    pip = [str(work / ".venv" / "bin" / "python"), "-m", "pip", "install", "--quiet", "."]
    subprocess.run(pip, cwd=work, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - started, _folder_mb(work / ".venv")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=1)
    rounds = parser.parse_args().rounds
    ours: list[tuple[float, float]] = []
    bare: list[tuple[float, float]] = []
    for _ in range(rounds):
        for measure, results in ((make_run_install, ours), (bare_install, bare)):
            with tempfile.TemporaryDirectory(prefix="quiz-first-run-") as folder:
                results.append(measure(Path(folder)))
    env_note = "pip's cache " + ("on" if "PIP_NO_CACHE_DIR" not in os.environ else "off")
    for name, results in (("make run", ours), ("bare pip install .", bare)):
        times = [t for t, _ in results]
        sizes = [s for _, s in results]
        print(
            f"{name:>20}: {min(times):5.1f}–{max(times):5.1f} s cold, "
            f".venv {min(sizes):5.0f}–{max(sizes):5.0f} MB ({rounds} round(s), {env_note})"
        )
    worst_time = max(t for t, _ in ours)
    worst_size = max(s for _, s in ours)
    met = worst_time < TIME_GOAL_S and worst_size < SIZE_GOAL_MB
    print(
        f"goal: < {TIME_GOAL_S:.0f} s and < {SIZE_GOAL_MB:.0f} MB: "
        f"{'met' if met else 'NOT met'} (worst {worst_time:.1f} s, {worst_size:.0f} MB)"
    )
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
