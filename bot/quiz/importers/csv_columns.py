"""Which CSV column holds what: our own header names and the ones public quiz
apps and spreadsheets use (`question`, `A`..`E`, `option1`..`option5`,
`correct_answer`, `feedback`, `category`...). Names are compared without case,
spaces, dashes or underscores, so `Correct Answer` is `correct_answer`."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TypeVar

from bot.quiz.importers.result import ImportFailed

LETTERS = "ABCDE"
_ROLES: dict[str, set[str]] = {
    "prompt": {"prompt", "question", "questiontext", "stem"},
    "answer": {"answer", "correct", "correctanswer", "correctoption", "rightanswer", "key"},
    "explanation": {"explanation", "feedback", "rationale", "reason"},
    "tags": {"tags", "tag", "category", "categories", "topic"},
    "difficulty": {"difficulty", "level"},
    "hint": {"hint", "clue"},
}
# Option columns by position: option_a / a / choice_a, or option1 / choice1 / answer1.
_OPTIONS: dict[str, int] = {}
for _slot, (_letter, _digit) in enumerate(zip("abcde", "12345", strict=True)):
    for _prefix in ("option", "choice", ""):
        _OPTIONS[f"{_prefix}{_letter}"] = _slot
    for _prefix in ("option", "choice", "answer"):
        _OPTIONS[f"{_prefix}{_digit}"] = _slot


def _key(name: str) -> str:
    return re.sub(r"[\s_\-.]+", "", name.strip().lower())


@dataclass
class Columns:
    """The column index of each role and of each option slot (0 = A)."""

    roles: dict[str, int] = field(default_factory=dict)
    options: dict[int, int] = field(default_factory=dict)
    unused: list[str] = field(default_factory=list)


K = TypeVar("K")


def _claim(taken: dict[K, int], what: K, index: int, header: list[str], name: str) -> None:
    if what in taken:
        first = header[taken[what]].strip()
        raise ImportFailed(
            f"the columns {first!r} and {header[index].strip()!r} both name the {name}; "
            "rename or remove one of them"
        )
    taken[what] = index


def read_header(header: list[str]) -> Columns:
    """The roles of `header`'s columns; ImportFailed when a role has two columns
    or a needed one is missing."""
    columns = Columns()
    for index, cell in enumerate(header):
        key = _key(cell)
        role = next((r for r, names in _ROLES.items() if key in names), None)
        if role is not None:
            _claim(columns.roles, role, index, header, role)
        elif key in _OPTIONS:
            slot = _OPTIONS[key]
            _claim(columns.options, slot, index, header, f"option {LETTERS[slot]}")
        elif key:
            columns.unused.append(cell.strip())
    missing = [] if "prompt" in columns.roles else ["prompt"]
    if len(columns.options) < 2:
        absent = [f"option_{LETTERS[s].lower()}" for s in range(5) if s not in columns.options]
        missing += absent[: 2 - len(columns.options)]
    if "answer" not in columns.roles:
        missing.append("answer")
    if missing:
        raise ImportFailed(
            f"the header row lacks {', '.join(missing)}; it must name the prompt (or question), "
            "the options (option_a … option_e, A … E or option1 … option5), the answer "
            "(or correct_answer) and may name explanation, tags, difficulty and hint"
        )
    return columns
