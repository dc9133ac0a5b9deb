"""GIFT (Moodle), the multiple-choice subset, read by our own small parser:

    // a comment
    ::Capital:: What is the capital of France? {
      =Paris#feedback shown as the explanation
      ~Lyon
      ~Marseille
    }
    The sky is blue. {T}

Questions are separated by blank lines, as in Moodle, so an unclosed `{`
costs only its own question. `\\~ \\= \\# \\{ \\} \\: \\\\` are literal characters and
`\\n` a line break. Numeric, matching, essay and short-answer questions, and
options with percentage weights, are reported and skipped. `$CATEGORY:` lines
become a tag of the questions after them.

Moodle's exports are HTML: a text that starts with `[html]` (or, with no
marker, one that contains tags or entities) becomes plain text with its line
breaks kept and its images reported and dropped; `[plain]` and `[markdown]`
texts are kept as written. Each option and feedback may carry its own marker
and otherwise takes the question's. `~=right` is read as `=right`, as Moodle
reads it, and the question's `####` general feedback is preferred over the
right answer's feedback as the explanation.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass

from bot.quiz.importers.markup import html_to_text, looks_like_html
from bot.quiz.importers.result import Entry, Parsed, Skipped

SPECIAL = "~=#{}:\\"
FORMAT_MARK = re.compile(r"^\s*\[(html|moodle|plain|markdown)\]", re.IGNORECASE)
WEIGHT = re.compile(r"^\s*%-?\d+(\.\d+)?%")
TRUE = ("T", "TRUE")
FALSE = ("F", "FALSE")
UNSUPPORTED = "only multiple-choice and true/false questions can be imported"


@dataclass(frozen=True)
class _Text:
    """Unescaped text that remembers which characters were escaped (so they are
    never syntax) and the source line of each character."""

    chars: str
    literal: tuple[bool, ...]
    lines: tuple[int, ...]

    @classmethod
    def read(cls, source: str, first_line: int) -> _Text:
        chars: list[str] = []
        literal: list[bool] = []
        lines: list[int] = []
        line = first_line
        i = 0
        while i < len(source):
            ch = source[i]
            nxt = source[i + 1] if i + 1 < len(source) else ""
            if ch == "\\" and nxt != "" and (nxt in SPECIAL or nxt == "n"):
                chars.append("\n" if nxt == "n" else nxt)
                literal.append(True)
                i += 2
            else:
                chars.append(ch)
                literal.append(False)
                i += 1
            lines.append(line)
            if ch == "\n":
                line += 1
        return cls("".join(chars), tuple(literal), tuple(lines))

    def find(self, token: str, start: int = 0, end: int | None = None) -> int:
        """Index of the first unescaped `token` in [start, end), or -1."""
        stop = len(self.chars) if end is None else end
        at = self.chars.find(token, start, stop)
        while at != -1 and any(self.literal[at : at + len(token)]):
            at = self.chars.find(token, at + 1, stop)
        return at

    def split(self, start: int, end: int, marks: str) -> list[tuple[str, str]]:
        """[start, end) cut before each unescaped character in `marks`: (mark, text) pairs;
        text before the first mark comes with mark ''."""
        pieces: list[tuple[str, str]] = []
        mark = ""
        begin = start
        for i in range(start, end):
            if self.chars[i] in marks and not self.literal[i]:
                pieces.append((mark, self.chars[begin:i]))
                mark = self.chars[i]
                begin = i + 1
        pieces.append((mark, self.chars[begin:end]))
        return pieces


def _chunks(text: str) -> list[tuple[int, str]]:
    """(first line, text) of each blank-line separated block; `//` comment lines dropped."""
    chunks: list[tuple[int, str]] = []
    first = 0
    block: list[str] = []
    for number, line in enumerate(text.splitlines(), 1):
        if line.lstrip().startswith("//"):
            continue
        if not line.strip():
            if block:
                chunks.append((first, "\n".join(block)))
                block = []
            continue
        if not block:
            first = number
        block.append(line)
    if block:
        chunks.append((first, "\n".join(block)))
    return chunks


def _feedback(text: _Text, start: int, end: int) -> tuple[str, str]:
    """An answer's text and its `#feedback`."""
    cut = text.find("#", start, end)
    if cut == -1:
        return text.chars[start:end], ""
    return text.chars[start:cut], text.chars[cut + 1 : end]


def _answers(text: _Text, start: int, end: int, where: str, prompt: str) -> Entry | Skipped:
    """The question from the answer block text.chars[start:end]."""
    body = text.chars[start:end]
    general = text.find("####", start, end)
    explanation = ""
    if general != -1:
        explanation = text.chars[general + 4 : end]
        end = general
        body = text.chars[start:end]
    if not body.strip():
        return Skipped(where, f"an essay question (empty answer block): {UNSUPPORTED}")
    first = start + len(body) - len(body.lstrip())
    if text.chars[first] == "#" and not text.literal[first]:
        return Skipped(where, f"a numeric question ({{#…}}): {UNSUPPORTED}")
    head, _ = _feedback(text, start, end)
    marks = text.find("=", start, end) != -1 or text.find("~", start, end) != -1
    if head.strip().upper() in TRUE + FALSE and not marks:
        # {T#feedback for a wrong answer#feedback for a right one}
        wrong_cut = text.find("#", start, end)
        right_cut = text.find("#", wrong_cut + 1, end) if wrong_cut != -1 else -1
        right_feedback = text.chars[right_cut + 1 : end] if right_cut != -1 else ""
        answer = 0 if head.strip().upper() in TRUE else 1
        return Entry(where, prompt, ["True", "False"], answer, explanation or right_feedback)
    pieces = text.split(start, end, "=~")
    lead, items = pieces[0], pieces[1:]
    if lead[1].strip():
        return Skipped(where, "text before the first = or ~ in the answer block")
    if not items:
        return Skipped(where, "no answers (=right ~wrong) in the answer block")
    options: list[str] = []
    right: list[int] = []
    right_feedback = ""
    offset = start + len(lead[1])
    for number, (mark, raw) in enumerate(items):
        item_start = offset + 1
        offset = item_start + len(raw)
        following = items[number + 1][0] if number + 1 < len(items) else ""
        if mark == "~" and following == "=" and not raw.strip():
            continue  # "~=right": Moodle reads it as "=right"
        if WEIGHT.match(raw):
            return Skipped(where, f"options with % weights: {UNSUPPORTED}")
        if text.find("->", item_start, offset) != -1:
            return Skipped(where, f"a matching question (->): {UNSUPPORTED}")
        option, feedback = _feedback(text, item_start, offset)
        if not option.strip():
            return Skipped(where, "an empty answer in the answer block")
        if mark == "=":
            right.append(len(options))
            right_feedback = feedback
        options.append(option)
    if len(right) == len(options):
        return Skipped(where, f"a short-answer question (only = answers): {UNSUPPORTED}")
    if not right:
        return Skipped(where, "no right answer (=) in the answer block")
    if len(right) > 1:
        return Skipped(where, "more than one right answer (=); a bank question has one")
    return Entry(where, prompt, options, right[0], explanation.strip() or right_feedback)


def _question(first_line: int, chunk: str, tags: list[str], images: list[str]) -> Entry | Skipped:
    where = f"line {first_line}"
    text = _Text.read(chunk, first_line)
    start = 0
    lead = len(text.chars) - len(text.chars.lstrip())
    if text.find("::") == lead:
        closing = text.find("::", lead + 2)
        if closing == -1:
            return Skipped(where, "the ::title:: is never closed")
        start = closing + 2
    opening = text.find("{", start)
    if opening == -1:
        return Skipped(where, "no answer block {…}: a description, not a question")
    closing = text.find("}", opening + 1)
    nested = text.find("{", opening + 1, closing if closing != -1 else None)
    if nested != -1:
        return Skipped(
            where,
            f"a second {{ on line {text.lines[nested]} inside the answer block "
            "(write \\{ for a literal brace)",
        )
    if closing == -1:
        return Skipped(where, f"the {{ on line {text.lines[opening]} is never closed")
    if text.find("{", closing + 1) != -1:
        return Skipped(where, "more than one answer block {…}")
    head = text.chars[start:opening]
    marker = FORMAT_MARK.match(head)
    style = marker.group(1).lower() if marker else "moodle"
    before = _render(FORMAT_MARK.sub("", head), style, images)
    after = _render(text.chars[closing + 1 :], style, images)
    # "Gandhi was born on {~1st =2nd} October": the blank marks the missing word.
    prompt = f"{before} _____ {after}".strip() if after else before
    if not prompt:
        return Skipped(where, "no question text before the answer block")
    found = _answers(text, opening + 1, closing, where, prompt)
    if isinstance(found, Skipped):
        return found
    return dataclasses.replace(
        found,
        options=[_render(option, style, images) for option in found.options],
        explanation=_render(found.explanation, style, images),
        tags=tags or found.tags,
    )


def _render(raw: str, style: str, images: list[str]) -> str:
    """A text as plain text: its own [format] marker, else the question's `style`.
    HTML is converted (images added to `images`); plain and markdown are kept."""
    marker = FORMAT_MARK.match(raw)
    if marker:
        style = marker.group(1).lower()
        raw = raw[marker.end() :]
    if style == "html" or (style == "moodle" and looks_like_html(raw)):
        text, dropped = html_to_text(raw)
        images.extend(dropped)
        return text
    return raw.strip()


def parse(text: str, source: str) -> Parsed:
    parsed = Parsed()
    tags: list[str] = []
    for first_line, chunk in _chunks(text):
        lines = chunk.split("\n")
        while lines and lines[0].strip().upper().startswith("$CATEGORY:"):
            category = lines.pop(0).split(":", 1)[1].strip().rstrip("/")
            tags = [category.rsplit("/", 1)[-1]] if category else []
            first_line += 1
        if not lines:
            continue
        images: list[str] = []
        found = _question(first_line, "\n".join(lines), tags, images)
        for image in images:
            parsed.notes.append(
                f"line {first_line}: the image {image} was dropped (a bank holds text only)"
            )
        if isinstance(found, Skipped):
            parsed.skipped.append(found)
        else:
            parsed.entries.append(found)
    return parsed
