"""Turning parsed entries into one bank: cleaned text, fresh ids, every question
checked by the bank schema, and the YAML checked by the loader the bot uses."""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from bot.quiz.bank import MAX_BANK_BYTES, BankFile, Question, parse_bank_text
from bot.quiz.importers import provenance
from bot.quiz.importers.result import Entry, ImportFailed, ImportResult, Parsed, Skipped

MIN_OPTIONS = 2
MAX_OPTIONS = 5
MAX_TAG = 40


class _Dumper(yaml.SafeDumper):
    """Lists indented under their key, as the hand-written banks are."""

    def increase_indent(self, flow: bool = False, indentless: bool = False) -> None:
        super().increase_indent(flow, False)


def _text(dumper: yaml.SafeDumper, text: str) -> yaml.ScalarNode:
    """Texts of several lines as literal blocks, readable in the file."""
    style = "|" if "\n" in text else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", text, style=style)


_Dumper.add_representer(str, _text)


def clean_text(text: str) -> str:
    """Control characters removed, each line trimmed, no runs of blank lines."""
    text = "".join(
        ch for ch in text if ch in "\n\t" or unicodedata.category(ch) not in ("Cc", "Cs")
    )
    lines = [line.replace("\t", " ").strip() for line in text.splitlines()]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()


def clean_line(text: str) -> str:
    """clean_text on one line: options and titles never span lines."""
    return " ".join(clean_text(text).split())


def slug(text: str) -> str:
    """A tag from free text: 'Entertainment: Video Games' -> 'entertainment-video-games'."""
    normal = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    tag = re.sub(r"[^a-z0-9]+", "-", normal.lower()).strip("-")
    if len(tag) > MAX_TAG:
        tag = tag[:MAX_TAG].rsplit("-", 1)[0] if "-" in tag[:MAX_TAG] else tag[:MAX_TAG]
    return tag


def _schema_problem(error: ValidationError) -> str:
    parts = []
    for item in error.errors():
        field = ".".join(str(part) for part in item["loc"]) or "question"
        parts.append(f"{field}: {item['msg'].removeprefix('Value error, ')}")
    return "; ".join(parts)


def _question(entry: Entry, question_id: str, default_explanation: str) -> dict[str, Any]:
    options = [clean_line(option) for option in entry.options]
    tags = list(dict.fromkeys(t for t in (slug(tag) for tag in entry.tags) if t))
    raw: dict[str, Any] = {
        "id": question_id,
        "prompt": clean_text(entry.prompt),
        "options": options,
        "answer": "ABCDE"[entry.answer] if 0 <= entry.answer < MAX_OPTIONS else "?",
        "explanation": clean_text(entry.explanation) or default_explanation,
        "tags": tags,
    }
    if entry.difficulty is not None:
        raw["difficulty"] = entry.difficulty
    if entry.hint and entry.hint.strip():
        raw["hint"] = clean_text(entry.hint)
    if entry.image is not None or entry.image_alt is not None:
        # Checked by the schema: an https URL, with its alt text.
        raw["image"] = entry.image
        raw["image_alt"] = clean_line(entry.image_alt) if entry.image_alt else None
    return raw


def _ids(bank_id: str, count: int) -> list[str]:
    """`<bank>-001` …, the prefix cut so every id stays within the 64 characters allowed."""
    width = max(3, len(str(count)))
    prefix = bank_id[: 64 - 1 - width]
    return [f"{prefix}-{n:0{width}d}" for n in range(1, count + 1)]


def build_bank(
    parsed: Parsed, bank_id: str, title: str, description: str, header: str
) -> ImportResult:
    """Every entry that passes the bank schema becomes a question; the others are
    added to the skipped list with the schema's reason."""
    skipped = list(parsed.skipped)
    kept: list[tuple[Entry, dict[str, Any]]] = []
    seen: dict[tuple[str, frozenset[str]], str] = {}
    ids = _ids(bank_id, len(parsed.entries))
    for entry in parsed.entries:
        count = len(entry.options)
        if not MIN_OPTIONS <= count <= MAX_OPTIONS:
            reason = f"{count} option(s); a bank question has {MIN_OPTIONS} to {MAX_OPTIONS}"
            skipped.append(Skipped(entry.where, reason))
            continue
        if not 0 <= entry.answer < count:
            skipped.append(Skipped(entry.where, "the right answer names no option"))
            continue
        answer = clean_line(entry.options[entry.answer])
        raw = _question(entry, ids[len(kept)], provenance.imported_explanation(answer))
        try:
            question = Question.model_validate(raw)
        except ValidationError as error:
            skipped.append(Skipped(entry.where, _schema_problem(error)))
            continue
        key = (question.prompt.casefold(), frozenset(o.casefold() for o in question.options))
        if key in seen:
            skipped.append(Skipped(entry.where, f"the same question as {seen[key]}"))
            continue
        seen[key] = entry.where
        kept.append((entry, question.model_dump(mode="json", exclude_none=True)))
    skipped.sort(key=_order)
    if not kept:
        return ImportResult(None, "", skipped, parsed.notes)
    document = {
        "id": bank_id,
        "title": title,
        "description": description,
        "questions": [question for _, question in kept],
    }
    try:
        bank = BankFile.model_validate(document)
    except ValidationError as error:
        raise ImportFailed(_schema_problem(error)) from None
    text = header + yaml.dump(
        document, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=100
    )
    _check_loadable(text)
    return ImportResult(bank, text, skipped, parsed.notes)


def _order(skipped: Skipped) -> tuple[int, ...]:
    """Skipped entries in file order: by the numbers in where they are (line, index)."""
    return tuple(int(number) for number in re.findall(r"\d+", skipped.where))


def _check_loadable(text: str) -> None:
    """The bank must load exactly as the bot will load it."""
    size = len(text.encode("utf-8"))
    if size > MAX_BANK_BYTES:
        raise ImportFailed(
            f"the bank would be {size:,} bytes, more than the {MAX_BANK_BYTES:,} a bank file "
            "may hold; split the input into several files"
        )
    _, problems = parse_bank_text(text, Path("<imported bank>"))
    if problems:  # a bug here, not the user's: say so plainly
        raise ImportFailed("the imported bank does not load: " + "; ".join(map(str, problems)))
