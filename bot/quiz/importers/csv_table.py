"""CSV with a header row, read with the standard csv module:

    prompt,option_a,option_b,option_c,option_d,option_e,answer,explanation,tags

`answer` is the letter of its option column; an empty option cell is no option
(so the letter still names the column). `tags` are separated by `;` or spaces.
`difficulty` and a `hint` may be given too. The delimiter is whichever of `, ; tab` the
header uses most, for spreadsheets that save with semicolons.
"""

from __future__ import annotations

import csv
import io
import re

from bot.quiz.importers.result import Entry, ImportFailed, Parsed, Skipped

OPTION_COLUMNS = [f"option_{letter}" for letter in "abcde"]
REQUIRED = ("prompt", "option_a", "option_b", "answer")
KNOWN = {"prompt", *OPTION_COLUMNS, "answer", "explanation", "tags", "difficulty", "hint"}


def _delimiter(header: str) -> str:
    return max(",;\t", key=header.count)


def _entry(where: str, row: dict[str, str]) -> Entry | Skipped:
    letter = row.get("answer", "").strip().upper()
    if len(letter) != 1 or letter not in "ABCDE":
        return Skipped(where, f"answer must be a letter A to E, not {row.get('answer', '')!r}")
    cells = [row.get(column, "").strip() for column in OPTION_COLUMNS]
    right = cells["ABCDE".index(letter)]
    if not right:
        return Skipped(where, f"answer {letter} names an empty option cell")
    options = [cell for cell in cells if cell]
    difficulty = row.get("difficulty", "").strip().lower() or None
    return Entry(
        where,
        row.get("prompt", ""),
        options,
        options.index(right),
        explanation=row.get("explanation", ""),
        tags=[t for t in re.split(r"[;\s]+", row.get("tags", "")) if t],
        difficulty=difficulty,
        hint=row.get("hint") or None,
    )


def parse(text: str, source: str) -> Parsed:
    header_line = text.lstrip("\n").split("\n", 1)[0]
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=_delimiter(header_line))
    parsed = Parsed()
    header: list[str] | None = None
    try:
        for first in reader:  # the first row that is not blank
            if any(cell.strip() for cell in first):
                header = first
                break
    except csv.Error as exc:
        raise ImportFailed(f"the header row is not valid CSV: {exc}") from None
    if header is None:
        raise ImportFailed("no header row")
    columns = [cell.strip().lower() for cell in header]
    missing = [name for name in REQUIRED if name not in columns]
    if missing:
        raise ImportFailed(
            f"the header row lacks {', '.join(missing)}; it must name "
            "prompt, option_a … option_e, answer, explanation and tags"
        )
    unknown = [name for name in columns if name and name not in KNOWN]
    if unknown:
        parsed.notes.append(f"columns not imported: {', '.join(unknown)}")
    while True:
        line = reader.line_num + 1
        try:
            cells = next(reader)
        except StopIteration:
            break
        except csv.Error as exc:
            parsed.skipped.append(
                Skipped(f"line {line}", f"not valid CSV ({exc}); the rest of the file is not read")
            )
            break
        if not any(cell.strip() for cell in cells):
            continue
        if len(cells) > len(columns):
            parsed.skipped.append(
                Skipped(f"line {line}", f"{len(cells)} cells but the header names {len(columns)}")
            )
            continue
        row = dict(zip(columns, cells, strict=False))
        found = _entry(f"line {line}", row)
        if isinstance(found, Skipped):
            parsed.skipped.append(found)
        else:
            parsed.entries.append(found)
    return parsed
