"""CSV with a header row, read with the standard csv module:

    prompt,option_a,option_b,option_c,option_d,option_e,answer,explanation,tags

or the layouts public quiz apps export (`question,A,B,C,D,correct_answer`,
`question,option1,...,option4,answer`; bot/quiz/importers/csv_columns.py has
every name). The answer is the letter of its option column, its number from 1,
or the option's own text; an empty option cell is no option (so a letter still
names its column). `tags` are separated by `;` or spaces. `difficulty` may be
given too. The delimiter is whichever of `, ; tab` the header uses most, for
spreadsheets that save with semicolons. A `hint` column is read too.
"""

from __future__ import annotations

import csv
import io
import re

from bot.quiz.importers.csv_columns import LETTERS, Columns, read_header
from bot.quiz.importers.result import Entry, ImportFailed, Parsed, Skipped


def _delimiter(header: str) -> str:
    return max(",;\t", key=header.count)


def _slot(value: str, cells: list[str]) -> int | str:
    """The option slot the answer cell names, or why it names none."""
    text = value.strip()
    by_text = [
        slot for slot, cell in enumerate(cells) if cell and cell.casefold() == text.casefold()
    ]
    by_label: int | None = None
    if len(text) == 1 and text.upper() in LETTERS:
        by_label = LETTERS.index(text.upper())
    elif text.isdigit() and 1 <= int(text) <= len(LETTERS):
        by_label = int(text) - 1
    if by_label is not None and by_text and by_text != [by_label]:
        return (
            f"answer {text!r} is ambiguous: option {LETTERS[by_label]} by position, "
            f"but it is also the text of option {LETTERS[by_text[0]]}"
        )
    if by_label is not None:
        return by_label
    if len(by_text) == 1:
        return by_text[0]
    return (
        f"answer {value!r} is neither a letter A to E, an option number 1 to 5 "
        "nor the text of one option"
    )


def _entry(where: str, cells: list[str], columns: Columns) -> Entry | Skipped:
    def cell(role: str) -> str:
        index = columns.roles.get(role)
        return cells[index] if index is not None and index < len(cells) else ""

    slots = [
        cells[columns.options[slot]].strip()
        if slot in columns.options and columns.options[slot] < len(cells)
        else ""
        for slot in range(len(LETTERS))
    ]
    found = _slot(cell("answer"), slots)
    if isinstance(found, str):
        return Skipped(where, found)
    right = slots[found]
    if not right:
        return Skipped(where, f"answer {LETTERS[found]} names an empty option cell")
    options = [option for option in slots if option]
    difficulty = cell("difficulty").strip().lower() or None
    return Entry(
        where,
        cell("prompt"),
        options,
        options.index(right),
        explanation=cell("explanation"),
        tags=[t for t in re.split(r"[;\s]+", cell("tags")) if t],
        difficulty=difficulty,
        hint=cell("hint").strip() or None,
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
    columns = read_header(header)
    if columns.unused:
        parsed.notes.append(f"columns not imported: {', '.join(columns.unused)}")
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
        if len(cells) > len(header):
            parsed.skipped.append(
                Skipped(f"line {line}", f"{len(cells)} cells but the header names {len(header)}")
            )
            continue
        found = _entry(f"line {line}", cells, columns)
        if isinstance(found, Skipped):
            parsed.skipped.append(found)
        else:
            parsed.entries.append(found)
    return parsed
