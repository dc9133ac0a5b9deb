"""Replies about live quizzes: started, stopped, skipped, or why not."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from bot.chat import OutMessage
from bot.domain.rules import MAX_READING_SECONDS, WORDS_PER_READING_SECOND
from bot.i18n import t, tn
from bot.quiz.texts.common import private
from bot.quiz.texts.teams import team_rule


@dataclass(frozen=True)
class QuizPlan:
    """What `/quiz start` tells the moderator about the quiz it started."""

    total: int
    seconds: int
    reading: Sequence[int] | None  # each question's seconds to read, when reading time is on
    teams: int | None
    study: bool


def _plan_text(plan: QuizPlan) -> str:
    text = tn(
        "Starting a quiz: 1 question, {seconds} seconds.",
        "Starting a quiz: {count} questions, {seconds} seconds each.",
        plan.total,
        seconds=plan.seconds,
    )
    if plan.reading is not None:
        times = ", ".join(t("{seconds} s", seconds=plan.seconds + extra) for extra in plan.reading)
        text += " " + t(
            "Reading time is on (a second more per {words} words, up to {most} s): the "
            "questions get {times}.",
            words=WORDS_PER_READING_SECOND,
            most=MAX_READING_SECONDS,
            times=times,
        )
    if plan.study:
        text += " " + t("Study mode: no speed points, and each answer's reply explains it at once.")
    if plan.teams:
        text += " " + t("Team game, {teams} teams.", teams=plan.teams) + " " + team_rule()
    return text


def quiz_started(plan: QuizPlan) -> OutMessage:
    return private(_plan_text(plan))


def quiz_already_running() -> OutMessage:
    return private(
        t("A quiz is already running in this channel. Use `/quiz stop` to end it first.")
    )


def no_quiz_running() -> OutMessage:
    return private(t("No quiz is running in this channel. Start one with `/quiz start`."))


def no_questions(bank: str | None, tag: str | None) -> OutMessage:
    if bank and tag:
        wanted = t("bank `{bank}` and tag `{tag}`", bank=bank, tag=tag)
    elif bank:
        wanted = t("bank `{bank}`", bank=bank)
    elif tag:
        wanted = t("tag `{tag}`", tag=tag)
    else:
        wanted = t("your choice")
    return private(t("No questions match {wanted}. Try `/quiz help`.", wanted=wanted))


def unknown_bank(bank: str, known: Sequence[str]) -> OutMessage:
    return private(
        t(
            "There is no bank `{bank}`. Banks: {banks}.",
            bank=bank,
            banks=", ".join(known) or t("none loaded"),
        )
    )


def quiz_stopped() -> OutMessage:
    return private(t("Quiz stopped."))


def question_skipped() -> OutMessage:
    return private(t("Skipped: revealing the answer now."))


def quiz_start_delayed(plan: QuizPlan, problem: str) -> OutMessage:
    return private(
        _plan_text(plan)
        + " "
        + t(
            "The platform did not take the first question yet ({problem}); I'm trying again "
            "for about a minute.",
            problem=problem,
        )
    )


def quiz_ended_undeliverable(sequence: int | None, problem: str) -> OutMessage:
    which = t("question {number}", number=sequence) if sequence else t("the next question")
    return OutMessage(
        text=t(
            "The quiz has ended: I could not post {which} ({problem}), even after retrying "
            "for a minute. Scores so far still count; a moderator can start a new quiz.",
            which=which,
            problem=problem,
        )
    )
