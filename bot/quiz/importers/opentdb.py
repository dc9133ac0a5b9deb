"""Open Trivia DB JSON (https://opentdb.com/api_config.php), as its API returns
it: fields HTML-escaped by default, or percent- or base64-encoded when the file
was fetched with `encode=` (bot/quiz/importers/field_encoding.py)."""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from typing import Any

from bot.quiz.importers import provenance
from bot.quiz.importers.field_encoding import DECODERS, BadField, detect
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


def _decoded(item: dict[str, Any], decode: Callable[[str], str]) -> dict[str, Any]:
    """The item's text fields decoded; other values as they are. BadField if one is not
    valid in the file's encoding."""
    fields = ("type", "difficulty", "category", "question", "correct_answer")
    out = dict(item)
    for name in fields:
        if isinstance(item.get(name), str):
            out[name] = decode(item[name])
    wrong = item.get("incorrect_answers")
    if isinstance(wrong, list):
        out["incorrect_answers"] = [decode(w) if isinstance(w, str) else w for w in wrong]
    return out


def _entry(index: int, raw: Any, decode: Callable[[str], str]) -> Entry | Skipped:
    where = f"results[{index}]"
    if not isinstance(raw, dict):
        return Skipped(where, "not a question object")
    try:
        item = _decoded(raw, decode)
    except BadField as problem:
        return Skipped(where, str(problem))
    kind = item.get("type")
    prompt = item.get("question")
    right = item.get("correct_answer")
    wrong = item.get("incorrect_answers")
    if not isinstance(prompt, str) or not isinstance(right, str):
        return Skipped(where, "question and correct_answer must be text")
    if not isinstance(wrong, list) or not all(isinstance(w, str) for w in wrong):
        return Skipped(where, "incorrect_answers must be a list of texts")
    difficulty = item.get("difficulty")
    category = item.get("category")
    tags = [category] if isinstance(category, str) else []
    kept = difficulty if difficulty in DIFFICULTIES else None
    if kind == "boolean":
        truth = right.strip().lower()
        if truth not in ("true", "false"):
            reason = f"a boolean question's answer must be True or False, not {right!r}"
            return Skipped(where, reason)
        answer = 0 if truth == "true" else 1
        return Entry(where, prompt, ["True", "False"], answer, tags=tags, difficulty=kept)
    if kind != "multiple":
        return Skipped(where, f"type {kind!r} is neither 'multiple' nor 'boolean'")
    options, answer = place_answer(prompt, list(wrong), right)
    return Entry(where, prompt, options, answer, tags=tags, difficulty=kept)


def _encoding(results: list[Any], chosen: str, parsed: Parsed) -> str:
    if chosen != "auto":
        return chosen
    items = [item for item in results if isinstance(item, dict)]
    found = detect((i.get("type") for i in items), (i.get("question") for i in items))
    if found != "html":
        parsed.notes.append(
            f"the fields are {found}-encoded (Open Trivia DB's encode={found}); decoded"
        )
    return found


def parse(text: str, source: str, field_encoding: str = "auto") -> Parsed:
    """`field_encoding` is one of field_encoding.ENCODINGS; "auto" detects it."""
    data = load_json(text)
    results = data.get("results") if isinstance(data, dict) else data
    if not isinstance(results, list):
        raise ImportFailed('an Open Trivia DB file is a JSON object with a "results" list')
    parsed = Parsed(description=provenance.opentdb_description(source))
    code = data.get("response_code") if isinstance(data, dict) else None
    if code not in (None, 0):
        parsed.notes.append(f"Open Trivia DB answered with response_code {code}")
    decode = DECODERS[_encoding(results, field_encoding, parsed)]
    for index, item in enumerate(results):
        found = _entry(index, item, decode)
        if isinstance(found, Skipped):
            parsed.skipped.append(found)
        else:
            parsed.entries.append(found)
    categories = {e.tags[0] for e in parsed.entries if e.tags}
    parsed.title = (
        f"Open Trivia DB: {categories.pop()}" if len(categories) == 1 else "Open Trivia DB"
    )
    return parsed
