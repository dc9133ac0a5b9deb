"""A posted question, its reveal, and the private replies to a click on it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import cache

from bot.chat import Button, ButtonStyle, Field, Image, OutMessage
from bot.dialect import Dialect
from bot.domain.records import MemberPoints, PostTally, TeamRow
from bot.quiz.bank import Question
from bot.quiz.buttons import HINT, REPORT, answer_custom_id
from bot.quiz.texts.common import private, reviews_due_line, slot_labels, streak_lines
from bot.quiz.texts.teams import board_lines

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
    review: str | None = None  # why an adaptive daily pick brought it back

    def option(self, slot: int) -> str:
        return self.question.options[self.option_order[slot]]

    def label(self, slot: int) -> str:
        """The slot's button: its letter, or True/False."""
        return slot_labels(self.question, self.option_order)[slot]

    @property
    def heading(self) -> str:
        if self.sequence is not None and self.total is not None:
            return f"{self.bank_title} · Question {self.sequence}/{self.total}"
        return f"{self.bank_title} · Question of the day"


def _option_line(view: QuestionView, dialect: Dialect, slot: int, *, bold: bool = True) -> str:
    """`**A.** text`, or just `**True**` where the button says the option itself."""
    if view.question.true_false:
        return f"**{view.label(slot)}**" if bold else view.label(slot)
    text = dialect.escape_text(view.option(slot))
    return f"**{view.label(slot)}.** {text}" if bold else f"{view.label(slot)}. {text}"


def _options_text(view: QuestionView, dialect: Dialect, marks: Sequence[str] | None = None) -> str:
    lines = []
    for slot in range(len(view.option_order)):
        mark = marks[slot] if marks else ""
        lines.append(f"{mark}{_option_line(view, dialect, slot)}")
    return "\n".join(lines)


def question(view: QuestionView, dialect: Dialect) -> OutMessage:
    heading = dialect.escape_text(view.heading)
    prompt = dialect.escape_text(view.question.prompt)
    body = f"{prompt}\n\n{_options_text(view, dialect)}"
    buttons = tuple(
        Button(answer_custom_id(view.post_id, slot), view.label(slot))
        for slot in range(len(view.option_order))
    )
    if view.question.hint:
        buttons += (Button(HINT.id(view.post_id), HINT_LABEL),)
    plain_options = "\n".join(
        _option_line(view, dialect, slot, bold=False) for slot in range(len(view.option_order))
    )
    image = _image(view.question, dialect)
    picture = f"\n{picture_line(image)}" if image else ""
    return OutMessage(
        text=f"{heading}\n{prompt}\n{plain_options}{picture}",
        title=heading,
        body=body,
        buttons=buttons,
        footer=_question_footer(view),
        deadline=view.closes_at,
        image=image,
    )


HINT_LABEL = "Hint"
REPORT_LABEL = "Report a problem"  # on every revealed question (bot/quiz/health.py)


def _image(question: Question, dialect: Dialect) -> Image | None:
    if question.image is None or question.image_alt is None:
        return None
    return Image(question.image, dialect.escape_text(question.image_alt))


def picture_line(image: Image) -> str:
    """The picture where none can be shown (the terminal, notifications)."""
    return f"Picture: {image.alt} ({image.url})"


def _question_footer(view: QuestionView) -> str:
    if view.sequence is None:
        daily = "Open until the next daily question · one answer each, the first click counts"
        return f"{view.review} · {daily}" if view.review else daily
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
        lines.append(f"{view.label(slot)} {_bar(count, tally.total)} {count} ({percent}%)")
    return "\n".join(lines)


def reveal(
    view: QuestionView,
    correct_slot: int,
    tally: PostTally,
    dialect: Dialect,
    names: Mapping[str, str] | None = None,
    streak_leaders: Sequence[tuple[str, int]] | None = None,
    points: Sequence[MemberPoints] = (),
    teams: Sequence[TeamRow] | None = None,
) -> OutMessage:
    """The closed question; a daily one (`streak_leaders` given) also shows
    who has the longest daily streaks now. `points`: what each member who got
    it right earned, highest first (speed points, halved after a hint)."""
    marks = ["✅ " if slot == correct_slot else "▫️ " for slot in range(len(view.option_order))]
    heading = dialect.escape_text(view.heading)
    prompt = dialect.escape_text(view.question.prompt)
    explanation = dialect.escape_text(view.question.explanation)
    answer = _option_line(view, dialect, correct_slot, bold=False)
    answers = "1 answer" if tally.total == 1 else f"{tally.total} answers"
    first = (
        f"First correct: {dialect.mention(tally.first_correct_user, names)}"
        if tally.first_correct_user
        else "Nobody got it right."
    )
    buttons = tuple(
        Button(
            answer_custom_id(view.post_id, slot),
            view.label(slot),
            ButtonStyle.SUCCESS if slot == correct_slot else ButtonStyle.NEUTRAL,
            disabled=True,
        )
        for slot in range(len(view.option_order))
    )
    buttons += (Button(REPORT.id(view.post_id), REPORT_LABEL),)
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
    if points:
        points_text = points_lines(points, dialect, names)
        fields.append(Field("Points", points_text))
        text += f"\nPoints:\n{points_text}"
    if teams:
        team_text = board_lines(teams)
        fields.append(Field("Teams so far", team_text))
        text += f"\nTeams so far:\n{team_text}"
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
        image=_image(view.question, dialect),  # the reveal keeps the picture
    )


POINTS_SHOWN = 10


def points_lines(
    points: Sequence[MemberPoints], dialect: Dialect, names: Mapping[str, str] | None
) -> str:
    lines = [
        f"{dialect.mention(row.user_id, names)} +{row.points}"
        + (" (took the hint: half points)" if row.hinted else "")
        for row in points[:POINTS_SHOWN]
    ]
    if len(points) > POINTS_SHOWN:
        lines.append(f"…and {len(points) - POINTS_SHOWN} more")
    return "\n".join(lines)


@cache  # the same few replies for every click of a burst: built once each
def locked_in(label: str, hinted: bool = False) -> OutMessage:
    after = " You took the hint, so a right answer earns half its points." if hinted else ""
    return private(f"Locked in {label}. The answer is revealed when the question closes.{after}")


def daily_feedback(
    chosen: str,
    correct: bool,
    right: str,
    explanation: str,
    streak: int | None = None,
    reviews_due: int | None = None,
    *,
    points: int | None = None,
    hinted: bool = False,
) -> OutMessage:
    """The private reply to a click on an open question (a daily one, or any in
    study mode), with the labels of the chosen and the right option; `streak`
    is the member's daily streak in the channel after this answer,
    `reviews_due` how many of their review cards are due, `points` what the
    answer earned when that is known now."""
    text = verdict(chosen, correct, right, explanation)
    if correct and points is not None:
        half = " (half points: you took the hint)" if hinted else ""
        text += f"\n+{points} points{half}"
    if correct and streak:
        text += f"\n🔥 {streak}-day streak"
    if not correct and streak is not None:
        text += "\nYour daily streak starts again with the next daily question."
    if reviews_due:
        text += f"\n{reviews_due_line(reviews_due)}"
    return private(text)


def verdict(chosen: str, correct: bool, right: str, explanation: str) -> str:
    if correct:
        return f"✅ {chosen} is right! {explanation}"
    return f"❌ {chosen} is not it: the answer is {right}. {explanation}"


def already_answered(label: str | None) -> OutMessage:
    if label is None:
        return private("You have already answered this question.")
    return private(f"You already answered {label}: the first click counts.")


def question_closed(right: str) -> OutMessage:
    return private(f"This question has closed; the answer was {right}.")


def hint(text: str, dialect: Dialect) -> OutMessage:
    """The hint, privately; the answer it precedes earns half its points."""
    return private(
        f"💡 Hint: {dialect.escape_text(text)}\nA right answer now earns half its points."
    )


def no_hint() -> OutMessage:
    return private("This question has no hint.")


def hint_after_answer() -> OutMessage:
    return private("You have already answered this question, so the hint would not help now.")


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
