"""What every importer produces: entries read from the source file, the ones it
skipped (with where and why), and notes for the report."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from bot.quiz.bank import BankFile


class ImportFailed(Exception):
    """The whole file cannot be imported (unreadable, not the format, too big)."""


class BadArguments(ImportFailed):
    """The command's arguments are unusable (format, bank id, title): nothing was read."""


@dataclass(frozen=True)
class Entry:
    """One question as the source file gives it, not yet checked against the bank schema."""

    where: str  # "line 12" or "results[3]": how the report names it
    prompt: str
    options: Sequence[str]
    answer: int  # index into options
    explanation: str = ""
    tags: Sequence[str] = ()
    difficulty: str | None = None  # None: the bank's default
    # Only formats that carry them (our own JSON export, a CSV `hint` column).
    hint: str | None = None
    image: str | None = None
    image_alt: str | None = None


@dataclass(frozen=True)
class Skipped:
    where: str
    reason: str

    def __str__(self) -> str:
        return f"{self.where}: {self.reason}"


@dataclass
class Parsed:
    """A parser's result, before the entries become bank questions."""

    entries: list[Entry] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    title: str | None = None  # a title the file suggests, used without --title
    description: str = ""


@dataclass(frozen=True)
class ImportResult:
    bank: BankFile | None  # None when no entry could be imported
    yaml_text: str  # the bank file; empty when bank is None
    skipped: Sequence[Skipped]
    notes: Sequence[str]

    @property
    def imported(self) -> int:
        return len(self.bank.questions) if self.bank else 0
