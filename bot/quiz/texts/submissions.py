"""Member submissions: the form, the moderators' queue and the authors' news."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from bot.chat import Button, ButtonStyle, Form, FormField, OutMessage
from bot.dialect import Dialect
from bot.i18n import t
from bot.quiz.bank import LETTERS
from bot.quiz.buttons import REJECT_FORM, SUBMIT_FORM, submission_custom_id
from bot.quiz.texts.common import private, short
from bot.storage.submissions import SubmissionInfo


def submission_fields() -> tuple[FormField, ...]:
    """The submission form's fields, labelled in the reader's language."""
    return (
        FormField("prompt", t("Question"), multiline=True, max_length=1000),
        FormField(
            "options",
            t("Options, one per line (2 to 5)"),
            multiline=True,
            max_length=1600,
            placeholder=t("Gradient compression\nData shuffling\nTask parallelism"),
        ),
        FormField(
            "answer", t("Letter of the right option (A to E)"), max_length=2, placeholder="A"
        ),
        FormField("explanation", t("Why it is right (one to three sentences)"), multiline=True),
        FormField(
            "tags",
            t("Tags (optional), e.g. ddp, communication"),
            required=False,
            max_length=200,
        ),
    )


def _field_name(key: str) -> str:
    names = {
        "prompt": t("Question"),
        "options": t("Options"),
        "answer": t("Right option"),
        "explanation": t("Explanation"),
        "tags": t("Tags"),
    }
    return names.get(key, key)


def field_problem(key: str, problem: str) -> str:
    """A validation problem as the form shows it beside its field (pydantic's
    English messages for the usual mistakes; anything else as pydantic said it)."""
    if key == "answer" and "pattern" in problem:
        return t("Give one letter, A to E")
    if key == "tags" and "pattern" in problem:
        return t("Tags are lowercase letters, digits and dashes, like `data-parallel`")
    known = {
        "String should have at least 1 character": t("This is empty"),
        "List should have at least 2 items": t("Give at least two options"),
        "List should have at most 5 items": t("Give at most five options"),
    }
    for english, translated in known.items():
        if english in problem:
            return translated
    return problem[0].upper() + problem[1:] if problem else problem


def too_long(limit: int) -> str:
    return t("At most {limit} characters", limit=limit)


def submission_form(values: Mapping[str, str] | None = None) -> OutMessage:
    filled = values or {}
    fields = tuple(replace(spec, value=filled.get(spec.key, "")) for spec in submission_fields())
    return OutMessage(
        text=t("Questions are submitted through a form on Discord or Slack."),
        form=Form(SUBMIT_FORM, t("Submit a question"), fields, t("Submit"), t("Cancel")),
    )


def submission_problems(errors: Mapping[str, str], draft: int | None) -> OutMessage:
    lines = [f"• **{_field_name(key)}**: {problem}" for key, problem in errors.items()]
    text = t("Your question was not queued yet:") + "\n" + "\n".join(lines)
    buttons: tuple[Button, ...] = ()
    if draft is not None:
        text += "\n" + t("What you typed is kept: click **Edit my question** to fix it.")
        buttons = (Button(submission_custom_id("edit", draft), t("Edit my question")),)
    return OutMessage(text=text, body=text, buttons=buttons)


def too_many_pending(limit: int) -> OutMessage:
    return private(
        t(
            "You already have {limit} questions waiting for review here, the most one member "
            "may have. Once a moderator has looked at them you can submit more.",
            limit=limit,
        )
    )


def submission_queued(number: int) -> OutMessage:
    return private(
        t(
            "Thanks! Your question (submission #{number}) is waiting for a moderator. "
            "I'll tell you privately when it has been reviewed.",
            number=number,
        )
    )


def _submission_text(submission: SubmissionInfo, dialect: Dialect) -> str:
    question = submission.question
    right = str(question.get("answer", ""))
    lines = [dialect.escape_member(str(question.get("prompt", ""))), ""]
    for index, option in enumerate(question.get("options") or []):
        mark = " ✅" if LETTERS[index] == right else ""
        lines.append(f"{LETTERS[index]}. {dialect.escape_member(str(option))}{mark}")
    why = dialect.escape_member(str(question.get("explanation", "")))
    lines += ["", t("**Why:** {explanation}", explanation=why)]
    tags = question.get("tags") or []
    if tags:
        lines.append(t("**Tags:** {tags}", tags=", ".join(str(tag) for tag in tags)))
    return "\n".join(lines)


def submission_card(
    submission: SubmissionInfo, pending: int, dialect: Dialect, note: str = ""
) -> OutMessage:
    title = t("Submission #{number} ({pending} pending)", number=submission.id, pending=pending)
    author = dialect.mention(submission.author_id)
    body = (
        _submission_text(submission, dialect) + "\n\n" + t("Submitted by {member}.", member=author)
    )
    if note:
        body = f"{note}\n\n{body}"
    buttons = (
        Button(submission_custom_id("accept", submission.id), t("Accept"), ButtonStyle.SUCCESS),
        Button(submission_custom_id("reject", submission.id), t("Reject"), ButtonStyle.DANGER),
        Button(submission_custom_id("skip", submission.id), t("Skip")),
    )
    return OutMessage(
        text=f"{note}\n{title}\n{body}".strip(), title=title, body=body, buttons=buttons
    )


def queue_empty(note: str = "") -> OutMessage:
    text = t("No submissions are waiting for review here.")
    return private(f"{note}\n{text}" if note else text)


def already_reviewed() -> str:
    return t("That submission was already reviewed (or removed); here is the next one.")


def accepted_note(submission: SubmissionInfo) -> str:
    return t(
        "Accepted submission #{number}: it is {question} in the community bank now.",
        number=submission.id,
        question=submission.question_id,
    )


def rejected_note(submission: SubmissionInfo) -> str:
    return t("Rejected submission #{number}; its author has been told.", number=submission.id)


def reject_form(number: int) -> OutMessage:
    reason = FormField(
        "reason",
        t("Reason for the author (optional)"),
        multiline=True,
        required=False,
        max_length=500,
    )
    return OutMessage(
        text=t("Rejecting needs Discord or Slack."),
        form=Form(
            f"{REJECT_FORM}:{number}",
            t("Reject submission"),
            (reason,),
            t("Reject"),
            t("Cancel"),
        ),
    )


def author_accepted(submission: SubmissionInfo, dialect: Dialect) -> OutMessage:
    prompt = dialect.escape_member(short(str(submission.question.get("prompt", ""))))
    return private(
        t(
            "🎉 Your question “{prompt}” was accepted: it joins this community's question bank "
            "as {question}.",
            prompt=prompt,
            question=submission.question_id,
        )
    )


def author_rejected(submission: SubmissionInfo, dialect: Dialect) -> OutMessage:
    prompt = dialect.escape_member(short(str(submission.question.get("prompt", ""))))
    if submission.reason:
        return private(
            t(
                "Your question “{prompt}” was not accepted. The moderator said: {reason}",
                prompt=prompt,
                reason=dialect.escape_member(submission.reason),
            )
        )
    return private(t("Your question “{prompt}” was not accepted.", prompt=prompt))


def not_a_community_question(question_id: str) -> OutMessage:
    shown = short(question_id, 40) or t("(none)")
    return private(
        t(
            "`{question}` is not a question of this community's bank. Give its id, like "
            "`community-12` (bank files are changed by editing them).",
            question=shown,
        )
    )


def question_removed(question_id: str) -> OutMessage:
    return private(t("Removed {question}: it will not be drawn here again.", question=question_id))
