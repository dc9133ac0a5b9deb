"""Text an import writes into a bank: credits, descriptions and stand-in explanations."""

from __future__ import annotations

from collections.abc import Sequence

OPENTDB_CREDIT = (
    "Questions from the Open Trivia DB (https://opentdb.com), "
    "licensed under CC BY-SA 4.0 (https://creativecommons.org/licenses/by-sa/4.0/)."
)


# An answer that already ends a sentence gets no second full stop ("Mr." not "Mr..").
_ENDS_SENTENCE = (".", "!", "?", "…")


def sentence(text: str) -> str:
    """`text` closed with a full stop unless it already ends a sentence."""
    return text if text.endswith(_ENDS_SENTENCE) else f"{text}."


def imported_explanation(answer: str) -> str:
    """For source formats without explanations: at least the reveal names the answer."""
    return sentence(f"The answer is {answer}")


def red_explanation(shown: str, accepted: Sequence[str]) -> str:
    others = [answer for answer in accepted if answer != shown]
    if not others:
        return imported_explanation(shown)
    return f"The answer is {shown} (the original list also accepts {', '.join(others)})."


def imported_description(source: str, format_name: str) -> str:
    return f"Imported from {source} ({format_name})."


def opentdb_description(source: str) -> str:
    return f"{OPENTDB_CREDIT} Imported from {source}."


def red_description(source: str, author: str | None, description: str = "") -> str:
    by = f" by {author}" if author else ""
    about = f"{sentence(description)} " if description else ""
    return (
        f"{about}Imported from the Red-DiscordBot trivia list {source}{by}. Red's questions have "
        "no wrong options, so each question's wrong options were drawn from the answers "
        "of other questions in the same list."
    )
