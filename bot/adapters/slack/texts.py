"""What people read on the Slack install pages (the quiz's own texts are in
bot.quiz.texts; these name Slack, so they live with its adapter)."""

from __future__ import annotations


def install_title() -> str:
    return "Add Quizmaster to your Slack workspace"


def install_body() -> str:
    return (
        "Quizmaster posts multiple-choice questions with answer buttons, daily questions "
        "and leaderboards. Slack asks you to confirm what it may do on the next page."
    )


def add_to_slack() -> str:
    return "Add to Slack"


def installed_title() -> str:
    return "Quizmaster is installed"


def installed_body(workspace: str) -> str:
    where = f" in {workspace}" if workspace else ""
    return f"Quizmaster is ready{where}. Type /quiz help in a channel to begin."


def install_failed_title() -> str:
    return "Quizmaster was not installed"


def install_failed_body() -> str:
    return (
        "The installation did not finish, or this link was used already. "
        "Start again from the install page."
    )


def not_installed() -> str:
    return (
        "⚠️ Quizmaster is no longer installed in this workspace. Ask an admin to add it "
        "again from its install page."
    )
