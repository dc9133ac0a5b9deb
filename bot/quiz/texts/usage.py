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
from bot.i18n import N_, t
from bot.quiz.texts.common import private

if TYPE_CHECKING:
    from bot.quiz.surface.registry import Surface


def _surface(surface: Surface | None) -> Surface:
    if surface is None:
        from bot.quiz.surface import declared  # late: the declarations import the texts

        return declared()
    return surface


# The numbers the help and the descriptions quote, by placeholder name.
LIMITS = {
    "min_questions": MIN_QUESTIONS,
    "max_questions": MAX_QUESTIONS,
    "min_seconds": MIN_SECONDS,
    "max_seconds": MAX_SECONDS,
    "min_teams": MIN_TEAMS,
    "max_teams": MAX_TEAMS,
    "words": WORDS_PER_READING_SECOND,
    "max_reading": MAX_READING_SECONDS,
    "points": POINTS_CORRECT,
    "speed": SPEED_BONUS_MAX,
}


def described(message: str) -> str:
    """A help line or a description in the current language, its numbers filled in."""
    return t(message, **LIMITS)


def usage_line(surface: Surface | None = None) -> str:
    """Every way to type `/quiz`, from the registry's declarations."""
    shapes = ", ".join(f"`{v.synopsis()}`" for _, v in _surface(surface).variants())
    return t("Usage: {shapes}", shapes=shapes)


def usage_error(problem: str, surface: Surface | None = None) -> OutMessage:
    return private(f"{problem}. {usage_line(surface)}")


# One line of help per way to type a command, after its shape (`described` fills them).
HELP_LINES = {
    "start": N_(
        "a live quiz (moderators; {min_questions}–{max_questions} questions, "
        "{min_seconds}–{max_seconds} seconds each; `teams={min_teams}`–`{max_teams}` "
        "for a team game, teams balanced by the last 30 days' points)"
    ),
    "stop": N_("end the quiz now and post the scores (moderators)"),
    "skip": N_("reveal the open question now (moderators)"),
    "leaderboard": N_("the top ten"),
    "stats": N_("answers, accuracy, points and streaks"),
    "review": N_("practise your due questions privately (default 10)"),
    "export": N_("your missed (or all) questions as an Anki deck"),
    "forget-me": N_("delete your answers, stats, review cards and submissions"),
    "config show": N_("this channel's settings (moderators)"),
    "config set": N_(
        "change a channel setting (moderators): moderator-role, mentions on|off, timezone, "
        "daily-window, grace, mode compete|study, reading-time on|off, daily-pick "
        "shuffle|adaptive, language (the whole community's)"
    ),
    "schedule daily": N_(
        "a daily question here (moderators), e.g. `daily 09:00 Europe/Berlin mon-fri`"
    ),
    "schedule leaderboard": N_("a weekly leaderboard post (moderators)"),
    "schedule show": N_("this channel's schedules"),
    "schedule off": N_("turn schedules off (moderators)"),
    "submit": N_("propose a question for this community's bank (`bank=community`)"),
    "submissions": N_("review proposed questions (moderators)"),
    "remove-question": N_("take a question out of the community bank (moderators)"),
    "reports": N_(
        "the oldest open member report on a question, to dismiss, fix or remove (moderators)"
    ),
    "health": N_(
        "questions whose answers look wrong, worst first, or one question's analysis (moderators)"
    ),
    "restore": N_(
        "put a question removed after a report back in this community's draw (moderators)"
    ),
    "dashboard": N_("a private link to this community's web dashboard and your own page"),
    "help": N_("this help"),
}

# What a member who is not a moderator is told they cannot do, per command.
MODERATOR_ACTIONS = {
    "start": N_("start a quiz"),
    "stop": N_("stop a quiz"),
    "skip": N_("skip a question"),
    "config": N_("change channel settings"),
    "schedule": N_("change the schedule"),
    "submissions": N_("review submissions"),
    "remove-question": N_("remove community questions"),
    "reports": N_("handle question reports"),
    "health": N_("see question health"),
    "restore": N_("put removed questions back"),
}


def moderator_action(command: str) -> str:
    return t(MODERATOR_ACTIONS[command])


def help_text(surface: Surface | None = None) -> str:
    lines = [t("**Quizmaster** runs multiple-choice quizzes in this channel.")]
    for _, variant in _surface(surface).variants():
        lines.append(f"`{variant.synopsis()}`: {described(HELP_LINES[variant.words])}")
    lines.append(scoring())
    lines.append(
        t(
            "Hint: a question with one has a Hint button (`?` in the terminal); you read it "
            "privately, and a right answer after it earns half its points."
        )
    )
    lines.append(
        described(
            "True/false questions have True and False buttons. Study mode "
            "(`config set mode study`): no speed points, and your private reply explains the "
            "answer at once. Reading time (`config set reading-time on`): a second more per "
            "{words} words of a question and its options, up to {max_reading} s."
        )
    )
    lines.append(
        described(
            "Pictures: a question may show one (its description is there for screen readers). "
            "Team games: `/quiz start teams={min_teams}` to `teams={max_teams}`; you hear your "
            "team on your first answer, and teams are ranked by average points per member."
        )
    )
    lines.append(
        t(
            "Daily streak: daily questions in a row answered right; "
            "a wrong or missing answer resets it."
        )
    )
    lines.append(
        t(
            "Language: channel posts speak the community's language (`config set language`), "
            "private replies your own."
        )
    )
    return "\n".join(lines)


def scoring() -> str:
    return described(
        "Scoring: {points} points for a correct answer; in a live quiz in compete mode "
        "plus round({speed} × time left ÷ time allowed) for speed. After the hint, "
        "half (rounded down)."
    )


# -- what the text grammar says when typed words do not fit -----------------------


def unknown_command_word(name: str) -> str:
    return t("unknown command `{name}`", name=name)


def pick_a_variant(shapes: list[str]) -> str:
    return t("use {shapes}", shapes=t(" or ").join(f"`{shape}`" for shape in shapes))


def takes_no_options(words: str) -> str:
    return t("`{words}` takes no options", words=words)


def unknown_option(word: str, keywords: list[str]) -> str:
    return t(
        "unknown option `{word}`; use {options}",
        word=word,
        options=t(" or ").join(f"`{keyword}`" for keyword in keywords),
    )


def given_twice(name: str) -> str:
    return t("{name} is given twice", name=name)


def unexpected(word: str, shape: str) -> str:
    return t("unexpected `{word}`: use `{shape}`", word=word, shape=shape)


def not_a_member(word: str) -> str:
    return t("`{word}` is not a member mention", word=word)


def fits_none(word: str, shapes: list[str]) -> str:
    return t(
        "`{word}` fits none of {shapes}",
        word=word,
        shapes=", ".join(f"`{shape}`" for shape in shapes),
    )


def needs(words: str, shape: str) -> str:
    return t("`/quiz {words}` needs {shape}", words=words, shape=shape)


# What the platforms' command pickers show next to each command and option: the
# English msgids (`described` fills the numbers), which Discord's translator
# looks up for each of the client languages we ship.
COMMAND_DESCRIPTIONS = {
    "quiz": N_("Multiple-choice quizzes in this channel"),
    "start": N_("Start a live quiz here (moderators)"),
    "stop": N_("End the quiz now and post the scores (moderators)"),
    "skip": N_("Reveal the open question now (moderators)"),
    "leaderboard": N_("The top ten, for everyone to see"),
    "stats": N_("Answers, accuracy, points and streaks"),
    "forget-me": N_("Delete your answers, stats, review cards and submissions"),
    "review": N_("Practise your due questions, privately"),
    "export": N_("Your missed (or all) questions as an Anki deck"),
    "help": N_("How the quiz works"),
    "dashboard": N_("A private link to the web dashboard"),
    "config": N_("Channel settings"),
    "config show": N_("Show this channel's settings"),
    "config set": N_("Change a channel setting (moderators)"),
    "schedule": N_("Daily questions and weekly leaderboard posts"),
    "schedule daily": N_("Post a question here every day at a local time (moderators)"),
    "schedule leaderboard": N_("Post last week's leaderboard here weekly (moderators)"),
    "schedule show": N_("Show this channel's schedules"),
    "schedule off": N_("Turn schedules off (moderators)"),
    "submit": N_("Propose a question for this server's community bank"),
    "submissions": N_("Review proposed questions (moderators)"),
    "remove-question": N_("Take a question out of the community bank (moderators)"),
    "reports": N_("Handle members' reports on questions (moderators)"),
    "health": N_("Flagged questions, or one question's analysis (moderators)"),
    "restore": N_("Put a removed question back in this server's draw (moderators)"),
}


OPTION_DESCRIPTIONS = {
    "questions": N_("How many questions ({min_questions}–{max_questions}, default 5)"),
    "seconds": N_("Seconds per question ({min_seconds}–{max_seconds}, default 30)"),
    "bank": N_("Question bank to draw from"),
    "tag": N_("Only questions with this tag"),
    "teams": N_("Play in {min_teams}–{max_teams} teams, balanced by recent points"),
    "scope": N_("This channel or the whole server"),
    "period": N_("Which period"),
    "user": N_("Whose stats (default: yours)"),
    "setting": N_("Which setting"),
    "value": N_(
        "Role (`none` clears it), on/off, a time zone like Europe/Berlin, hours, minutes or "
        "a language"
    ),
    "time": N_("Local time, 24-hour HH:MM, e.g. 09:00"),
    "timezone": N_("IANA time zone, e.g. Europe/Berlin (default: the channel's)"),
    "days": N_("Days, e.g. mon-fri or mon,wed,fri (default: every day)"),
    "day": N_("Day of the week to post on"),
    "which": N_("Which schedule (default: both)"),
    "count": N_("How many cards at most (1–50, default 10)"),
    "questions_kind": N_("missed (default) or all the questions you answered"),
    "id": N_("The question's id, like community-12"),
    "question": N_("A question's id, like ddp-04 (default: the flagged ones)"),
}


def dashboard_links(community_url: str, member_url: str, hours: int) -> OutMessage:
    return private(
        t(
            "**Dashboard** (links valid for {hours} hours, just for you: please don't share "
            "them)\nThis community's leaderboards and questions: {community_url}\n"
            "Your own page: {member_url}",
            hours=hours,
            community_url=community_url,
            member_url=member_url,
        )
    )


def dashboard_off() -> OutMessage:
    return private(
        t(
            "The dashboard is off on this bot: whoever runs it can turn it on by setting "
            "`QUIZ_WEB_SECRET`."
        )
    )


def help_message(surface: Surface | None = None) -> OutMessage:
    return private(help_text(surface))


def unknown_command(name: str, surface: Surface | None = None) -> OutMessage:
    return private(t("I don't know `/quiz {name}`.", name=name) + f"\n\n{help_text(surface)}")
