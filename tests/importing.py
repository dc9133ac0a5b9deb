"""Helpers for the import tests: write a source file, import it, and load the
result with the loader the bot itself uses."""

from __future__ import annotations

from pathlib import Path

from bot.quiz.bank import Bank, load_banks
from bot.quiz.importers import ImportResult, import_file

BANK_ID = "imported"


def run_import(
    tmp_path: Path,
    name: str,
    content: str | bytes,
    format: str,
    *,
    title: str | None = None,
    encoding: str = "utf-8",
    bank_id: str = BANK_ID,
) -> ImportResult:
    source = tmp_path / name
    if isinstance(content, bytes):
        source.write_bytes(content)
    else:
        source.write_text(content, encoding="utf-8", newline="")
    return import_file(source, format, bank_id, title, encoding)


def load_back(tmp_path: Path, result: ImportResult) -> Bank:
    """The imported bank as `quizmaster run` would load it from its folder."""
    assert result.bank is not None, result.skipped
    folder = tmp_path / "banks"
    folder.mkdir(exist_ok=True)
    (folder / f"{result.bank.id}.yaml").write_text(result.yaml_text, encoding="utf-8")
    catalog, problems = load_banks([folder], log_problems=False)
    assert problems == []
    return catalog.banks[result.bank.id]


def skipped_at(result: ImportResult) -> dict[str, str]:
    return {item.where: item.reason for item in result.skipped}


def right_option(bank: Bank, index: int) -> str:
    question = bank.questions[index]
    return question.options[question.answer_index]
