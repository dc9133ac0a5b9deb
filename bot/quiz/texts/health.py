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
from bot.i18n import day_in_sentence, t, tn
from bot.quiz.bank import Question
from bot.quiz.buttons import REPORT_REVIEW
from bot.quiz.texts.common import private, true_false_label
from bot.storage.reports import ReportInfo

REASONS = ("wrong answer", "unclear", "outdated", "typo", "other")
MAX_TEXT = 500


def report_form(form_id: str) -> OutMessage:
    reason = FormField(
        "reason",
        t("What is wrong: wrong answer, unclear, outdated, typo or other"),
        max_length=20,
        placeholder=t("wrong answer"),
    )
    details = FormField(
        "text", t("More about it (optional)"), multiline=True, required=False, max_length=MAX_TEXT
    )
    return OutMessage(
        text=t("Reporting a question needs Discord or Slack."),
        form=Form(form_id, t("Report a problem"), (reason, details), t("Report"), t("Cancel")),
    )


def bad_reason(value: str) -> str:
    shown = " ".join(value.split())[:20] or t("nothing")
    return t(
        "“{value}” is not a reason: write wrong answer, unclear, outdated, typo or other.",
        value=shown,
    )


def not_revealed() -> OutMessage:
    return private(t("That question is still open or gone: report it once its answer is shown."))


def card_moved_on() -> OutMessage:
    return private(t("That card is not the last one you answered any more: report it next time."))


def too_many_reports(limit: int) -> OutMessage:
    return private(
        t(
            "You have {limit} open reports in this community already: a moderator will look "
            "at them first.",
            limit=limit,
        )
    )


def reported(question_id: str) -> OutMessage:
    return private(
        t(
            "Thanks: your report on {question} is with the moderators. You will hear "
            "privately what they decide.",
            question=question_id,
        )
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
    return private(f"{note}\n{t('No open reports.')}".strip())


def report_card(
    report: ReportInfo, judged: Judged, total: int, dialect: Dialect, note: str = ""
) -> OutMessage:
    title = t(
        "Report {number} on {question} ({total} open)",
        number=report.id,
        question=report.question_id,
        total=total,
    )
    prompt = (
        dialect.escape_text(judged.question.prompt) if judged.question else t("(not in a bank)")
    )
    # The member's own words: no markdown, no links, no mentions.
    said = dialect.escape_member(report.text) if report.text else t("(no details)")
    fields = [
        Field(t("Reason"), f"{report.reason}: {said}"),
        Field(t("Reported by"), dialect.mention(report.user_id)),
        Field(t("Analysis"), analysis_summary(judged)),
    ]
    if judged.question is not None:
        fields.insert(0, Field(t("Question"), f"{prompt}\n{_key_line(judged.question, dialect)}"))
    buttons = (
        Button(REPORT_REVIEW.id(report.id, verb="dismiss"), t("Dismiss")),
        Button(REPORT_REVIEW.id(report.id, verb="fixed"), t("Mark fixed"), ButtonStyle.SUCCESS),
        Button(
            REPORT_REVIEW.id(report.id, verb="remove"),
            t("Remove from this community"),
            ButtonStyle.DANGER,
        ),
        Button(REPORT_REVIEW.id(report.id, verb="skip"), t("Skip")),
    )
    body = "\n".join(f"**{f.name}:** {f.value}" for f in fields)
    head = f"{note}\n{title}".strip()
    return OutMessage(
        text=f"{head}\n{body}", title=title, body=note, fields=tuple(fields), buttons=buttons
    )


def _key_line(question: Question, dialect: Dialect) -> str:
    key = question.answer_index
    return t(
        "Key: {label}. {option}",
        label=option_label(question, key),
        option=dialect.escape_text(question.options[key]),
    )


def already_resolved() -> str:
    return t("That report was already closed.")


def resolved_note(report: ReportInfo, status: str) -> str:
    notes = {
        "dismissed": t("Report {number} dismissed.", number=report.id),
        "fixed": t("Report {number} marked fixed.", number=report.id),
        "removed": t(
            "Report {number}: {question} is no longer drawn in this community.",
            number=report.id,
            question=report.question_id,
        ),
    }
    return notes[status]


def reporter_told(report: ReportInfo, status: str) -> OutMessage:
    outcomes = {
        "dismissed": t("a moderator looked at it and kept the question as it is"),
        "fixed": t("a moderator marked it fixed"),
        "removed": t("the question is no longer asked in this community"),
    }
    return private(
        t(
            "About your report on {question} ({reason}): {outcome}. Thank you.",
            question=report.question_id,
            reason=report.reason,
            outcome=outcomes[status],
        )
    )


# -- /quiz health ---------------------------------------------------------------------------


def flag_name(finding: Finding) -> str:
    return t(finding.flag.value)


def finding_reason(finding: Finding) -> str:
    """Why a question is flagged, in the reader's language."""
    return t(finding.message, **finding.values)


def option_label(question: Question, index: int) -> str:
    """An option's name in bank order (members saw them shuffled)."""
    if question.true_false:
        return true_false_label(question.options[index])
    return "ABCDE"[index]


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{round(100 * value)} %"


def analysis_summary(judged: Judged) -> str:
    counts = judged.counts
    if counts is None or not counts.answered:
        lines = [t("No answers yet.")]
    else:
        d = counts.discrimination
        lines = [
            tn(
                "1 answer, {right} right, discrimination {discrimination}",
                "{count} answers, {right} right, discrimination {discrimination}",
                counts.answered,
                right=_pct(counts.difficulty),
                discrimination="–" if d is None else f"{d:+.2f}",
            )
        ]
    lines += [f"⚑ {flag_name(f)}: {finding_reason(f)}" for f in judged.found]
    if judged.counts is not None and judged.counts.answered < MIN_ANSWERS and not judged.found:
        lines.append(t("Flags need {count} answers.", count=MIN_ANSWERS))
    return "\n".join(lines)


def health_list(judged: Sequence[Judged], dialect: Dialect) -> OutMessage:
    title = t("Questions to look at")
    if not judged:
        body = t(
            "No flagged questions here. Flags need {count} answers (30 for the option flags), "
            "or two open reports.",
            count=MIN_ANSWERS,
        )
        return OutMessage(text=f"{title}\n{body}", title=title, body=body)
    lines = []
    for item in judged:
        flags = "; ".join(f"{flag_name(f)} ({finding_reason(f)})" for f in item.found)
        answers = (
            tn("1 answer", "{count} answers", item.counts.answered)
            if item.counts
            else t("no answers")
        )
        lines.append(f"• **{item.question_id}** ({answers}): {flags}")
    lines.append(t("`/quiz health <question-id>` shows one question's analysis."))
    body = "\n".join(lines)
    return OutMessage(text=f"{title}\n{body}", title=title, body=body)


def health_detail(judged: Judged, dialect: Dialect) -> OutMessage:
    title = t("Health of {question}", question=judged.question_id)
    question, counts = judged.question, judged.counts
    lines = []
    if question is not None:
        lines.append(dialect.escape_text(question.prompt))
    lines.append(analysis_summary(judged))
    if question is not None and counts is not None and counts.answered:
        lines.append(
            t(
                "Chosen by · all / strongest 27 % / weakest 27 % ({upper} and {lower} answers)",
                upper=counts.upper_answered,
                lower=counts.lower_answered,
            )
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
        lines.append(t("Open reports: {count}", count=judged.open_reports))
    body = "\n".join(lines)
    return OutMessage(text=f"{title}\n{body}", title=title, body=body)


def _group(count: int, total: int) -> float | None:
    return count / total if total else None


def restored(question_id: str) -> OutMessage:
    return private(t("{question} is back in this community's draw.", question=question_id))


def not_withdrawn(question_id: str) -> OutMessage:
    return private(
        t(
            "{question} was not removed in this community: it is already drawn here.",
            question=question_id,
        )
    )


def unknown_question(question_id: str) -> OutMessage:
    shown = " ".join(question_id.split())[:64]
    return private(
        t("There is no question `{question}` in this community's banks.", question=shown)
    )


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
    flags = "; ".join(f"{flag_name(f)}: {finding_reason(f)}" for f in judged.found)
    return [judged.question_id, *numbers, str(judged.open_reports), flags]


def nothing_answered(platform: str, community: str) -> str:
    return f"No questions are drawn or answered in {platform} community {community}."


# -- the adaptive daily pick ------------------------------------------------------------------


def review_note(share: float | None, posted: datetime | None, zone: str) -> str | None:
    """The footer of a question an adaptive pick brought back."""
    if share is None or posted is None:
        return None
    day = posted.astimezone(zone_or_utc(zone))
    return t(
        "back for review: {share} right on {day}",
        share=f"{round(100 * share)} %",
        day=day_in_sentence(day.date()),
    )
