"""Question banks: the YAML format, its validation and loading.

A bad bank never stops the others from loading: `load_banks` returns the good
ones and a list of problems, each naming the file, question id and line. Files
over MAX_BANK_BYTES are refused unread and nesting deeper than MAX_DEPTH is
refused while parsing, so no bank file can exhaust memory or the stack.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterable
from dataclasses import dataclass, replace
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any
from urllib.parse import urlsplit

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    ValidationError,
    model_validator,
)

log = logging.getLogger(__name__)

LETTERS = "ABCDE"
# Taken by each community's bank of accepted submissions (bot/quiz/questions.py).
RESERVED_BANK = "community"
RESERVED_PREFIX = "community-"
# The tightest limits of the platforms we render to: Slack section text is
# 3000 characters, Discord buttons 80 (we put only letters on buttons, but the
# full option goes into the message body next to the prompt).
MAX_PROMPT = 1000
MAX_OPTION = 300
MAX_EXPLANATION = 1000
MAX_HINT = 300
MAX_IMAGE_ALT = 200
MAX_IMAGE_URL = 2000
# A bank of 1,000 questions is about 0.5 MB; anything far bigger is a mistake.
MAX_BANK_BYTES = 1_000_000
# Nodes from the root down: a bank needs 5 (bank, questions, question, options, text).
MAX_DEPTH = 20

# Control characters (terminal escapes: a title change, a line erase, a
# clipboard write) never reach a screen: removed as a bank is read, before the
# text is stripped and measured. Line breaks and tabs stay.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def _without_controls(value: object) -> object:
    """The value, its text and the text in its lists and mappings without
    control characters (a model's raw input, before its fields are checked)."""
    if isinstance(value, str):
        return _CONTROL.sub("", value)
    if isinstance(value, list):
        return [_without_controls(item) for item in value]
    if isinstance(value, dict):
        return {key: _without_controls(item) for key, item in value.items()}
    return value


Text = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1)]
# Lower-case words of any script joined by '-': 'world-capitals', 'физика', '物理'.
_TAG_WORD = r"[\p{Ll}\p{Lm}\p{Lo}\p{M}\p{Nd}]+"
TAG_PATTERN = rf"^{_TAG_WORD}(-{_TAG_WORD})*$"
IDENT_PATTERN = r"^[a-z0-9][a-z0-9_-]{0,63}$"
ANSWER_PATTERN = r"^[A-E]$"
# What each pattern asks for, in words: a bank author should not have to read a
# regular expression to fix a tag.
PATTERN_WORDS = {
    TAG_PATTERN: "a tag is lowercase words joined by single hyphens, like data-parallelism "
    "(any script)",
    IDENT_PATTERN: "an id is 1–64 lowercase letters, digits, - and _, starting with a letter "
    "or digit",
    ANSWER_PATTERN: "the answer is one capital letter, A to E",
}
Tag = Annotated[str, StringConstraints(pattern=TAG_PATTERN, max_length=40)]
Ident = Annotated[str, StringConstraints(pattern=IDENT_PATTERN)]


class Difficulty(StrEnum):
    EASY = "easy"
    MEDIUM = "medium"
    HARD = "hard"


class Question(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    @model_validator(mode="before")
    @classmethod
    def _printable(cls, data: Any) -> Any:
        return _without_controls(data)

    id: Ident = Field(description="Unique across all banks, e.g. pdt-01")
    prompt: Annotated[Text, StringConstraints(max_length=MAX_PROMPT)]
    options: list[Annotated[Text, StringConstraints(max_length=MAX_OPTION)]] = Field(
        min_length=2, max_length=5
    )
    answer: Annotated[str, StringConstraints(pattern=ANSWER_PATTERN)] = Field(
        description="Letter of the correct option, in the order options are listed"
    )
    explanation: Annotated[Text, StringConstraints(max_length=MAX_EXPLANATION)]
    tags: list[Tag] = Field(default_factory=list)
    difficulty: Difficulty = Difficulty.MEDIUM
    hint: Annotated[Text, StringConstraints(max_length=MAX_HINT)] | None = Field(
        default=None, description="Shown privately to a member who asks; halves their points"
    )
    image: (
        Annotated[str, StringConstraints(strip_whitespace=True, max_length=MAX_IMAGE_URL)] | None
    ) = Field(default=None, description="An https:// URL of a picture shown with the question")
    image_alt: Annotated[Text, StringConstraints(max_length=MAX_IMAGE_ALT)] | None = Field(
        default=None, description="What the picture shows, for screen readers (required with image)"
    )

    @model_validator(mode="after")
    def _consistent(self) -> Question:
        if len(set(self.options)) != len(self.options):
            raise ValueError("option texts must be unique")
        if LETTERS.index(self.answer) >= len(self.options):
            raise ValueError(
                f"answer {self.answer} names no option (there are {len(self.options)})"
            )
        if self.image is not None:
            if not _is_https_url(self.image):
                raise ValueError("image must be an https:// URL")
            if self.image_alt is None:
                raise ValueError(
                    "image needs image_alt: what the picture shows, for screen readers"
                )
        elif self.image_alt is not None:
            raise ValueError("image_alt is only for a question with an image")
        return self

    @property
    def true_false(self) -> bool:
        """Two options reading True and False (any case): their buttons say so."""
        return len(self.options) == 2 and {o.casefold() for o in self.options} == {"true", "false"}

    @property
    def answer_index(self) -> int:
        return LETTERS.index(self.answer)


def _is_https_url(url: str) -> bool:
    parts = urlsplit(url)
    return parts.scheme == "https" and bool(parts.netloc) and not any(c.isspace() for c in url)


class BankFile(BaseModel):
    """The schema of one bank file."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: Ident
    title: Annotated[Text, StringConstraints(max_length=100)]
    description: str = ""
    # The language its questions are written in (`de`, `pt_BR`): `/quiz start`
    # and daily questions draw from banks in the community's language first.
    language: Annotated[str, StringConstraints(pattern=r"^[a-z]{2,3}(_[A-Z]{2})?$")] = "en"
    questions: list[Question] = Field(min_length=1)

    @model_validator(mode="before")
    @classmethod
    def _printable(cls, data: Any) -> Any:
        return _without_controls(data)

    @model_validator(mode="after")
    def _unique_ids(self) -> BankFile:
        # The community banks (in the database) own this bank id and id prefix.
        if self.id == RESERVED_BANK:
            raise ValueError(f"bank id {RESERVED_BANK} is reserved for the community's own bank")
        seen: set[str] = set()
        for question in self.questions:
            if question.id in seen:
                raise ValueError(f"question id {question.id} appears twice")
            if question.id.startswith(RESERVED_PREFIX):
                raise ValueError(
                    f"question id {question.id}: ids starting {RESERVED_PREFIX} are reserved "
                    "for community questions"
                )
            seen.add(question.id)
        return self


@dataclass(frozen=True)
class Bank:
    id: str
    title: str
    description: str
    questions: tuple[Question, ...]
    path: Path
    language: str = "en"


@dataclass(frozen=True)
class BankProblem:
    path: Path
    message: str
    question_id: str | None = None
    line: int | None = None

    def __str__(self) -> str:
        where = str(self.path)
        if self.line is not None:
            where += f":{self.line}"
        if self.question_id:
            where += f" (question {self.question_id})"
        return f"{where}: {self.message}"


class Catalog:
    """Every loaded bank, with look-ups by question and bank id."""

    def __init__(self, banks: Iterable[Bank]) -> None:
        self.banks: dict[str, Bank] = {bank.id: bank for bank in banks}
        self._questions: dict[str, tuple[Bank, Question]] = {
            q.id: (bank, q) for bank in self.banks.values() for q in bank.questions
        }

    def question(self, question_id: str) -> Question | None:
        found = self._questions.get(question_id)
        return found[1] if found else None

    def bank_of(self, question_id: str) -> Bank | None:
        found = self._questions.get(question_id)
        return found[0] if found else None

    def tags(self) -> list[str]:
        return sorted({tag for _, q in self._questions.values() for tag in q.tags})

    def pool(
        self, bank: str | None = None, tag: str | None = None, language: str | None = None
    ) -> list[str]:
        """Question ids matching the filters, in a stable order. With `language`
        and no bank named, the banks in that language only, if any has a match."""
        banks = [b for b in self.banks.values() if bank is None or b.id == bank]
        if bank is None and language is not None:
            own = [b for b in banks if b.language == language]
            if any(tag is None or tag in q.tags for b in own for q in b.questions):
                banks = own
        return [q.id for b in banks for q in b.questions if tag is None or tag in q.tags]


class _TooDeep(Exception):
    def __init__(self, line: int) -> None:
        super().__init__(line)
        self.line = line


class _BankLoader(yaml.SafeLoader):
    """PyYAML composes nodes recursively, so a deeply nested file would raise
    RecursionError; this loader stops at MAX_DEPTH, long before the stack runs out."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._depth = 0

    def compose_node(self, parent: Any, index: Any) -> Any:
        self._depth += 1
        try:
            if self._depth > MAX_DEPTH:
                event: yaml.Event = self.peek_event()  # type: ignore[no-untyped-call]  # untyped stub
                mark = event.start_mark or self.get_mark()
                raise _TooDeep(mark.line + 1)
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


class NestedTooDeep(ValueError):
    """A YAML document nested deeper than MAX_DEPTH; `line` is where it went too deep."""

    def __init__(self, line: int) -> None:
        super().__init__(f"nested more than {MAX_DEPTH} levels deep (line {line})")
        self.line = line


def compose_yaml(text: str) -> yaml.Node | None:
    """The YAML node tree of `text`, safely and depth-limited, with line marks
    kept (importers report entries by line). Raises yaml.YAMLError or NestedTooDeep."""
    try:
        node: yaml.Node | None = yaml.compose(text, Loader=_BankLoader)
    except _TooDeep as exc:
        raise NestedTooDeep(exc.line) from None
    return node


def _question_lines(text: str) -> list[int]:
    """1-based line of each item under `questions:`, for error messages."""
    try:
        root = yaml.compose(text, Loader=_BankLoader)
    except (yaml.YAMLError, _TooDeep):
        return []
    if not isinstance(root, yaml.MappingNode):
        return []
    for key, value in root.value:
        if key.value == "questions" and isinstance(value, yaml.SequenceNode):
            return [item.start_mark.line + 1 for item in value.value]
    return []


def _problems_from(
    error: ValidationError, path: Path, raw: Any, lines: list[int]
) -> list[BankProblem]:
    problems = []
    for item in error.errors():
        loc = item["loc"]
        question_id = None
        line = None
        if len(loc) >= 2 and loc[0] == "questions" and isinstance(loc[1], int):
            index = loc[1]
            line = lines[index] if index < len(lines) else None
            questions = raw.get("questions") if isinstance(raw, dict) else None
            if isinstance(questions, list) and index < len(questions):
                entry = questions[index]
                if isinstance(entry, dict) and entry.get("id"):
                    question_id = str(entry["id"])
            field = ".".join(str(part) for part in loc[2:]) or "question"
        else:
            field = ".".join(str(part) for part in loc) or "bank"
        message = item["msg"].removeprefix("Value error, ")
        pattern = (item.get("ctx") or {}).get("pattern")
        if item["type"] == "string_pattern_mismatch" and pattern in PATTERN_WORDS:
            message = f"{item['input']!r} does not fit: {PATTERN_WORDS[pattern]}"
        problems.append(BankProblem(path, f"{field}: {message}", question_id, line))
    return problems


def _read_capped(path: Path) -> str:
    """The file's text; ValueError when it is over MAX_BANK_BYTES (read no further)."""
    with path.open("rb") as file:
        data = file.read(MAX_BANK_BYTES + 1)
    if len(data) > MAX_BANK_BYTES:
        raise ValueError(
            f"larger than {MAX_BANK_BYTES:,} bytes, the most a bank file may hold; "
            "split it into several files"
        )
    return data.decode("utf-8")


def parse_bank(path: Path) -> tuple[Bank | None, list[BankProblem]]:
    try:
        text = _read_capped(path)
    except UnicodeDecodeError as exc:
        return None, [BankProblem(path, f"cannot read: {exc}")]
    except ValueError as exc:
        return None, [BankProblem(path, str(exc))]
    except OSError as exc:
        return None, [BankProblem(path, f"cannot read: {exc.strerror or exc}")]
    return parse_bank_text(text, path)


def _yaml_problem(exc: yaml.YAMLError) -> tuple[int | None, str]:
    """The line to look at and the parser's reason. An unclosed quote or bracket
    is found only at the end of the file; the line to fix is where it opened
    (PyYAML's context mark), so that line leads and the end is named after."""
    problem = getattr(exc, "problem_mark", None)
    context = getattr(exc, "context_mark", None)
    reason = getattr(exc, "problem", None) or str(exc)
    opened = getattr(exc, "context", None)
    if context is not None and opened:
        if problem is not None and problem.line != context.line:
            reason = f"{opened} that starts here, {reason} (line {problem.line + 1})"
        else:
            reason = f"{opened}, {reason}"
        return context.line + 1, reason
    return (problem.line + 1 if problem is not None else None), reason


def parse_bank_text(text: str, path: Path) -> tuple[Bank | None, list[BankProblem]]:
    """The bank in `text` exactly as the loader reads a file; `path` names it in problems."""
    try:
        raw = yaml.load(text, Loader=_BankLoader)  # a SafeLoader
    except _TooDeep as exc:
        message = f"nested more than {MAX_DEPTH} levels deep; a bank needs only 5"
        return None, [BankProblem(path, message, line=exc.line)]
    except yaml.YAMLError as exc:
        line, reason = _yaml_problem(exc)
        return None, [BankProblem(path, f"not valid YAML: {reason}", line=line)]
    if not isinstance(raw, dict):
        return None, [BankProblem(path, "a bank must be a mapping with id, title and questions")]
    try:
        parsed = BankFile.model_validate(raw)
    except ValidationError as exc:
        return None, _problems_from(exc, path, raw, _question_lines(text))
    bank = Bank(
        parsed.id,
        parsed.title,
        parsed.description,
        tuple(parsed.questions),
        path,
        parsed.language,
    )
    return bank, []


def bank_files(paths: Iterable[Path]) -> list[Path]:
    files: list[Path] = []
    for path in paths:
        if path.is_dir():
            files.extend(sorted(p for p in path.iterdir() if p.suffix in (".yaml", ".yml")))
        else:
            files.append(path)
    return files


def load_banks(
    paths: Iterable[Path], *, log_problems: bool = True
) -> tuple[Catalog, list[BankProblem]]:
    """Load every bank file, reporting bad ones and cross-bank clashes.

    A bad file or a bank id already taken skips that file. A question id already
    taken skips only that question: the first file (in sorted order) keeps it."""
    banks: list[Bank] = []
    problems: list[BankProblem] = []
    bank_ids: set[str] = set()
    question_owner: dict[str, Path] = {}
    for path in bank_files(paths):
        bank, found = parse_bank(path)
        problems.extend(found)
        if bank is None:
            continue
        if bank.id in bank_ids:
            problems.append(BankProblem(path, f"bank id {bank.id} is already used by another file"))
            continue
        bank, clashes = _without_taken_questions(bank, question_owner)
        problems.extend(clashes)
        if not bank.questions:
            problems.append(BankProblem(path, "no questions left once the duplicates are skipped"))
            continue
        bank_ids.add(bank.id)
        question_owner.update({q.id: path for q in bank.questions})
        banks.append(bank)
    for problem in problems if log_problems else ():
        log.warning("question bank problem: %s", problem)
    return Catalog(banks), problems


def _without_taken_questions(bank: Bank, owner: dict[str, Path]) -> tuple[Bank, list[BankProblem]]:
    """The bank minus questions whose ids an earlier file uses, and one problem per skipped one."""
    taken = [q for q in bank.questions if q.id in owner]
    if not taken:
        return bank, []
    index_of = {q.id: i for i, q in enumerate(bank.questions)}
    try:
        lines = _question_lines(_read_capped(bank.path))
    except (OSError, ValueError):  # changed since it was parsed: report without lines
        lines = []
    problems = [
        BankProblem(
            bank.path,
            f"question id already used in {owner[q.id]}; this copy is skipped",
            q.id,
            lines[index_of[q.id]] if index_of[q.id] < len(lines) else None,
        )
        for q in taken
    ]
    kept = tuple(q for q in bank.questions if q.id not in owner)
    return replace(bank, questions=kept), problems


def json_schema() -> str:
    schema = BankFile.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "Quizmaster question bank"
    return json.dumps(schema, indent=2)


def export(catalog: Catalog) -> dict[str, Any]:
    return {
        "banks": [
            {
                "id": bank.id,
                "title": bank.title,
                "questions": [
                    {
                        "id": q.id,
                        "prompt": q.prompt,
                        "options": list(q.options),
                        "answer": q.answer_index,
                        "explanation": q.explanation,
                        "tags": list(q.tags),
                        "difficulty": q.difficulty.value,
                        **play_fields(q),
                    }
                    for q in bank.questions
                ],
            }
            for bank in catalog.banks.values()
        ]
    }


def play_fields(question: Question) -> dict[str, str]:
    """The optional hint and picture, as the export writes them (left out when unset)."""
    values = {"hint": question.hint, "image": question.image, "image_alt": question.image_alt}
    return {key: value for key, value in values.items() if value is not None}
