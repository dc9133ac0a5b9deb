"""Member submissions: the form, the moderators' queue and the authors' news."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from bot.chat import Button, ButtonStyle, Form, FormField, OutMessage
from bot.dialect import Dialect
from bot.quiz.bank import LETTERS
from bot.quiz.buttons import REJECT_FORM, SUBMIT_FORM, submission_custom_id
from bot.quiz.texts.common import private, short
from bot.storage.submissions import SubmissionInfo

SUBMISSION_FIELDS = (
    FormField("prompt", "Question", multiline=True, max_length=1000),
    FormField(
        "options",
        "Options, one per line (2 to 5)",
        multiline=True,
        max_length=1600,
        placeholder="Gradient compression\nData shuffling\nTask parallelism",
    ),
    FormField("answer", "Letter of the right option (A to E)", max_length=2, placeholder="A"),
    FormField("explanation", "Why it is right (one to three sentences)", multiline=True),
    FormField(
        "tags",
        "Tags (optional), e.g. ddp, communication",
        required=False,
        max_length=200,
    ),
)


_FIELD_NAMES = {
    "prompt": "Question",
    "options": "Options",
    "answer": "Right option",
    "explanation": "Explanation",
    "tags": "Tags",
}


def field_problem(key: str, problem: str) -> str:
    """A validation problem as the form shows it beside its field."""
    problem = problem.replace("String should have at least 1 character", "this is empty")
    problem = problem.replace("List should have at least 2 items", "give at least two options")
    problem = problem.replace("List should have at most 5 items", "give at most five options")
    if key == "answer" and "pattern" in problem:
        problem = "give one letter, A to E"
    if key == "tags" and "pattern" in problem:
        problem += " (lowercase letters, digits and dashes, like `data-parallel`)"
    return problem[0].upper() + problem[1:] if problem else problem


def submission_form(values: Mapping[str, str] | None = None) -> OutMessage:
    filled = values or {}
    fields = tuple(replace(spec, value=filled.get(spec.key, "")) for spec in SUBMISSION_FIELDS)
    return OutMessage(
        text="Questions are submitted through a form on Discord or Slack.",
        form=Form(SUBMIT_FORM, "Submit a question", fields, "Submit"),
    )


def submission_problems(errors: Mapping[str, str], draft: int | None) -> OutMessage:
    lines = [f"• **{_FIELD_NAMES.get(key, key)}**: {problem}" for key, problem in errors.items()]
    text = "Your question was not queued yet:\n" + "\n".join(lines)
    buttons: tuple[Button, ...] = ()
    if draft is not None:
        text += "\nWhat you typed is kept: click **Edit my question** to fix it."
        buttons = (Button(submission_custom_id("edit", draft), "Edit my question"),)
    return OutMessage(text=text, body=text, buttons=buttons)


def too_many_pending(limit: int) -> OutMessage:
    return private(
        f"You already have {limit} questions waiting for review here, the most one member "
        "may have. Once a moderator has looked at them you can submit more."
    )


def submission_queued(number: int) -> OutMessage:
    return private(
        f"Thanks! Your question (submission #{number}) is waiting for a moderator. "
        "I'll tell you privately when it has been reviewed."
    )


def _submission_text(submission: SubmissionInfo, dialect: Dialect) -> str:
    question = submission.question
    right = str(question.get("answer", ""))
    lines = [dialect.escape_member(str(question.get("prompt", ""))), ""]
    for index, option in enumerate(question.get("options") or []):
        mark = " ✅" if LETTERS[index] == right else ""
        lines.append(f"{LETTERS[index]}. {dialect.escape_member(str(option))}{mark}")
    lines += ["", f"**Why:** {dialect.escape_member(str(question.get('explanation', '')))}"]
    tags = question.get("tags") or []
    if tags:
        lines.append(f"**Tags:** {', '.join(str(tag) for tag in tags)}")
    return "\n".join(lines)


def submission_card(
    submission: SubmissionInfo, pending: int, dialect: Dialect, note: str = ""
) -> OutMessage:
    title = f"Submission #{submission.id} ({pending} pending)"
    author = dialect.mention(submission.author_id)
    body = _submission_text(submission, dialect) + f"\n\nSubmitted by {author}."
    if note:
        body = f"{note}\n\n{body}"
    buttons = (
        Button(submission_custom_id("accept", submission.id), "Accept", ButtonStyle.SUCCESS),
        Button(submission_custom_id("reject", submission.id), "Reject", ButtonStyle.DANGER),
        Button(submission_custom_id("skip", submission.id), "Skip"),
    )
    return OutMessage(
        text=f"{note}\n{title}\n{body}".strip(), title=title, body=body, buttons=buttons
    )


def queue_empty(note: str = "") -> OutMessage:
    text = "No submissions are waiting for review here."
    return private(f"{note}\n{text}" if note else text)


def already_reviewed() -> str:
    return "That submission was already reviewed (or removed); here is the next one."


def accepted_note(submission: SubmissionInfo) -> str:
    return (
        f"Accepted submission #{submission.id}: it is {submission.question_id} in the "
        "community bank now."
    )


def rejected_note(submission: SubmissionInfo) -> str:
    return f"Rejected submission #{submission.id}; its author has been told."


def reject_form(number: int) -> OutMessage:
    reason = FormField(
        "reason",
        "Reason for the author (optional)",
        multiline=True,
        required=False,
        max_length=500,
    )
    return OutMessage(
        text="Rejecting needs Discord or Slack.",
        form=Form(f"{REJECT_FORM}:{number}", "Reject submission", (reason,), "Reject"),
    )


def author_accepted(submission: SubmissionInfo, dialect: Dialect) -> OutMessage:
    prompt = dialect.escape_member(short(str(submission.question.get("prompt", ""))))
    return private(
        f"🎉 Your question “{prompt}” was accepted: it joins this community's question bank "
        f"as {submission.question_id}."
    )


def author_rejected(submission: SubmissionInfo, dialect: Dialect) -> OutMessage:
    prompt = dialect.escape_member(short(str(submission.question.get("prompt", ""))))
    text = f"Your question “{prompt}” was not accepted."
    if submission.reason:
        text += f" The moderator said: {dialect.escape_member(submission.reason)}"
    return private(text)


def not_a_community_question(question_id: str) -> OutMessage:
    shown = short(question_id, 40) or "(none)"
    return private(
        f"`{shown}` is not a question of this community's bank. Give its id, like "
        "`community-12` (bank files are changed by editing them)."
    )


def question_removed(question_id: str) -> OutMessage:
    return private(f"Removed {question_id}: it will not be drawn here again.")
