"""Red-DiscordBot trivia lists: YAML mapping each question to its accepted answers.

    AUTHOR: someone
    What is the capital of France?:
    - Paris
    - paris, france

Red's players type answers, so its questions have no wrong options. Each
imported question gets up to three wrong options drawn from the first answers
of the other questions in the same list, numbers for a number and words for
words where the list has enough of them. The draw is seeded by the question
text, so the same list always gives the same bank.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass

import yaml

from bot.quiz.bank import NestedTooDeep, compose_yaml
from bot.quiz.importers import provenance
from bot.quiz.importers.opentdb import place_answer
from bot.quiz.importers.result import Entry, ImportFailed, Parsed, Skipped

DISTRACTORS = 3
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


def _scalar(node: yaml.Node) -> str | None:
    return str(node.value).strip() if isinstance(node, yaml.ScalarNode) else None


def _read(root: yaml.MappingNode, parsed: Parsed) -> tuple[list[_Question], str | None]:
    questions: list[_Question] = []
    author = None
    for key, value in root.value:
        line = key.start_mark.line + 1
        prompt = _scalar(key)
        if prompt == "AUTHOR":
            author = _scalar(value)
            continue
        if prompt == "CONFIG":
            parsed.notes.append("the list's CONFIG (Red's game settings) is not imported")
            continue
        if not prompt:
            parsed.skipped.append(Skipped(f"line {line}", "the question is not plain text"))
            continue
        items = value.value if isinstance(value, yaml.SequenceNode) else [value]
        answers = [_scalar(item) for item in items]
        accepted = [a for a in answers if a]
        if None in answers:
            parsed.skipped.append(Skipped(f"line {line}", "answers must be plain text"))
        elif not accepted:
            parsed.skipped.append(Skipped(f"line {line}", "no accepted answer"))
        else:
            questions.append(_Question(line, prompt, accepted))
    return questions, author


def _distractors(question: _Question, pool: list[str]) -> list[str]:
    taken = {answer.casefold() for answer in question.accepted}
    others = [answer for answer in pool if answer.casefold() not in taken]
    rng = random.Random(f"red:{question.prompt}")
    rng.shuffle(others)
    numeric = bool(NUMBER.match(question.accepted[0]))
    # Like first: a number among words gives itself away.
    alike = [answer for answer in others if bool(NUMBER.match(answer)) == numeric]
    rest = [answer for answer in others if answer not in alike]
    return (alike + rest)[:DISTRACTORS]


def parse(text: str, source: str) -> Parsed:
    try:
        root = compose_yaml(text)
    except NestedTooDeep as exc:
        raise ImportFailed(f"nested too deeply for a trivia list (line {exc.line})") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 1})" if mark is not None else ""
        reason = getattr(exc, "problem", None) or str(exc)
        raise ImportFailed(f"not valid YAML{where}: {reason}") from None
    if not isinstance(root, yaml.MappingNode):
        raise ImportFailed("a Red trivia list is a YAML mapping of question: [answers]")
    parsed = Parsed(notes=[NOTE])
    questions, author = _read(root, parsed)
    pool: dict[str, str] = {}  # casefolded -> first spelling in the list
    for question in questions:
        pool.setdefault(question.accepted[0].casefold(), question.accepted[0])
    for question in questions:
        where = f"line {question.line}"
        wrong = _distractors(question, list(pool.values()))
        if not wrong:
            parsed.skipped.append(
                Skipped(where, "no other answer in the list to draw a wrong option from")
            )
            continue
        if len(wrong) < DISTRACTORS:
            parsed.notes.append(
                f"{where}: only {len(wrong)} wrong option(s); the list has too few other answers"
            )
        options, answer = place_answer(question.prompt, wrong, question.accepted[0])
        explanation = provenance.red_explanation(question.accepted)
        parsed.entries.append(Entry(where, question.prompt, options, answer, explanation))
    parsed.description = provenance.red_description(source, author)
    return parsed
