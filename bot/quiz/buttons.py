"""The ids our buttons and forms carry: which post, card or submission, nothing more."""

from __future__ import annotations

from collections.abc import Sequence

ANSWER_PREFIX = "qm:a"


# Review cards' buttons: `qm:r:<session>:<step>:<slot>`, told apart from answer
# buttons by the prefix; the session row holds the rest.
CARD_PREFIX = "qm:r"


def answer_custom_id(post_id: int, slot: int) -> str:
    """The id a letter button carries: which post and which slot, nothing more."""
    return f"{ANSWER_PREFIX}:{post_id}:{slot}"


def parse_answer_custom_id(custom_id: str) -> tuple[int, int] | None:
    parts = custom_id.split(":")
    if len(parts) != 4 or ":".join(parts[:2]) != ANSWER_PREFIX:
        return None
    post, slot = parts[2], parts[3]
    if not (post.isdigit() and slot.isdigit()) or len(post) > 18:
        return None
    return int(post), int(slot)


def card_custom_id(session_id: int, step: int, slot: int) -> str:
    return f"{CARD_PREFIX}:{session_id}:{step}:{slot}"


def parse_card_custom_id(custom_id: str) -> tuple[int, int, int] | None:
    """(session, step, slot) of a review card button's id, or None if it is not one."""
    parts = custom_id.split(":")
    if len(parts) != 5 or ":".join(parts[:2]) != CARD_PREFIX:
        return None
    numbers = parts[2:]
    if not all(part.isdigit() and len(part) <= 18 for part in numbers):
        return None
    return int(numbers[0]), int(numbers[1]), int(numbers[2])


# Review buttons and forms: `qm:s:<verb>:<submission>` and `qm:f:<form>[:<submission>]`.
SUBMISSION_PREFIX = "qm:s"


FORM_PREFIX = "qm:f"


SUBMIT_FORM = f"{FORM_PREFIX}:submit"


REJECT_FORM = f"{FORM_PREFIX}:reject"


SUBMISSION_VERBS = ("accept", "reject", "skip", "edit")


def submission_custom_id(verb: str, number: int) -> str:
    return f"{SUBMISSION_PREFIX}:{verb}:{number}"


def parse_numbered_id(custom_id: str, prefix: str, verbs: Sequence[str]) -> tuple[str, int] | None:
    """`<prefix>:<verb>:<number>` → (verb, number); None for anything else."""
    parts = custom_id.split(":")
    if len(parts) != 4 or ":".join(parts[:2]) != prefix or parts[2] not in verbs:
        return None
    if not parts[3].isdigit() or len(parts[3]) > 18:
        return None
    return parts[2], int(parts[3])
