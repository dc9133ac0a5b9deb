"""Text an import writes into a bank: credits, descriptions and stand-in explanations."""

from __future__ import annotations

from collections.abc import Sequence

OPENTDB_CREDIT = (
    "Questions from the Open Trivia DB (https://opentdb.com), "
    "licensed under CC BY-SA 4.0 (https://creativecommons.org/licenses/by-sa/4.0/)."
)


def imported_explanation(answer: str) -> str:
    """For source formats without explanations: at least the reveal names the answer."""
    return f"The answer is {answer}."


def red_explanation(accepted: Sequence[str]) -> str:
    if len(accepted) < 2:
        return imported_explanation(accepted[0])
    others = ", ".join(accepted[1:])
    return f"The answer is {accepted[0]} (the original list also accepts {others})."


def imported_description(source: str, format_name: str) -> str:
    return f"Imported from {source} ({format_name})."


def opentdb_description(source: str) -> str:
    return f"{OPENTDB_CREDIT} Imported from {source}."


def red_description(source: str, author: str | None) -> str:
    by = f" by {author}" if author else ""
    return (
        f"Imported from the Red-DiscordBot trivia list {source}{by}. Red's questions have "
        "no wrong options, so each question's wrong options were drawn from the answers "
        "of other questions in the same list."
    )
