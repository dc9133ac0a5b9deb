"""Help, usage and the descriptions the command pickers show."""

from __future__ import annotations

from typing import TYPE_CHECKING

from bot.chat import OutMessage
from bot.domain.rules import (
    MAX_QUESTIONS,
    MAX_READING_SECONDS,
    MAX_SECONDS,
    MAX_TEAMS,
    MIN_QUESTIONS,
    MIN_SECONDS,
    MIN_TEAMS,
    POINTS_CORRECT,
    SPEED_BONUS_MAX,
    WORDS_PER_READING_SECOND,
)
from bot.quiz.texts.common import private

if TYPE_CHECKING:
    from bot.quiz.surface.registry import Surface


def _surface(surface: Surface | None) -> Surface:
    if surface is None:
        from bot.quiz.surface import declared  # late: the declarations import the texts

        return declared()
    return surface


def usage_line(surface: Surface | None = None) -> str:
    """Every way to type `/quiz`, from the registry's declarations."""
    shapes = ", ".join(f"`{v.synopsis()}`" for _, v in _surface(surface).variants())
    return f"Usage: {shapes}"


def usage_error(problem: str, surface: Surface | None = None) -> OutMessage:
    return private(f"{problem}. {usage_line(surface)}")


# One line of help per way to type a command, after its shape.
HELP_LINES = {
    "start": f"a live quiz (moderators; {MIN_QUESTIONS}–{MAX_QUESTIONS} questions, "
    f"{MIN_SECONDS}–{MAX_SECONDS} seconds each; `teams={MIN_TEAMS}`–`{MAX_TEAMS}` "
    "for a team game, teams balanced by the last 30 days' points)",
    "stop": "end the quiz now and post the scores (moderators)",
    "skip": "reveal the open question now (moderators)",
    "leaderboard": "the top ten",
    "stats": "answers, accuracy, points and streaks",
    "review": "practise your due questions privately (default 10)",
    "export": "your missed (or all) questions as an Anki deck",
    "forget-me": "delete your answers, stats, review cards and submissions",
    "config show": "this channel's settings (moderators)",
    "config set": "change a channel setting (moderators): "
    "moderator-role, mentions on|off, timezone, daily-window, grace, "
    "mode compete|study, reading-time on|off, daily-pick shuffle|adaptive",
    "schedule daily": "a daily question here (moderators), "
    "e.g. `daily 09:00 Europe/Berlin mon-fri`",
    "schedule leaderboard": "a weekly leaderboard post (moderators)",
    "schedule show": "this channel's schedules",
    "schedule off": "turn schedules off (moderators)",
    "submit": "propose a question for this community's bank (`bank=community`)",
    "submissions": "review proposed questions (moderators)",
    "remove-question": "take a question out of the community bank (moderators)",
    "reports": "the oldest open member report on a question, to dismiss, fix or remove "
    "(moderators)",
    "health": "questions whose answers look wrong, worst first, or one question's "
    "analysis (moderators)",
    "restore": "put a question removed after a report back in this community's draw (moderators)",
    "dashboard": "a private link to this community's web dashboard and your own page",
    "help": "this help",
}

# What a member who is not a moderator is told they cannot do, per command.
MODERATOR_ACTIONS = {
    "start": "start a quiz",
    "stop": "stop a quiz",
    "skip": "skip a question",
    "config": "change channel settings",
    "schedule": "change the schedule",
    "submissions": "review submissions",
    "remove-question": "remove community questions",
    "reports": "handle question reports",
    "health": "see question health",
    "restore": "put removed questions back",
}


def help_text(surface: Surface | None = None) -> str:
    lines = ["**Quizmaster** runs multiple-choice quizzes in this channel."]
    for _, variant in _surface(surface).variants():
        lines.append(f"`{variant.synopsis()}`: {HELP_LINES[variant.words]}")
    lines.append(SCORING)
    lines.append(
        "Hint: a question with one has a Hint button (`?` in the terminal); you read it "
        "privately, and a right answer after it earns half its points."
    )
    lines.append(
        "True/false questions have True and False buttons. Study mode "
        "(`config set mode study`): no speed points, and your private reply explains the "
        f"answer at once. Reading time (`config set reading-time on`): a second more per "
        f"{WORDS_PER_READING_SECOND} words of a question and its options, up to "
        f"{MAX_READING_SECONDS} s."
    )
    lines.append(
        "Pictures: a question may show one (its description is there for screen readers). "
        f"Team games: `/quiz start teams={MIN_TEAMS}` to `teams={MAX_TEAMS}`; you hear your "
        "team on your first answer, and teams are ranked by average points per member."
    )
    lines.append(
        "Daily streak: daily questions in a row answered right; "
        "a wrong or missing answer resets it."
    )
    return "\n".join(lines)


SCORING = (
    f"Scoring: {POINTS_CORRECT} points for a correct answer; in a live quiz in compete mode "
    f"plus round({SPEED_BONUS_MAX} × time left ÷ time allowed) for speed. After the hint, "
    "half (rounded down)."
)


# -- what the text grammar says when typed words do not fit -----------------------


def unknown_command_word(name: str) -> str:
    return f"unknown command `{name}`"


def pick_a_variant(shapes: list[str]) -> str:
    return "use " + " or ".join(f"`{shape}`" for shape in shapes)


def takes_no_options(words: str) -> str:
    return f"`{words}` takes no options"


def unknown_option(word: str, keywords: list[str]) -> str:
    return f"unknown option `{word}`; use " + " or ".join(keywords)


def given_twice(name: str) -> str:
    return f"{name} is given twice"


def unexpected(word: str, shape: str) -> str:
    return f"unexpected `{word}`: use `{shape}`"


def not_a_member(word: str) -> str:
    return f"`{word}` is not a member mention"


def fits_none(word: str, shapes: list[str]) -> str:
    return f"`{word}` fits none of " + ", ".join(shapes)


def needs(words: str, shape: str) -> str:
    return f"`/quiz {words}` needs {shape}"


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
    "reports": "Handle members' reports on questions (moderators)",
    "health": "Flagged questions, or one question's analysis (moderators)",
    "restore": "Put a removed question back in this server's draw (moderators)",
}


OPTION_DESCRIPTIONS = {
    "questions": f"How many questions ({MIN_QUESTIONS}–{MAX_QUESTIONS}, default 5)",
    "seconds": f"Seconds per question ({MIN_SECONDS}–{MAX_SECONDS}, default 30)",
    "bank": "Question bank to draw from",
    "tag": "Only questions with this tag",
    "teams": f"Play in {MIN_TEAMS}–{MAX_TEAMS} teams, balanced by recent points",
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
    "question": "A question's id, like ddp-04 (default: the flagged ones)",
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


def help_message(surface: Surface | None = None) -> OutMessage:
    return private(help_text(surface))


def unknown_command(name: str, surface: Surface | None = None) -> OutMessage:
    return private(f"I don't know `/quiz {name}`.\n\n{help_text(surface)}")
