"""How to name this program in a hint so that it works as typed."""

from __future__ import annotations

import os
import shutil
import sys
from functools import cache


@cache
def program() -> str:
    """`quizmaster` when that is what the shell finds; else the path this run was
    started by (`make run` starts .venv/bin/quizmaster, which is not on PATH)."""
    started = sys.argv[0] if sys.argv else ""
    if os.path.basename(started) != "quizmaster":
        return "quizmaster"  # `python -m bot` and the tests: the plain name
    found = shutil.which("quizmaster")
    if found and os.path.realpath(found) == os.path.realpath(started):
        return "quizmaster"
    return os.path.relpath(started) if not os.path.isabs(started) else started
