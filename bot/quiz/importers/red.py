"""Red-DiscordBot trivia lists: YAML mapping each question to its accepted answers.

    AUTHOR: someone
    DESCRIPTION: What the list is about
    What is the capital of France?:
    - Paris
    - paris, france

The keys Red treats as the list's metadata (AUTHOR, DESCRIPTION, CONFIG and
$schema) are never questions. A key written twice is one question, with the
answers of its last copy, as Red's own loader does; the earlier copy is
reported. Red's players type answers, so its questions have no wrong options.
Each imported question gets up to three wrong options drawn from the first
answers of the other questions in the same list, numbers for a number and
words for words where the list has enough of them, never an answer too long
to be an option and never one Red's matcher would accept as right. The draw
is seeded by the question text, so the same list always gives the same bank,
and it looks at a few candidates per question, so a big list takes linear time.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from dataclasses import dataclass

import yaml

from bot.quiz.bank import MAX_OPTION, NestedTooDeep
from bot.quiz.importers import provenance
from bot.quiz.importers.build import clean_line, clean_text
from bot.quiz.importers.opentdb import place_answer
from bot.quiz.importers.red_match import red_accepts
from bot.quiz.importers.result import Entry, ImportFailed, Parsed, Skipped
from bot.quiz.importers.yaml_nodes import compose_fast

DISTRACTORS = 3
# Random candidates tried per question before the pool is walked in order.
ATTEMPTS = 8 * DISTRACTORS
NUMBER = re.compile(r"^[-+]?\d[\d,.\s]*$")
NOTE = (
    "Red-DiscordBot lists have no wrong options: each question's wrong options were "
    "drawn from other questions' answers in this list (the same list always gives the "
    "same options). Read them through: a drawn answer may be right as well."
)


@dataclass(frozen=True)
class _Question:
    line: int
    prompt: str
    accepted: list[str]
    shown: str  # the accepted answer that becomes the right option


@dataclass
class _Meta:
    author: str | None = None
    description: str = ""


def _scalar(node: yaml.Node) -> str | None:
    return str(node.value).strip() if isinstance(node, yaml.ScalarNode) else None


def _metadata(key: str, value: yaml.Node, meta: _Meta, parsed: Parsed) -> bool:
    """True when `key` is one of the keys Red reads as the list's metadata."""
    if key == "AUTHOR":
        meta.author = _scalar(value)
    elif key == "DESCRIPTION":
        meta.description = clean_text(_scalar(value) or "")
    elif key == "CONFIG":
        parsed.notes.append("the list's CONFIG (Red's game settings) is not imported")
    elif key != "$schema":
        return False
    return True


def _fits(answer: str) -> bool:
    return 0 < len(clean_line(answer)) <= MAX_OPTION


def _question(line: int, prompt: str, value: yaml.Node, parsed: Parsed) -> _Question | None:
    where = f"line {line}"
    items = value.value if isinstance(value, yaml.SequenceNode) else [value]
    answers = [_scalar(item) for item in items]
    accepted = [a for a in answers if a]
    if None in answers:
        parsed.skipped.append(Skipped(where, "answers must be plain text"))
        return None
    if not accepted:
        parsed.skipped.append(Skipped(where, "no accepted answer"))
        return None
    shown = next((a for a in accepted if _fits(a)), None)
    if shown is None:
        longest = max(len(clean_line(a)) for a in accepted)
        reason = f"its answer is {longest} characters; an option holds at most {MAX_OPTION}"
        parsed.skipped.append(Skipped(where, reason))
        return None
    return _Question(line, prompt, accepted, shown)


def _read(root: yaml.MappingNode, parsed: Parsed, meta: _Meta) -> list[_Question]:
    by_prompt: dict[str, _Question | None] = {}
    first_line: dict[str, int] = {}
    for key, value in root.value:
        line = key.start_mark.line + 1
        prompt = _scalar(key)
        if prompt is not None and _metadata(prompt, value, meta, parsed):
            continue
        if not prompt:
            parsed.skipped.append(Skipped(f"line {line}", "the question is not plain text"))
            continue
        if prompt in first_line:
            earlier = first_line[prompt]
            reason = f"repeated on line {line}; Red keeps the last copy, so not this one"
            parsed.skipped.append(Skipped(f"line {earlier}", reason))
            del by_prompt[prompt]  # the last copy takes the end of the order
        first_line[prompt] = line
        by_prompt[prompt] = _question(line, prompt, value, parsed)
    return [question for question in by_prompt.values() if question is not None]


def _draw(
    rng: random.Random, pool: list[str], ok: Callable[[str], bool], chosen: list[str]
) -> None:
    """Add acceptable answers from `pool` to `chosen` until it holds DISTRACTORS:
    a few random picks first, then a walk from a random start so nothing is missed."""
    if not pool:
        return
    for _ in range(ATTEMPTS):
        if len(chosen) >= DISTRACTORS:
            return
        candidate = pool[rng.randrange(len(pool))]
        if candidate not in chosen and ok(candidate):
            chosen.append(candidate)
    start = rng.randrange(len(pool))
    for step in range(len(pool)):
        if len(chosen) >= DISTRACTORS:
            return
        candidate = pool[(start + step) % len(pool)]
        if candidate not in chosen and ok(candidate):
            chosen.append(candidate)


def _distractors(question: _Question, numbers: list[str], words: list[str]) -> list[str]:
    taken = {answer.casefold() for answer in question.accepted}

    def ok(candidate: str) -> bool:
        return candidate.casefold() not in taken and not red_accepts(question.accepted, candidate)

    rng = random.Random(f"red:{question.prompt}")
    numeric = bool(NUMBER.match(question.shown))
    # Like first: a number among words gives itself away.
    alike, rest = (numbers, words) if numeric else (words, numbers)
    chosen: list[str] = []
    _draw(rng, alike, ok, chosen)
    _draw(rng, rest, ok, chosen)
    return chosen


def _root(text: str) -> yaml.MappingNode:
    try:
        root = compose_fast(text)
    except NestedTooDeep as exc:
        raise ImportFailed(f"nested too deeply for a trivia list (line {exc.line})") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 1})" if mark is not None else ""
        reason = getattr(exc, "problem", None) or str(exc)
        raise ImportFailed(f"not valid YAML{where}: {reason}") from None
    if not isinstance(root, yaml.MappingNode):
        raise ImportFailed("a Red trivia list is a YAML mapping of question: [answers]")
    return root


def parse(text: str, source: str) -> Parsed:
    root = _root(text)
    parsed = Parsed(notes=[NOTE])
    meta = _Meta()
    questions = _read(root, parsed, meta)
    seen: set[str] = set()
    numbers: list[str] = []
    words: list[str] = []
    for question in questions:  # each answer once, in list order, its first spelling
        if question.shown.casefold() not in seen:
            seen.add(question.shown.casefold())
            (numbers if NUMBER.match(question.shown) else words).append(question.shown)
    for question in sorted(questions, key=lambda q: q.line):
        where = f"line {question.line}"
        wrong = _distractors(question, numbers, words)
        if not wrong:
            reason = "no other answer in the list to draw a wrong option from"
            parsed.skipped.append(Skipped(where, reason))
            continue
        if len(wrong) < DISTRACTORS:
            parsed.notes.append(
                f"{where}: only {len(wrong)} wrong option(s); the list has too few other answers"
            )
        options, answer = place_answer(question.prompt, wrong, question.shown)
        explanation = provenance.red_explanation(question.shown, question.accepted)
        parsed.entries.append(Entry(where, question.prompt, options, answer, explanation))
    parsed.description = provenance.red_description(source, meta.author, meta.description)
    return parsed
