"""Replies about live quizzes: started, stopped, skipped, or why not."""

from __future__ import annotations

from collections.abc import Sequence

from bot.chat import OutMessage
from bot.quiz.texts.common import private


def quiz_started(total: int, seconds: int) -> OutMessage:
    noun = "question" if total == 1 else "questions"
    return private(f"Starting a quiz: {total} {noun}, {seconds} seconds each.")


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


def quiz_start_delayed(total: int, seconds: int, problem: str) -> OutMessage:
    noun = "question" if total == 1 else "questions"
    return private(
        f"Starting a quiz: {total} {noun}, {seconds} seconds each. The platform did not take "
        f"the first question yet ({problem}); I'm trying again for about a minute."
    )


def quiz_ended_undeliverable(sequence: int | None, problem: str) -> OutMessage:
    which = f"question {sequence}" if sequence else "the next question"
    return OutMessage(
        text=f"The quiz has ended: I could not post {which} ({problem}), even after "
        "retrying for a minute. Scores so far still count; a moderator can start a new quiz."
    )
