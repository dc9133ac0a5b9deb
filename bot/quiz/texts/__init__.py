"""Every sentence a person reads, split by feature. Texts take neutral data and
return `bot.chat.OutMessage`s; the adapters only lay them out."""

from bot.quiz.texts import (
    boards,
    common,
    health,
    live,
    questions,
    settings,
    study,
    submissions,
    teams,
    usage,
)

__all__ = [
    "boards",
    "common",
    "health",
    "live",
    "questions",
    "settings",
    "study",
    "submissions",
    "teams",
    "usage",
]
