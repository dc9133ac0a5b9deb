"""Instructions instead of seconds: a benchmark's timed part counted by callgrind.

On these shared virtual machines a process's CPU time per click at a steady
rate is mostly what waking up costs, not the work: a bare `asyncio.sleep(0.005)`
loop was charged 0.2 ms of CPU per turn, and bench/click_cpu.py's click, 0.28-0.38
ms back to back, was charged 0.97-1.11 ms when the clicks came 5 ms apart. Callgrind counts the
instructions the process runs in user space (every thread), the same count
whatever the rest of the machine does, so two bots' work per click can be
compared on a noisy day. It does not count the kernel's part (system calls,
waking threads), which the CPU-time figures keep.

A benchmark runs itself again under valgrind (`rerun`); the copy under
valgrind wraps each bot's timed part in `counted(name)`, which turns counting
on for that part only and dumps its total.

    rerun(script, args) -> {name: [instructions of each counted part, in order]}
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

# Set in the copy that runs under valgrind: where its dumps go.
UNDER_CALLGRIND = "QUIZ_BENCH_CALLGRIND_DIR"


def counting() -> bool:
    """Whether this process runs under callgrind for `rerun`."""
    return UNDER_CALLGRIND in os.environ


def _control(*arguments: str) -> None:
    subprocess.run(
        ["callgrind_control", *arguments, str(os.getpid())],
        check=True,
        capture_output=True,
        timeout=120,
    )


@contextlib.contextmanager
def counted(name: str) -> Iterator[None]:
    """Count the instructions run inside the block under `name` (nothing when
    not under callgrind)."""
    if not counting():
        yield
        return
    _control("--zero")
    _control("--instr=on")
    try:
        yield
    finally:
        _control(f"--dump={name}")
        _control("--instr=off")


def rerun(script: str, arguments: list[str]) -> dict[str, list[int]]:
    """Run `script` with `arguments` under callgrind, counting nothing until it
    says (`counted`); each counted part's instructions by its name."""
    if shutil.which("valgrind") is None:
        print("instructions not counted: valgrind is not installed (apt-get install valgrind)")
        return {}
    folder = tempfile.mkdtemp(prefix="callgrind-")
    command = [
        "valgrind",
        "--tool=callgrind",
        "--instr-atstart=no",
        f"--callgrind-out-file={folder}/callgrind.%p",
        sys.executable,
        script,
        *arguments,
    ]
    try:
        subprocess.run(command, env={**os.environ, UNDER_CALLGRIND: folder}, check=True)
        return _dumps(Path(folder))
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def report(counts: dict[str, list[int]], clicks: int, bare: list[str], goal: float) -> None:
    """Instructions per click of each bot, round by round, and ours over each
    bare bot's (`bare`: their names) in the same rounds."""
    if not counts:
        return
    print(f"instructions per click under callgrind ({clicks} timed clicks per bot and round):")
    for name, totals in counts.items():
        line = f"{name:<10} " + "  ".join(f"{total / clicks:,.0f}" for total in totals)
        for base in bare:
            theirs = counts.get(base, [])
            if name not in bare and len(theirs) == len(totals):
                ratios = [ours / other for ours, other in zip(totals, theirs, strict=True)]
                low, high = min(ratios), max(ratios)
                shown = f"{low:.2f}" if len(ratios) == 1 else f"{low:.2f}-{high:.2f}"
                line += f"   /{base} {shown}"
        if name not in bare:
            line += f"   (goal <= {goal:g} of {bare[0]})"
        print(line)


def _dumps(folder: Path) -> dict[str, list[int]]:
    """The named dumps' totals, in the order they were made."""
    found: list[tuple[int, str, int]] = []
    for path in folder.iterdir():
        text = path.read_text(errors="replace")
        named = re.search(r"^desc: Trigger: dump (\S+)$", text, re.M)
        summary = re.search(r"^summary: (\d+)$", text, re.M)
        number = re.search(r"\.(\d+)$", path.name)  # callgrind.<pid>.<n>: the n-th dump
        if named is None or summary is None or number is None:
            continue  # the dump at exit, of nothing counted
        found.append((int(number.group(1)), named.group(1), int(summary.group(1))))
    counts: dict[str, list[int]] = {}
    for _, name, total in sorted(found):
        counts.setdefault(name, []).append(total)
    return counts
