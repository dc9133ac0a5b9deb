"""The ids our buttons and forms carry: which post, card or submission, nothing
more. Each kind is routed to its feature's handler in that feature's module
(`ButtonRoute`, `FormRoute`); the texts build buttons from these kinds."""

from __future__ import annotations

from bot.quiz.surface.spec import IdKind

# A letter button under a question: `qm:a:<post>:<slot>`.
ANSWER = IdKind("qm:a", ("post", "slot"), answer=True)

# A question's "Hint" button: `qm:h:<post>`; the terminal types `?` for it.
HINT = IdKind("qm:h", ("post",), shortcut="?")

# A review card's letter: `qm:r:<session>:<step>:<slot>`; the session row holds the rest.
CARD = IdKind("qm:r", ("session", "step", "slot"), answer=True)

# Moderators' review buttons and the author's "edit": `qm:s:<verb>:<submission>`.
SUBMISSION = IdKind("qm:s", ("submission",), verbs=("accept", "reject", "skip", "edit"))

# Forms: a new question, and a rejection's reason `qm:f:reject:<submission>`.
SUBMIT = IdKind("qm:f:submit")
REJECT = IdKind("qm:f:reject", ("submission",))

# "Report a problem" on a revealed question, its form, and the moderators'
# buttons on a report: `qm:p:<post>`, `qm:f:report:<post>`, `qm:q:<verb>:<report>`.
REPORT = IdKind("qm:p", ("post",), shortcut="!")
REPORT_FORM = IdKind("qm:f:report", ("post",))
# The same under a review card's verdict: `qm:pc:<session>:<step>`, its form
# `qm:f:report-card:<session>:<step>` (the step after the answered card).
REPORT_CARD = IdKind("qm:pc", ("session", "step"), shortcut="!")
REPORT_CARD_FORM = IdKind("qm:f:report-card", ("session", "step"))
REPORT_REVIEW = IdKind("qm:q", ("report",), verbs=("dismiss", "fixed", "remove", "skip"))

SUBMIT_FORM = SUBMIT.id()
REJECT_FORM = REJECT.prefix


def answer_custom_id(post_id: int, slot: int) -> str:
    return ANSWER.id(post_id, slot)


def parse_answer_custom_id(custom_id: str) -> tuple[int, int] | None:
    """(post, slot) of a letter button's id, or None if it is not one."""
    pressed = ANSWER.parse(custom_id)
    return None if pressed is None else (pressed.numbers[0], pressed.numbers[1])


def card_custom_id(session_id: int, step: int, slot: int) -> str:
    return CARD.id(session_id, step, slot)


def submission_custom_id(verb: str, number: int) -> str:
    return SUBMISSION.id(number, verb=verb)
