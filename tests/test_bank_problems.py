"""A bank author's mistakes, reported where they can be fixed: a YAML error at the
line where the broken construct starts, with the parser's reason, and a pattern
error in words rather than as a regular expression."""

from __future__ import annotations

from pathlib import Path

from bot.quiz.bank import parse_bank_text

GOOD_QUESTION = """\
  - id: b-1
    prompt: Which one?
    options: [one, two]
    answer: A
    explanation: Because.
    tags: [{tag}]
    difficulty: easy
"""


def _problem(text: str) -> str:
    bank, problems = parse_bank_text(text, Path("bank.yaml"))
    assert bank is None and len(problems) == 1
    return str(problems[0])


def test_an_unclosed_quote_is_reported_where_it_opens() -> None:
    text = "id: b\ntitle: T\nquestions:\n" + GOOD_QUESTION.format(tag="x").replace(
        "prompt: Which one?", 'prompt: "Which one?'
    )
    problem = _problem(text)
    assert problem.startswith("bank.yaml:5: not valid YAML: while scanning a quoted scalar")
    assert "end of stream" in problem  # the parser's own reason is kept


def test_an_unclosed_bracket_names_its_line_and_the_parser_reason() -> None:
    text = "id: b\ntitle: T\nquestions:\n" + GOOD_QUESTION.format(tag="x").replace(
        "options: [one, two]", "options: [one, two"
    )
    problem = _problem(text)
    assert problem.startswith("bank.yaml:6: not valid YAML: while parsing a flow sequence")
    assert "expected ',' or ']'" in problem


def test_a_bad_tag_is_explained_in_words() -> None:
    text = "id: b\ntitle: T\nquestions:\n" + GOOD_QUESTION.format(tag="Data_Parallel")
    problem = _problem(text)
    assert "'Data_Parallel'" in problem
    assert "lowercase words joined by single hyphens" in problem
    assert "^[a-z0-9]" not in problem and "pattern" not in problem


def test_a_bad_id_and_answer_are_explained_in_words() -> None:
    text = "id: Bad Id\ntitle: T\nquestions:\n" + GOOD_QUESTION.format(tag="x").replace(
        "answer: A", "answer: a"
    )
    _, problems = parse_bank_text(text, Path("bank.yaml"))
    said = " | ".join(str(problem) for problem in problems)
    assert "an id is 1–64 lowercase letters" in said
    assert "the answer is one capital letter, A to E" in said
    assert "pattern" not in said
