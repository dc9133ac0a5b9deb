"""Open Trivia DB JSON (https://opentdb.com/api_config.php), as its API returns it."""

from __future__ import annotations

import html
import json
import random
from typing import Any

from bot.quiz.importers import provenance
from bot.quiz.importers.result import Entry, ImportFailed, Parsed, Skipped

DIFFICULTIES = ("easy", "medium", "hard")


def load_json(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ImportFailed(
            f"not valid JSON (line {exc.lineno}, column {exc.colno}): {exc.msg}"
        ) from None
    except RecursionError:
        raise ImportFailed("the JSON is nested too deeply to be questions") from None
    except ValueError as exc:  # e.g. an integer with thousands of digits
        raise ImportFailed(f"not valid JSON: {exc}") from None


def place_answer(prompt: str, wrong: list[str], right: str) -> tuple[list[str], int]:
    """The right option at a position seeded by the prompt, so the same file always
    gives the same bank (postings shuffle the options again anyway)."""
    index = random.Random(prompt).randrange(len(wrong) + 1)
    return [*wrong[:index], right, *wrong[index:]], index


def _entry(index: int, item: Any) -> Entry | Skipped:
    where = f"results[{index}]"
    if not isinstance(item, dict):
        return Skipped(where, "not a question object")
    kind = item.get("type")
    question = item.get("question")
    right = item.get("correct_answer")
    wrong = item.get("incorrect_answers")
    if not isinstance(question, str) or not isinstance(right, str):
        return Skipped(where, "question and correct_answer must be text")
    if not isinstance(wrong, list) or not all(isinstance(w, str) for w in wrong):
        return Skipped(where, "incorrect_answers must be a list of texts")
    prompt = html.unescape(question)
    difficulty = item.get("difficulty")
    category = item.get("category")
    tags = [html.unescape(category)] if isinstance(category, str) else []
    kept = difficulty if difficulty in DIFFICULTIES else None
    if kind == "boolean":
        truth = html.unescape(right).strip().lower()
        if truth not in ("true", "false"):
            reason = f"a boolean question's answer must be True or False, not {right!r}"
            return Skipped(where, reason)
        answer = 0 if truth == "true" else 1
        return Entry(where, prompt, ["True", "False"], answer, tags=tags, difficulty=kept)
    if kind != "multiple":
        return Skipped(where, f"type {kind!r} is neither 'multiple' nor 'boolean'")
    wrongs = [html.unescape(w) for w in wrong]
    options, answer = place_answer(prompt, wrongs, html.unescape(right))
    return Entry(where, prompt, options, answer, tags=tags, difficulty=kept)


def parse(text: str, source: str) -> Parsed:
    data = load_json(text)
    results = data.get("results") if isinstance(data, dict) else data
    if not isinstance(results, list):
        raise ImportFailed('an Open Trivia DB file is a JSON object with a "results" list')
    parsed = Parsed(description=provenance.opentdb_description(source))
    code = data.get("response_code") if isinstance(data, dict) else None
    if code not in (None, 0):
        parsed.notes.append(f"Open Trivia DB answered with response_code {code}")
    for index, item in enumerate(results):
        found = _entry(index, item)
        if isinstance(found, Skipped):
            parsed.skipped.append(found)
        else:
            parsed.entries.append(found)
    categories = {e.tags[0] for e in parsed.entries if e.tags}
    parsed.title = (
        f"Open Trivia DB: {categories.pop()}" if len(categories) == 1 else "Open Trivia DB"
    )
    return parsed
