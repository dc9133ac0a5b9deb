"""Aiken (Moodle's simplest format), read by our own small parser:

    What is 2 + 2?
    A. 3
    B) 4
    C)5
    ANSWER: B

A question is its first line (further lines before the first option continue
it), then lettered options, then `ANSWER: X`. A question that goes wrong is
skipped up to its ANSWER line or the next blank line, so one typo costs one
question, never the rest of the file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from bot.quiz.importers.result import Entry, Parsed, Skipped

# "A. text", "A) text" and, as Moodle reads it, "A)text"; never "A.text", so a
# continuation line such as "E.g. this" stays part of the question.
OPTION = re.compile(r"^([A-Za-z])\s*(?:[.)]\s+|\)\s*)(\S.*?)\s*$")
ANSWER = re.compile(r"^ANSWER\s*:\s*(.*?)\s*$", re.IGNORECASE)


@dataclass
class _Question:
    line: int
    prompt: list[str]
    letters: list[str] = field(default_factory=list)
    options: list[str] = field(default_factory=list)
    broken: str | None = None  # why it is skipped, once something went wrong


def _finish(question: _Question, answer: str) -> Entry | Skipped:
    where = f"line {question.line}"
    if question.broken:
        return Skipped(where, question.broken)
    if not question.options:
        return Skipped(where, "no options (A. … or A) …) before the ANSWER line")
    letter = answer.upper()
    if len(letter) != 1 or letter not in question.letters:
        return Skipped(
            where,
            f"ANSWER: {answer or '(nothing)'} names none of the options "
            f"{', '.join(question.letters)}",
        )
    prompt = " ".join(question.prompt)
    return Entry(where, prompt, question.options, question.letters.index(letter))


def parse(text: str, source: str) -> Parsed:
    parsed = Parsed()
    current: _Question | None = None
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if current is None:
            if not line:
                continue
            if ANSWER.match(line):
                parsed.skipped.append(Skipped(f"line {number}", "an ANSWER line with no question"))
                continue
            current = _Question(number, [line])
            continue
        if not line:  # a blank line ends the question, finished or not
            if current.broken is None:
                current.broken = f"no ANSWER line before the blank line {number}"
            parsed.skipped.append(Skipped(f"line {current.line}", current.broken))
            current = None
            continue
        answer = ANSWER.match(line)
        if answer:
            found = _finish(current, answer.group(1))
            if isinstance(found, Skipped):
                parsed.skipped.append(found)
            else:
                parsed.entries.append(found)
            current = None
            continue
        if current.broken:
            continue
        option = OPTION.match(line)
        if option:
            letter = option.group(1).upper()
            if letter in current.letters:
                current.broken = f"option {letter} appears twice (line {number})"
            else:
                current.letters.append(letter)
                current.options.append(option.group(2))
        elif current.options:
            current.broken = (
                f"line {number} is neither an option (A. … or A) …) nor an ANSWER: line"
            )
        else:
            current.prompt.append(line)
    if current is not None:
        reason = current.broken or "the file ends before this question's ANSWER line"
        parsed.skipped.append(Skipped(f"line {current.line}", reason))
    return parsed
