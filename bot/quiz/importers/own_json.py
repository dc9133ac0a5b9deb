"""Our own `quizmaster questions export --format json`, so an export can come back
as a bank: prompts, options, answers, explanations, tags, difficulty, hints and
pictures are kept."""

from __future__ import annotations

from typing import Any

from bot.quiz.importers.opentdb import load_json
from bot.quiz.importers.result import Entry, ImportFailed, Parsed, Skipped


def _entry(where: str, item: Any) -> Entry | Skipped:
    if not isinstance(item, dict):
        return Skipped(where, "not a question object")
    prompt, options, answer = item.get("prompt"), item.get("options"), item.get("answer")
    if not isinstance(prompt, str):
        return Skipped(where, "prompt must be text")
    if not isinstance(options, list) or not all(isinstance(o, str) for o in options):
        return Skipped(where, "options must be a list of texts")
    if isinstance(answer, bool) or not isinstance(answer, int):
        return Skipped(where, "answer must be the 0-based index of the right option")
    explanation = item.get("explanation")
    tags = item.get("tags")
    difficulty = item.get("difficulty")
    hint, image, image_alt = (_text(item.get(key)) for key in ("hint", "image", "image_alt"))
    return Entry(
        where,
        prompt,
        options,
        answer,
        explanation=explanation if isinstance(explanation, str) else "",
        tags=[t for t in tags if isinstance(t, str)] if isinstance(tags, list) else [],
        difficulty=difficulty if isinstance(difficulty, str) else None,
        hint=hint,
        image=image,
        image_alt=image_alt,
    )


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def parse(text: str, source: str) -> Parsed:
    data = load_json(text)
    banks = data.get("banks") if isinstance(data, dict) else None
    if not isinstance(banks, list):
        raise ImportFailed('a Quizmaster export is a JSON object with a "banks" list')
    parsed = Parsed()
    titles = []
    for b, bank in enumerate(banks):
        questions = bank.get("questions") if isinstance(bank, dict) else None
        if not isinstance(questions, list):
            parsed.skipped.append(Skipped(f"banks[{b}]", 'no "questions" list'))
            continue
        if isinstance(bank.get("title"), str):
            titles.append(bank["title"])
        for q, item in enumerate(questions):
            found = _entry(f"banks[{b}].questions[{q}]", item)
            if isinstance(found, Skipped):
                parsed.skipped.append(found)
            else:
                parsed.entries.append(found)
    if len(titles) == 1:
        parsed.title = titles[0]
    return parsed
