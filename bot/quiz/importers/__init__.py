"""Turning other quiz formats into one bank file: one module per format, each a
`parse(text, source) -> Parsed`; `import_file` reads the file, runs the parser and
builds the bank (bot/quiz/importers/build.py)."""

from __future__ import annotations

import codecs
import re
from collections.abc import Callable
from functools import partial
from pathlib import Path

from pydantic import TypeAdapter, ValidationError

from bot.quiz.bank import Ident
from bot.quiz.importers import aiken, csv_table, gift, opentdb, own_json, provenance, red
from bot.quiz.importers.build import build_bank, clean_line
from bot.quiz.importers.field_encoding import ENCODINGS
from bot.quiz.importers.result import BadArguments, ImportFailed, ImportResult, Parsed, Skipped
from bot.quiz.importers.source import MAX_IMPORT_BYTES, read_source

__all__ = [
    "ENCODINGS",
    "FORMATS",
    "MAX_IMPORT_BYTES",
    "BadArguments",
    "ImportFailed",
    "ImportResult",
    "Skipped",
    "import_file",
]

Parser = Callable[[str, str], Parsed]

# name -> (parser, how the bank description names the format)
FORMATS: dict[str, tuple[Parser, str]] = {
    "opentdb": (opentdb.parse, "Open Trivia DB JSON"),
    "aiken": (aiken.parse, "Aiken"),
    "gift": (gift.parse, "GIFT"),
    "csv": (csv_table.parse, "CSV"),
    "red": (red.parse, "Red-DiscordBot trivia list"),
    "json": (own_json.parse, "Quizmaster JSON export"),
}
MAX_TITLE = 100


def _title_from(path: Path) -> str:
    words = re.sub(r"[_\-\s]+", " ", path.stem).strip()
    return (words[:1].upper() + words[1:]) or "Imported questions"


def import_file(
    path: Path,
    format: str,
    bank_id: str,
    title: str | None = None,
    encoding: str = "utf-8",
    field_encoding: str = "auto",
) -> ImportResult:
    """The bank made of every importable question in `path`. ImportFailed when the
    arguments or the file as a whole are unusable. `encoding` is the file's text
    encoding; `field_encoding` how Open Trivia DB encoded each field in it."""
    if format not in FORMATS:
        raise BadArguments(f"unknown format {format!r}; use one of {', '.join(FORMATS)}")
    if field_encoding not in ENCODINGS:
        raise BadArguments(
            f"unknown field encoding {field_encoding!r}; use one of {', '.join(ENCODINGS)}"
        )
    if field_encoding != "auto" and format != "opentdb":
        raise BadArguments("--field-encoding applies only to --format opentdb")
    try:
        TypeAdapter(Ident).validate_python(bank_id)
    except ValidationError:
        raise BadArguments(
            f"bank id {bank_id!r} must be 1–64 lowercase letters, digits, - or _, "
            "starting with a letter or digit"
        ) from None
    try:
        codecs.lookup(encoding)
    except LookupError:
        raise BadArguments(f"unknown encoding {encoding!r}") from None
    if title is not None and not clean_line(title):
        raise BadArguments("the title is empty")
    parse, format_name = FORMATS[format]
    if format == "opentdb":
        parse = partial(opentdb.parse, field_encoding=field_encoding)
    text = read_source(path, encoding)
    parsed = parse(text, path.name)
    chosen = clean_line(title or parsed.title or _title_from(path))
    if len(chosen) > MAX_TITLE:
        if title is not None:
            raise BadArguments(f"the title is {len(chosen)} characters; at most {MAX_TITLE}")
        chosen = chosen[: MAX_TITLE - 1].rstrip() + "…"
    description = parsed.description or provenance.imported_description(path.name, format_name)
    header = f"# Imported from {path.name} ({format_name}) by `quizmaster questions import`.\n"
    return build_bank(parsed, bank_id, chosen, description, header)
