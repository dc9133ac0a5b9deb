"""What people read on the Slack install pages (the quiz's own texts are in
bot.quiz.texts; these name Slack, so they live with its adapter)."""

from __future__ import annotations

from bot.i18n import t


def install_title() -> str:
    return t("Add Quizmaster to your Slack workspace")


def install_body() -> str:
    return t(
        "Quizmaster posts multiple-choice questions with answer buttons, daily questions "
        "and leaderboards. Slack asks you to confirm what it may do on the next page."
    )


def add_to_slack() -> str:
    return t("Add to Slack")


def installed_title() -> str:
    return t("Quizmaster is installed")


def installed_body(workspace: str) -> str:
    if workspace:
        return t(
            "Quizmaster is ready in {workspace}. Type /quiz help in a channel to begin.",
            workspace=workspace,
        )
    return t("Quizmaster is ready. Type /quiz help in a channel to begin.")


def install_failed_title() -> str:
    return t("Quizmaster was not installed")


def install_failed_body() -> str:
    return t(
        "The installation did not finish, or this link was used already. "
        "Start again from the install page."
    )


def not_installed() -> str:
    return t(
        "⚠️ Quizmaster is no longer installed in this workspace. Ask an admin to add it "
        "again from its install page."
    )
