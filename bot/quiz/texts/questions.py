"""A posted question, its reveal, and the private replies to a click on it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import cache

from bot.chat import Button, ButtonStyle, Field, OutMessage
from bot.dialect import Dialect
from bot.domain.records import PostTally
from bot.quiz.bank import Question
from bot.quiz.buttons import answer_custom_id
from bot.quiz.texts.common import letter, private, reviews_due_line, streak_lines

BAR_WIDTH = 10


@dataclass(frozen=True)
class QuestionView:
    """A posted question as the renderer needs it."""

    post_id: int
    bank_title: str
    question: Question
    option_order: Sequence[int]
    sequence: int | None
    total: int | None
    closes_at: datetime
    seconds: int

    def option(self, slot: int) -> str:
        return self.question.options[self.option_order[slot]]

    @property
    def heading(self) -> str:
        if self.sequence is not None and self.total is not None:
            return f"{self.bank_title} · Question {self.sequence}/{self.total}"
        return f"{self.bank_title} · Question of the day"


def _options_text(view: QuestionView, dialect: Dialect, marks: Sequence[str] | None = None) -> str:
    lines = []
    for slot in range(len(view.option_order)):
        mark = marks[slot] if marks else ""
        lines.append(f"{mark}**{letter(slot)}.** {dialect.escape_text(view.option(slot))}")
    return "\n".join(lines)


def question(view: QuestionView, dialect: Dialect) -> OutMessage:
    heading = dialect.escape_text(view.heading)
    prompt = dialect.escape_text(view.question.prompt)
    body = f"{prompt}\n\n{_options_text(view, dialect)}"
    buttons = tuple(
        Button(answer_custom_id(view.post_id, slot), letter(slot))
        for slot in range(len(view.option_order))
    )
    plain_options = "\n".join(
        f"{letter(slot)}. {dialect.escape_text(view.option(slot))}"
        for slot in range(len(view.option_order))
    )
    return OutMessage(
        text=f"{heading}\n{prompt}\n{plain_options}",
        title=heading,
        body=body,
        buttons=buttons,
        footer=_question_footer(view),
        deadline=view.closes_at,
    )


def _question_footer(view: QuestionView) -> str:
    if view.sequence is None:
        return "Open until the next daily question · one answer each, the first click counts"
    return f"{view.seconds} seconds to answer · one answer each, the first click counts"


def closes(when: datetime, dialect: Dialect) -> str:
    """The closing-time line, in the dialect's live time markup (Discord
    `<t:…:R>`, Slack `<!date^…>`), which each client shows locally."""
    return f"Closes {dialect.time(when)}"


def _bar(count: int, total: int) -> str:
    share = count / total if total else 0.0
    filled = round(share * BAR_WIDTH)
    return "█" * filled + "░" * (BAR_WIDTH - filled)


def distribution(view: QuestionView, tally: PostTally) -> str:
    lines = []
    for slot, count in enumerate(tally.counts):
        percent = round(100 * count / tally.total) if tally.total else 0
        lines.append(f"{letter(slot)} {_bar(count, tally.total)} {count} ({percent}%)")
    return "\n".join(lines)


def reveal(
    view: QuestionView,
    correct_slot: int,
    tally: PostTally,
    dialect: Dialect,
    names: Mapping[str, str] | None = None,
    streak_leaders: Sequence[tuple[str, int]] | None = None,
) -> OutMessage:
    """The closed question; a daily one (`streak_leaders` given) also shows
    who has the longest daily streaks now."""
    marks = ["✅ " if slot == correct_slot else "▫️ " for slot in range(len(view.option_order))]
    heading = dialect.escape_text(view.heading)
    prompt = dialect.escape_text(view.question.prompt)
    explanation = dialect.escape_text(view.question.explanation)
    answer = f"{letter(correct_slot)}. {dialect.escape_text(view.option(correct_slot))}"
    answers = "1 answer" if tally.total == 1 else f"{tally.total} answers"
    first = (
        f"First correct: {dialect.mention(tally.first_correct_user, names)}"
        if tally.first_correct_user
        else "Nobody got it right."
    )
    buttons = tuple(
        Button(
            answer_custom_id(view.post_id, slot),
            letter(slot),
            ButtonStyle.SUCCESS if slot == correct_slot else ButtonStyle.NEUTRAL,
            disabled=True,
        )
        for slot in range(len(view.option_order))
    )
    fields = [
        Field("Answer", answer),
        Field("Why", explanation),
        Field("How the channel voted", distribution(view, tally)),
        Field("Answers", f"{answers}. {first}"),
    ]
    text = (
        f"{heading} (closed)\n{prompt}\nAnswer: {answer}\n"
        f"{explanation}\n{distribution(view, tally)}\n{answers}. {first}"
    )
    if streak_leaders is not None:
        streak_text = streak_lines(streak_leaders, dialect, names)
        fields.append(Field("Daily streaks", streak_text))
        text += f"\nDaily streaks:\n{streak_text}"
    return OutMessage(
        text=text,
        title=f"{heading} (closed)",
        body=f"{prompt}\n\n{_options_text(view, dialect, marks)}",
        fields=tuple(fields),
        buttons=buttons,
    )


@cache  # the same few replies for every click of a burst: built once each
def locked_in(slot: int) -> OutMessage:
    return private(f"Locked in {letter(slot)}. The answer is revealed when the question closes.")


def daily_feedback(
    slot: int,
    correct: bool,
    correct_slot: int,
    explanation: str,
    streak: int | None = None,
    reviews_due: int | None = None,
) -> OutMessage:
    """The private reply to a click on an open (non-live) question; `streak` is
    the member's daily streak in the channel after this answer, `reviews_due`
    how many of their review cards are due."""
    text = verdict(slot, correct, correct_slot, explanation)
    if correct and streak:
        text += f"\n🔥 {streak}-day streak"
    if not correct and streak is not None:
        text += "\nYour daily streak starts again with the next daily question."
    if reviews_due:
        text += f"\n{reviews_due_line(reviews_due)}"
    return private(text)


def verdict(slot: int, correct: bool, correct_slot: int, explanation: str) -> str:
    if correct:
        return f"✅ {letter(slot)} is right! {explanation}"
    return f"❌ {letter(slot)} is not it: the answer is {letter(correct_slot)}. {explanation}"


def already_answered(slot: int | None) -> OutMessage:
    if slot is None:
        return private("You have already answered this question.")
    return private(f"You already answered {letter(slot)}: the first click counts.")


def question_closed(correct_slot: int) -> OutMessage:
    return private(f"This question has closed; the answer was {letter(correct_slot)}.")


def unknown_question() -> OutMessage:
    return private("I don't know that question any more; it may have been removed.")


def answer_not_counted() -> OutMessage:
    """A click whose answer could not be confirmed as stored (an error, or a write
    slower than the platform's window): clicking again is safe, since a second
    answer to the same question is never counted twice."""
    return private(
        "Your answer did not go through: I could not confirm your answer, so it may not "
        "count. Please click again; if it was saved after all, I'll say so when you "
        "click your answer again."
    )


# Why a post was not made, as `config show` and the logs say it.
QUIZ_QUESTION_GONE = "a question of this quiz is no longer in its bank"
QUESTION_GONE = "the question is no longer in its bank"
POST_TOO_LATE = "its time to be posted has passed"
