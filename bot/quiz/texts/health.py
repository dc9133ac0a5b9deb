"""Question health: member reports, /quiz reports, /quiz health and the
adaptive daily pick's footer."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from bot.chat import Button, ButtonStyle, Field, Form, FormField, OutMessage
from bot.dialect import Dialect
from bot.domain.item_analysis import MIN_ANSWERS, Finding, ItemCounts, share
from bot.domain.rules import zone_or_utc
from bot.quiz.bank import Question
from bot.quiz.buttons import REPORT_REVIEW
from bot.quiz.texts.common import private
from bot.storage.reports import ReportInfo

REASONS = ("wrong answer", "unclear", "outdated", "typo", "other")
MAX_TEXT = 500


def report_form(form_id: str) -> OutMessage:
    reason = FormField(
        "reason",
        "What is wrong: wrong answer, unclear, outdated, typo or other",
        max_length=20,
        placeholder="wrong answer",
    )
    details = FormField(
        "text", "More about it (optional)", multiline=True, required=False, max_length=MAX_TEXT
    )
    return OutMessage(
        text="Reporting a question needs Discord or Slack.",
        form=Form(form_id, "Report a problem", (reason, details), "Report"),
    )


def bad_reason(value: str) -> str:
    shown = " ".join(value.split())[:20] or "nothing"
    return f"“{shown}” is not a reason: write wrong answer, unclear, outdated, typo or other."


def not_revealed() -> OutMessage:
    return private("That question is still open or gone: report it once its answer is shown.")


def card_moved_on() -> OutMessage:
    return private("That card is not the last one you answered any more: report it next time.")


def too_many_reports(limit: int) -> OutMessage:
    return private(
        f"You have {limit} open reports in this community already: a moderator will look "
        "at them first."
    )


def reported(question_id: str) -> OutMessage:
    return private(
        f"Thanks: your report on {question_id} is with the moderators. You will hear "
        "privately what they decide."
    )


# -- moderators: /quiz reports ---------------------------------------------------------


@dataclass(frozen=True)
class Judged:
    """A question with its analysis and flags, as /quiz health and /quiz reports show it."""

    question_id: str
    question: Question | None
    counts: ItemCounts | None
    found: Sequence[Finding]
    open_reports: int = 0


def no_reports(note: str = "") -> OutMessage:
    return private(f"{note}\nNo open reports.".strip())


def report_card(
    report: ReportInfo, judged: Judged, total: int, dialect: Dialect, note: str = ""
) -> OutMessage:
    title = f"Report {report.id} on {report.question_id} ({total} open)"
    prompt = dialect.escape_text(judged.question.prompt) if judged.question else "(not in a bank)"
    # The member's own words: no markdown, no links, no mentions.
    said = dialect.escape_member(report.text) if report.text else "(no details)"
    fields = [
        Field("Reason", f"{report.reason}: {said}"),
        Field("Reported by", dialect.mention(report.user_id)),
        Field("Analysis", analysis_summary(judged)),
    ]
    if judged.question is not None:
        fields.insert(0, Field("Question", f"{prompt}\n{_key_line(judged.question, dialect)}"))
    buttons = (
        Button(REPORT_REVIEW.id(report.id, verb="dismiss"), "Dismiss"),
        Button(REPORT_REVIEW.id(report.id, verb="fixed"), "Mark fixed", ButtonStyle.SUCCESS),
        Button(
            REPORT_REVIEW.id(report.id, verb="remove"),
            "Remove from this community",
            ButtonStyle.DANGER,
        ),
        Button(REPORT_REVIEW.id(report.id, verb="skip"), "Skip"),
    )
    body = "\n".join(f"**{f.name}:** {f.value}" for f in fields)
    head = f"{note}\n{title}".strip()
    return OutMessage(
        text=f"{head}\n{body}", title=title, body=note, fields=tuple(fields), buttons=buttons
    )


def _key_line(question: Question, dialect: Dialect) -> str:
    key = question.answer_index
    return f"Key: {option_label(question, key)}. {dialect.escape_text(question.options[key])}"


def already_resolved() -> str:
    return "That report was already closed."


OUTCOME_NOTES = {
    "dismissed": "Report {id} dismissed.",
    "fixed": "Report {id} marked fixed.",
    "removed": "Report {id}: {question} is no longer drawn in this community.",
}


def resolved_note(report: ReportInfo, status: str) -> str:
    return OUTCOME_NOTES[status].format(id=report.id, question=report.question_id)


_OUTCOMES = {
    "dismissed": "a moderator looked at it and kept the question as it is",
    "fixed": "a moderator marked it fixed",
    "removed": "the question is no longer asked in this community",
}


def reporter_told(report: ReportInfo, status: str) -> OutMessage:
    return private(
        f"About your report on {report.question_id} ({report.reason}): {_OUTCOMES[status]}. "
        "Thank you."
    )


# -- /quiz health ---------------------------------------------------------------------------


def option_label(question: Question, index: int) -> str:
    """An option's name in bank order (members saw them shuffled)."""
    if question.true_false:
        return question.options[index].capitalize()
    return "ABCDE"[index]


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{round(100 * value)} %"


def analysis_summary(judged: Judged) -> str:
    counts = judged.counts
    if counts is None or not counts.answered:
        lines = ["No answers yet."]
    else:
        d = counts.discrimination
        lines = [
            f"{counts.answered} answers, {_pct(counts.difficulty)} right, "
            f"discrimination {'–' if d is None else f'{d:+.2f}'}"
        ]
    lines += [f"⚑ {f.flag.value}: {f.reason}" for f in judged.found]
    if judged.counts is not None and judged.counts.answered < MIN_ANSWERS and not judged.found:
        lines.append(f"Flags need {MIN_ANSWERS} answers.")
    return "\n".join(lines)


def health_list(judged: Sequence[Judged], dialect: Dialect) -> OutMessage:
    title = "Questions to look at"
    if not judged:
        body = (
            f"No flagged questions here. Flags need {MIN_ANSWERS} answers "
            "(30 for the option flags), or two open reports."
        )
        return OutMessage(text=f"{title}\n{body}", title=title, body=body)
    lines = []
    for item in judged:
        flags = "; ".join(f"{f.flag.value} ({f.reason})" for f in item.found)
        answers = f"{item.counts.answered} answers" if item.counts else "no answers"
        lines.append(f"• **{item.question_id}** ({answers}): {flags}")
    lines.append("`/quiz health <question-id>` shows one question's analysis.")
    body = "\n".join(lines)
    return OutMessage(text=f"{title}\n{body}", title=title, body=body)


def health_detail(judged: Judged, dialect: Dialect) -> OutMessage:
    title = f"Health of {judged.question_id}"
    question, counts = judged.question, judged.counts
    lines = []
    if question is not None:
        lines.append(dialect.escape_text(question.prompt))
    lines.append(analysis_summary(judged))
    if question is not None and counts is not None and counts.answered:
        lines.append(
            "Chosen by · all / strongest 27 % / weakest 27 % "
            f"({counts.upper_answered} and {counts.lower_answered} answers)"
        )
        for index, option in enumerate(question.options):
            key = " ✅" if index == question.answer_index else ""
            lines.append(
                f"{option_label(question, index)}{key} {dialect.escape_text(option)}: "
                f"{_pct(share(counts.votes[index], counts.answered))} / "
                f"{_pct(_group(counts.upper_votes[index], counts.upper_answered))} / "
                f"{_pct(_group(counts.lower_votes[index], counts.lower_answered))}"
            )
    if judged.open_reports:
        lines.append(f"Open reports: {judged.open_reports}")
    body = "\n".join(lines)
    return OutMessage(text=f"{title}\n{body}", title=title, body=body)


def _group(count: int, total: int) -> float | None:
    return count / total if total else None


def unknown_question(question_id: str) -> OutMessage:
    shown = " ".join(question_id.split())[:64]
    return private(f"There is no question `{shown}` in this community's banks.")


# -- `quizmaster questions health` ------------------------------------------------------------

TABLE_COLUMNS = (
    "question",
    "answers",
    "right",
    "discrimination",
    "upper_right",
    "lower_right",
    "A",
    "B",
    "C",
    "D",
    "E",
    "open_reports",
    "flags",
)


def table_row(judged: Judged) -> list[str]:
    """One question's analysis as the CLI's table and CSV show it (shares 0-1)."""
    counts = judged.counts
    options = len(judged.question.options) if judged.question else 0

    def fraction(value: float | None) -> str:
        return "" if value is None else f"{value:.2f}"

    if counts is None or not counts.answered:
        numbers = ["0", "", "", "", "", *[""] * 5]
    else:
        d = counts.discrimination
        numbers = [
            str(counts.answered),
            fraction(counts.difficulty),
            "" if d is None else f"{d:+.2f}",
            fraction(counts.upper_share),
            fraction(counts.lower_share),
            *(
                fraction(share(counts.votes[n], counts.answered)) if n < options else ""
                for n in range(5)
            ),
        ]
    flags = "; ".join(f"{f.flag.value}: {f.reason}" for f in judged.found)
    return [judged.question_id, *numbers, str(judged.open_reports), flags]


def nothing_answered(platform: str, community: str) -> str:
    return f"No questions are drawn or answered in {platform} community {community}."


# -- the adaptive daily pick ------------------------------------------------------------------


def review_note(share: float | None, posted: datetime | None, zone: str) -> str | None:
    """The footer of a question an adaptive pick brought back."""
    if share is None or posted is None:
        return None
    day = posted.astimezone(zone_or_utc(zone))
    return f"back for review: {round(100 * share)} % right on {day.day} {day:%b}"
