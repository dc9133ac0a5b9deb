"""Texts every feature uses: naming members, letters, private replies, refusals and faults."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from bot.chat import OutMessage
from bot.dialect import Dialect
from bot.i18n import t, tn
from bot.quiz.bank import LETTERS, Question


def letter(slot: int) -> str:
    return LETTERS[slot]


def slot_labels(question: Question, option_order: Sequence[int]) -> list[str]:
    """What each slot's button says: its letter, or True/False for a true/false question."""
    if question.true_false:
        return [true_false_label(question.options[index]) for index in option_order]
    return [letter(slot) for slot in range(len(option_order))]


def true_false_label(option: str) -> str:
    """A true/false question's option, in the reader's language."""
    return t("True") if option.casefold() == "true" else t("False")


def days(count: int) -> str:
    return tn("1 day", "{count} days", count)


def percent(part: int, whole: int) -> str:
    return f"{round(100 * part / whole)}%" if whole else "–"


def private(text: str) -> OutMessage:
    return OutMessage(text=text, body=text)


def not_moderator(action: str, moderator_role: str | None = None) -> OutMessage:
    who = (
        t("members of `{role}`", role=moderator_role)
        if moderator_role
        else t("the channel's moderator role")
    )
    return private(
        t(
            "Only moderators can {action}. Ask a server or workspace admin, or one of {who}, "
            "to do it.",
            action=action,
            who=who,
        )
    )


def not_community_moderator(action: str) -> OutMessage:
    return private(
        t(
            "Only moderators can {action}. It changes the questions of every channel, so it "
            "needs a server or workspace admin: a channel's moderator role is not enough.",
            action=action,
        )
    )


def cannot_post(problem: str) -> OutMessage:
    return private(
        t(
            "I can't post in this channel ({problem}). Check that I'm in this channel and "
            "allowed to post here, then try again.",
            problem=problem,
        )
    )


def bad_value(problem: str) -> OutMessage:
    return private(t("{problem}. Try `/quiz help`.", problem=problem))


def not_whole_number(name: str, value: object) -> OutMessage:
    return bad_value(t("{name} must be a whole number (got {value})", name=name, value=value))


def out_of_range(name: str, value: int, low: int, high: int) -> OutMessage:
    return bad_value(
        t(
            "{name} must be between {low} and {high} (got {value})",
            name=name,
            low=low,
            high=high,
            value=value,
        )
    )


def one_of(words: Sequence[str]) -> str:
    """`a`, `b` or `c`: words the member types, in the reader's language around them."""
    shown = [f"`{word}`" for word in words]
    return t(" or ").join([", ".join(shown[:-1]), shown[-1]] if len(shown) > 1 else shown)


def not_one_of(name: str, allowed: Sequence[str], value: str) -> OutMessage:
    return bad_value(
        t(
            "{name} must be {allowed} (got {value})",
            name=name,
            allowed=one_of(allowed),
            value=value,
        )
    )


def pick_a_letter(letters: Sequence[str]) -> OutMessage:
    return private(t("Type one of {letters} and press Enter.", letters=", ".join(letters)))


def console_intro() -> OutMessage:
    return private(
        t(
            "Local console channel. Type `/quiz start 3 20` to start a quiz, a letter to "
            "answer, `quit` to leave."
        )
    )


def failure() -> OutMessage:
    return private(t("Something went wrong on my side; nothing was lost. Please try again."))


def malformed_id() -> OutMessage:
    return private(t("I can't accept this: the member or channel id it came with is malformed."))


def too_slow() -> OutMessage:
    """A command that outlasted the wait for it; it may still finish."""
    return private(
        t(
            "That is taking me too long, so I stopped waiting; it may still happen. "
            "Please check in a moment before trying again."
        )
    )


def form_too_slow() -> OutMessage:
    return private(t("Opening the form took me too long; please run the command again."))


def restarting() -> OutMessage:
    return private(t("The bot is restarting; please try again in a moment."))


def short(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def server_only() -> OutMessage:
    return private(t("Quizzes run in server channels: use `/quiz` in a channel of a server."))


def streak_lines(
    leaders: Sequence[tuple[str, int]], dialect: Dialect, names: Mapping[str, str] | None
) -> str:
    if not leaders:
        return t("No streaks yet: answer the next daily question right to start one.")
    return "\n".join(f"🔥 {dialect.mention(user, names)}: {days(count)}" for user, count in leaders)


def reviews_due_line(count: int) -> str:
    if count == 0:
        return t("Reviews due: none")
    return tn(
        "📚 1 review is due: `/quiz review`", "📚 {count} reviews are due: `/quiz review`", count
    )
