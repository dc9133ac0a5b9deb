"""A posted question, its reveal, and the private replies to a click on it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import cache

from bot.chat import Button, ButtonStyle, Field, Image, OutMessage
from bot.dialect import Dialect
from bot.domain.records import PostTally, TeamRow, TopPoints
from bot.i18n import N_, language, t, tn
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
            return t(
                "{bank} · Question {number}/{total}",
                bank=self.bank_title,
                number=self.sequence,
                total=self.total,
            )
        return t("{bank} · Question of the day", bank=self.bank_title)


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
        buttons += (Button(HINT.id(view.post_id), t(HINT_LABEL)),)
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


HINT_LABEL = N_("Hint")
REPORT_LABEL = N_("Report a problem")  # on every revealed question (bot/quiz/health.py)


def _image(question: Question, dialect: Dialect) -> Image | None:
    if question.image is None or question.image_alt is None:
        return None
    return Image(question.image, dialect.escape_text(question.image_alt))


def picture_line(image: Image) -> str:
    """The picture where none can be shown (the terminal, notifications)."""
    return t("Picture: {alt} ({url})", alt=image.alt, url=image.url)


def _question_footer(view: QuestionView) -> str:
    if view.sequence is None:
        daily = t("Open until the next daily question · one answer each, the first click counts")
        return f"{view.review} · {daily}" if view.review else daily
    return tn(
        "1 second to answer · one answer each, the first click counts",
        "{count} seconds to answer · one answer each, the first click counts",
        view.seconds,
    )


def closes(when: datetime, dialect: Dialect) -> str:
    """The closing-time line, in the dialect's live time markup (Discord
    `<t:…:R>`, Slack `<!date^…>`), which each client shows locally."""
    return t("Closes {when}", when=dialect.time(when))


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


NO_POINTS = TopPoints()


def reveal(
    view: QuestionView,
    correct_slot: int,
    tally: PostTally,
    dialect: Dialect,
    names: Mapping[str, str] | None = None,
    streak_leaders: Sequence[tuple[str, int]] | None = None,
    points: TopPoints = NO_POINTS,
    teams: Sequence[TeamRow] | None = None,
) -> OutMessage:
    """The closed question; a daily one (`streak_leaders` given) also shows
    who has the longest daily streaks now. `points`: what the members who got
    it right earned, highest first (speed points, halved after a hint), the
    first `POINTS_SHOWN` of them."""
    marks = ["✅ " if slot == correct_slot else "▫️ " for slot in range(len(view.option_order))]
    heading = dialect.escape_text(view.heading)
    prompt = dialect.escape_text(view.question.prompt)
    explanation = dialect.escape_text(view.question.explanation)
    answer = _option_line(view, dialect, correct_slot, bold=False)
    answers = tn("1 answer", "{count} answers", tally.total)
    first = (
        t("First correct: {member}", member=dialect.mention(tally.first_correct_user, names))
        if tally.first_correct_user
        else t("Nobody got it right.")
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
    buttons += (Button(REPORT.id(view.post_id), t(REPORT_LABEL)),)
    closed = t("{heading} (closed)", heading=heading)
    answer_name, answers_name = t("Answer"), t("Answers")
    fields = [
        Field(answer_name, answer),
        Field(t("Why"), explanation),
        Field(t("How the channel voted"), distribution(view, tally)),
        Field(answers_name, f"{answers}. {first}"),
    ]
    text = (
        f"{closed}\n{prompt}\n{answer_name}: {answer}\n"
        f"{explanation}\n{distribution(view, tally)}\n{answers}. {first}"
    )
    if points.top:
        points_text = points_lines(points, dialect, names)
        points_name = t("Points")
        fields.append(Field(points_name, points_text))
        text += f"\n{points_name}:\n{points_text}"
    if teams:
        team_text = board_lines(teams)
        teams_name = t("Teams so far")
        fields.append(Field(teams_name, team_text))
        text += f"\n{teams_name}:\n{team_text}"
    if streak_leaders is not None:
        streak_text = streak_lines(streak_leaders, dialect, names)
        streaks_name = t("Daily streaks")
        fields.append(Field(streaks_name, streak_text))
        text += f"\n{streaks_name}:\n{streak_text}"
    return OutMessage(
        text=text,
        title=closed,
        body=f"{prompt}\n\n{_options_text(view, dialect, marks)}",
        fields=tuple(fields),
        buttons=buttons,
        image=_image(view.question, dialect),  # the reveal keeps the picture
    )


POINTS_SHOWN = 10


def points_lines(points: TopPoints, dialect: Dialect, names: Mapping[str, str] | None) -> str:
    lines = [
        (
            t("{member} +{points} (took the hint: half points)", member=who, points=row.points)
            if row.hinted
            else f"{who} +{row.points}"
        )
        for row in points.top
        for who in (dialect.mention(row.user_id, names),)
    ]
    more = points.scorers - len(lines)
    if more > 0:
        lines.append(tn("…and 1 more", "…and {count} more", more))
    return "\n".join(lines)


def locked_in(label: str, hinted: bool = False) -> OutMessage:
    return _locked_in(label, hinted, language())


@cache  # the same few replies for every click of a burst: built once each, per language
def _locked_in(label: str, hinted: bool, _language: str) -> OutMessage:
    text = t("Locked in {label}. The answer is revealed when the question closes.", label=label)
    if hinted:
        text += " " + t("You took the hint, so a right answer earns half its points.")
    return private(text)


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
        text += "\n" + (
            tn(
                "+1 point (half points: you took the hint)",
                "+{count} points (half points: you took the hint)",
                points,
            )
            if hinted
            else tn("+1 point", "+{count} points", points)
        )
    if correct and streak:
        text += "\n" + tn("🔥 1-day streak", "🔥 {count}-day streak", streak)
    if not correct and streak is not None:
        text += "\n" + t("Your daily streak starts again with the next daily question.")
    if reviews_due:
        text += f"\n{reviews_due_line(reviews_due)}"
    return private(text)


def verdict(chosen: str, correct: bool, right: str, explanation: str) -> str:
    if correct:
        return t("✅ {chosen} is right! {explanation}", chosen=chosen, explanation=explanation)
    return t(
        "❌ {chosen} is not it: the answer is {right}. {explanation}",
        chosen=chosen,
        right=right,
        explanation=explanation,
    )


def already_answered(label: str | None) -> OutMessage:
    if label is None:
        return private(t("You have already answered this question."))
    return private(t("You already answered {label}: the first click counts.", label=label))


def question_closed(right: str) -> OutMessage:
    return private(t("This question has closed; the answer was {right}.", right=right))


def hint(text: str, dialect: Dialect) -> OutMessage:
    """The hint, privately; the answer it precedes earns half its points."""
    return private(
        t(
            "💡 Hint: {hint}\nA right answer now earns half its points.",
            hint=dialect.escape_text(text),
        )
    )


def no_hint() -> OutMessage:
    return private(t("This question has no hint."))


def hint_after_answer() -> OutMessage:
    return private(t("You have already answered this question, so the hint would not help now."))


def unknown_question() -> OutMessage:
    return private(t("I don't know that question any more; it may have been removed."))


def answer_not_counted() -> OutMessage:
    """A click whose answer could not be confirmed as stored (an error, or a write
    slower than the platform's window): clicking again is safe, since a second
    answer to the same question is never counted twice."""
    return private(
        t(
            "Your answer did not go through: I could not confirm your answer, so it may not "
            "count. Please click again; if it was saved after all, I'll say so when you "
            "click your answer again."
        )
    )


# Why a post was not made, as `config show` and the logs say it.
QUIZ_QUESTION_GONE = "a question of this quiz is no longer in its bank"
QUESTION_GONE = "the question is no longer in its bank"
POST_TOO_LATE = "its time to be posted has passed"
