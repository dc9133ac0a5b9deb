"""Replies about live quizzes: started, stopped, skipped, or why not."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from bot.chat import OutMessage
from bot.domain.rules import MAX_READING_SECONDS, WORDS_PER_READING_SECOND
from bot.quiz.texts.common import private
from bot.quiz.texts.teams import TEAM_RULE


@dataclass(frozen=True)
class QuizPlan:
    """What `/quiz start` tells the moderator about the quiz it started."""

    total: int
    seconds: int
    reading: Sequence[int] | None  # each question's seconds to read, when reading time is on
    teams: int | None
    study: bool


def _plan_text(plan: QuizPlan) -> str:
    noun = "question" if plan.total == 1 else "questions"
    text = f"Starting a quiz: {plan.total} {noun}, {plan.seconds} seconds each."
    if plan.reading is not None:
        times = ", ".join(f"{plan.seconds + extra} s" for extra in plan.reading)
        text += (
            f" Reading time is on (a second more per {WORDS_PER_READING_SECOND} words, up to "
            f"{MAX_READING_SECONDS} s): the questions get {times}."
        )
    if plan.study:
        text += " Study mode: no speed points, and each answer's reply explains it at once."
    if plan.teams:
        text += f" Team game, {plan.teams} teams. {TEAM_RULE}"
    return text


def quiz_started(plan: QuizPlan) -> OutMessage:
    return private(_plan_text(plan))


def quiz_already_running() -> OutMessage:
    return private("A quiz is already running in this channel. Use `/quiz stop` to end it first.")


def no_quiz_running() -> OutMessage:
    return private("No quiz is running in this channel. Start one with `/quiz start`.")


def no_questions(bank: str | None, tag: str | None) -> OutMessage:
    wanted = " and ".join(
        part for part in (f"bank `{bank}`" if bank else "", f"tag `{tag}`" if tag else "") if part
    )
    return private(f"No questions match {wanted or 'your choice'}. Try `/quiz help`.")


def unknown_bank(bank: str, known: Sequence[str]) -> OutMessage:
    return private(f"There is no bank `{bank}`. Banks: {', '.join(known) or 'none loaded'}.")


def quiz_stopped() -> OutMessage:
    return private("Quiz stopped.")


def question_skipped() -> OutMessage:
    return private("Skipped: revealing the answer now.")


def quiz_start_delayed(plan: QuizPlan, problem: str) -> OutMessage:
    return private(
        f"{_plan_text(plan)} The platform did not take "
        f"the first question yet ({problem}); I'm trying again for about a minute."
    )


def quiz_ended_undeliverable(sequence: int | None, problem: str) -> OutMessage:
    which = f"question {sequence}" if sequence else "the next question"
    return OutMessage(
        text=f"The quiz has ended: I could not post {which} ({problem}), even after "
        "retrying for a minute. Scores so far still count; a moderator can start a new quiz."
    )
