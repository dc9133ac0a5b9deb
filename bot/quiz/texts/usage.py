"""Help, usage and the descriptions the command pickers show."""

from __future__ import annotations

from bot.chat import OutMessage
from bot.domain.rules import (
    MAX_QUESTIONS,
    MAX_SECONDS,
    MIN_QUESTIONS,
    MIN_SECONDS,
)
from bot.quiz.texts.common import private

USAGE = (
    "Usage: `/quiz start [questions] [seconds] [bank] [tag]`, `/quiz stop`, "
    "`/quiz skip`, `/quiz leaderboard [channel|server] [week|month|all|streaks]`, "
    "`/quiz stats [@user]`, `/quiz review [count]`, `/quiz export [missed|all]`, "
    "`/quiz forget-me`, `/quiz config show`, "
    "`/quiz config set <setting> <value>`, "
    "`/quiz schedule daily <HH:MM> [timezone] [days] [bank=ID] [tag=TAG]`, "
    "`/quiz schedule leaderboard <day> <HH:MM> [timezone]`, `/quiz schedule show`, "
    "`/quiz schedule off [daily|leaderboard]`, `/quiz submit`, `/quiz submissions`, "
    "`/quiz remove-question <id>`, `/quiz dashboard`, `/quiz help`"
)


def usage_error(problem: str) -> OutMessage:
    return private(f"{problem}. {USAGE}")


HELP = f"""\
**Quizmaster** runs multiple-choice quizzes in this channel.
`/quiz start [questions] [seconds] [bank] [tag]`: a live quiz (moderators; \
{MIN_QUESTIONS}–{MAX_QUESTIONS} questions, {MIN_SECONDS}–{MAX_SECONDS} seconds each)
`/quiz stop`, `/quiz skip`: end the quiz or reveal the current question (moderators)
`/quiz leaderboard [channel|server] [week|month|all|streaks]`: the top ten
`/quiz stats [user]`: answers, accuracy, points and streaks
`/quiz review [count]`: practise your due questions privately (default 10)
`/quiz export [missed|all]`: your missed (or all) questions as an Anki deck
`/quiz forget-me`: delete your answers, stats, review cards and submissions
`/quiz config show`, `/quiz config set <setting> <value>`: channel settings (moderators): \
moderator-role, mentions on|off, timezone, daily-window, grace
`/quiz schedule daily <HH:MM> [timezone] [days]`: a daily question here (moderators), \
e.g. `daily 09:00 Europe/Berlin mon-fri`
`/quiz schedule leaderboard <day> <HH:MM> [timezone]`: a weekly leaderboard post \
(moderators)
`/quiz schedule show`, `/quiz schedule off [daily|leaderboard]`
`/quiz submit`: propose a question for this community's bank (`bank=community`)
`/quiz submissions`: review proposed questions (moderators); \
`/quiz remove-question <id>`: take one out (moderators)
`/quiz dashboard`: a private link to this community's web dashboard and your own page
Scoring: 10 points for a correct answer, plus up to 5 for speed in a live quiz.
Daily streak: daily questions in a row answered right; a wrong or missing answer resets it."""


# What the platforms' command pickers show next to each command and option.
COMMAND_DESCRIPTIONS = {
    "quiz": "Multiple-choice quizzes in this channel",
    "start": "Start a live quiz here (moderators)",
    "stop": "End the quiz now and post the scores (moderators)",
    "skip": "Reveal the open question now (moderators)",
    "leaderboard": "The top ten, for everyone to see",
    "stats": "Answers, accuracy, points and streaks",
    "forget-me": "Delete your answers, stats, review cards and submissions",
    "review": "Practise your due questions, privately",
    "export": "Your missed (or all) questions as an Anki deck",
    "help": "How the quiz works",
    "dashboard": "A private link to the web dashboard",
    "config": "Channel settings",
    "config show": "Show this channel's settings",
    "config set": "Change a channel setting (moderators)",
    "schedule": "Daily questions and weekly leaderboard posts",
    "schedule daily": "Post a question here every day at a local time (moderators)",
    "schedule leaderboard": "Post last week's leaderboard here weekly (moderators)",
    "schedule show": "Show this channel's schedules",
    "schedule off": "Turn schedules off (moderators)",
    "submit": "Propose a question for this server's community bank",
    "submissions": "Review proposed questions (moderators)",
    "remove-question": "Take a question out of the community bank (moderators)",
}


OPTION_DESCRIPTIONS = {
    "questions": f"How many questions ({MIN_QUESTIONS}–{MAX_QUESTIONS}, default 5)",
    "seconds": f"Seconds per question ({MIN_SECONDS}–{MAX_SECONDS}, default 30)",
    "bank": "Question bank to draw from",
    "tag": "Only questions with this tag",
    "scope": "This channel or the whole server",
    "period": "Which period",
    "user": "Whose stats (default: yours)",
    "setting": "Which setting",
    "value": "Role (`none` clears it), on/off, a time zone like Europe/Berlin, hours or minutes",
    "time": "Local time, 24-hour HH:MM, e.g. 09:00",
    "timezone": "IANA time zone, e.g. Europe/Berlin (default: the channel's)",
    "days": "Days, e.g. mon-fri or mon,wed,fri (default: every day)",
    "day": "Day of the week to post on",
    "which": "Which schedule (default: both)",
    "count": "How many cards at most (1–50, default 10)",
    "questions_kind": "missed (default) or all the questions you answered",
    "id": "The question's id, like community-12",
}


def dashboard_links(community_url: str, member_url: str, hours: int) -> OutMessage:
    return private(
        f"**Dashboard** (links valid for {hours} hours, just for you: please don't share "
        f"them)\nThis community's leaderboards and questions: {community_url}\n"
        f"Your own page: {member_url}"
    )


def dashboard_off() -> OutMessage:
    return private(
        "The dashboard is off on this bot: whoever runs it can turn it on by setting "
        "QUIZ_WEB_SECRET."
    )


def help_message() -> OutMessage:
    return private(HELP)


def unknown_command(name: str) -> OutMessage:
    return private(f"I don't know `/quiz {name}`.\n\n{HELP}")
