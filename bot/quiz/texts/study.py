"""Spaced-repetition review cards and the Anki export, as the member reads them."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime

from bot.chat import Attachment, Button, OutMessage
from bot.dialect import Dialect
from bot.i18n import day_and_time, t, tn
from bot.quiz.bank import Question
from bot.quiz.buttons import REPORT_CARD, card_custom_id
from bot.quiz.texts.common import private, slot_labels
from bot.quiz.texts.questions import verdict


@dataclass(frozen=True)
class ReviewCardView:
    """A review card as the member sees it: `number` counts cards in this run."""

    session_id: int
    step: int
    bank_title: str
    question: Question
    option_order: Sequence[int]
    number: int
    limit: int
    due: int  # cards due now, this one included

    def option(self, slot: int) -> str:
        return self.question.options[self.option_order[slot]]

    def label(self, slot: int) -> str:
        return slot_labels(self.question, self.option_order)[slot]

    def line(self, slot: int, dialect: Dialect, *, bold: bool) -> str:
        """`**A.** text`, or just `**True**` for a true/false card."""
        if self.question.true_false:
            return f"**{self.label(slot)}**" if bold else self.label(slot)
        text = dialect.escape_text(self.option(slot))
        return f"**{self.label(slot)}.** {text}" if bold else f"{self.label(slot)}. {text}"


def review_time(local: datetime) -> str:
    """A review time in the channel's zone: `Thu 3 Dec, 09:00`, in the reader's language."""
    return day_and_time(local)


def study_card(
    view: ReviewCardView, dialect: Dialect, before: str = "", report: Button | None = None
) -> OutMessage:
    """One card with its letter buttons; `before` is the verdict on the last one."""
    title = t("Review · {bank}", bank=dialect.escape_text(view.bank_title))
    prompt = dialect.escape_text(view.question.prompt)
    slots = range(len(view.option_order))
    options = "\n".join(view.line(slot, dialect, bold=True) for slot in slots)
    lead = f"{before}\n\n" if before else ""
    body = f"{lead}{prompt}\n\n{options}"
    buttons = tuple(
        Button(card_custom_id(view.session_id, view.step, slot), view.label(slot)) for slot in slots
    ) + ((report,) if report else ())
    plain = "\n".join(view.line(slot, dialect, bold=False) for slot in slots)
    footer = t(
        "Card {number} of at most {limit} · {due} due · only you see this; it does not "
        "change points or streaks",
        number=view.number,
        limit=view.limit,
        due=view.due,
    )
    text = f"{lead}{title}\n{prompt}\n{plain}"
    return OutMessage(text=text, title=title, body=body, buttons=buttons, footer=footer)


def review_verdict(
    dialect: Dialect,
    question: Question,
    option_order: Sequence[int],
    slot: int,
    correct_slot: int,
) -> str:
    labels = slot_labels(question, option_order)
    correct = slot == correct_slot
    explanation = dialect.escape_text(question.explanation)
    return verdict(labels[slot], correct, labels[correct_slot], explanation)


def review_done(
    before: str, reviewed: int, next_review: str | None, report: Button | None = None
) -> OutMessage:
    text = f"{before}\n\n" + tn("Review done: 1 card.", "Review done: {count} cards.", reviewed)
    if next_review:
        text += " " + t("Next review: {when}", when=next_review)
    return OutMessage(text=text, body=text, buttons=(report,) if report else ())


def report_card_button(session_id: int, step: int) -> Button:
    """Under a verdict: report the card just answered (bot/quiz/health.py)."""
    return Button(REPORT_CARD.id(session_id, step), t("Report a problem"))


def nothing_to_review(next_review: str | None) -> OutMessage:
    if next_review is None:
        return private(
            t(
                "Nothing to review yet. Questions you answer in quizzes and daily questions "
                "come back here for review when they are due."
            )
        )
    return private(t("Nothing to review. Next review: {when}", when=next_review))


def review_not_yours() -> OutMessage:
    return private(t("This review card belongs to someone else. `/quiz review` starts your own."))


def review_already_answered() -> OutMessage:
    return private(t("You already answered this card; your review continues below it."))


def review_ended() -> OutMessage:
    return private(t("This review has ended. `/quiz review` starts a new one."))


def review_count_problem(value: str, low: int, high: int) -> OutMessage:
    return private(
        t(
            "The number of cards must be a whole number from {low} to {high} (got {value}).",
            low=low,
            high=high,
            value=value,
        )
    )


EXPORT_CHOICES = ("missed", "all")


def export_file_name(which: str) -> str:
    return f"quizmaster-{which}.apkg"


def export_ready(which: str, count: int, deck: Attachment) -> OutMessage:
    if which == "missed":
        what = tn("1 question you missed", "{count} questions you missed", count)
    else:
        what = tn("1 question you answered", "{count} questions you answered", count)
    text = t(
        "Your Anki deck: {what}. In Anki choose File → Import and pick {file}; importing a "
        "newer export updates these cards.",
        what=what,
        file=f"`{deck.filename}`",
    )
    return replace(private(text), attachment=deck)


def nothing_to_export(which: str) -> OutMessage:
    if which == "missed":
        return private(
            t("No missed questions to export yet. `/quiz export all` exports every one.")
        )
    return private(t("No answered questions to export yet."))


def export_choice_problem(value: str) -> OutMessage:
    return private(t("Export `missed` (the default) or `all`, not `{value}`.", value=value))


def file_sent_to_direct_messages() -> OutMessage:
    return private(t("I sent your Anki deck to our direct messages."))


def file_not_delivered(problem: str) -> OutMessage:
    return private(
        t("I could not send you the file ({problem}). Please try again later.", problem=problem)
    )


def file_saved(path: str) -> OutMessage:
    return private(t("Saved {path}", path=path))


def file_not_saved(path: str, reason: str) -> OutMessage:
    if reason:
        text = t(
            "Could not save {path} ({reason}). Nothing else changed: export again from a "
            "folder you can write to.",
            path=path,
            reason=reason,
        )
    else:
        text = t(
            "Could not save {path}. Nothing else changed: export again from a folder you "
            "can write to.",
            path=path,
        )
    return private(text)
