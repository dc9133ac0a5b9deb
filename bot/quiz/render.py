"""Everything a person reads, rendered from neutral data in one place, so that
Discord, Slack and the terminal all say the same thing."""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import date, datetime, timedelta
from functools import cache

from bot.chat import Attachment, Button, ButtonStyle, Field, Form, FormField, OutMessage
from bot.quiz.bank import LETTERS, Question
from bot.quiz.escape import escape_name, escape_text
from bot.quiz.rules import (
    MAX_DAILY_WINDOW_HOURS,
    MAX_GRACE_MINUTES,
    MAX_QUESTIONS,
    MAX_SECONDS,
    MIN_DAILY_WINDOW_HOURS,
    MIN_GRACE_MINUTES,
    MIN_QUESTIONS,
    MIN_SECONDS,
    Period,
    Scope,
)
from bot.storage.records import ChannelInfo, PostTally, QuizResult, RankRow
from bot.storage.submissions import SubmissionInfo

BAR_WIDTH = 10
ANSWER_PREFIX = "qm:a"
# Review cards' buttons: `qm:r:<session>:<step>:<slot>`, told apart from answer
# buttons by the prefix; the session row holds the rest.
CARD_PREFIX = "qm:r"


def answer_custom_id(post_id: int, slot: int) -> str:
    """The id a letter button carries: which post and which slot, nothing more."""
    return f"{ANSWER_PREFIX}:{post_id}:{slot}"


def parse_answer_custom_id(custom_id: str) -> tuple[int, int] | None:
    parts = custom_id.split(":")
    if len(parts) != 4 or ":".join(parts[:2]) != ANSWER_PREFIX:
        return None
    post, slot = parts[2], parts[3]
    if not (post.isdigit() and slot.isdigit()) or len(post) > 18:
        return None
    return int(post), int(slot)


def card_custom_id(session_id: int, step: int, slot: int) -> str:
    return f"{CARD_PREFIX}:{session_id}:{step}:{slot}"


def parse_card_custom_id(custom_id: str) -> tuple[int, int, int] | None:
    """(session, step, slot) of a review card button's id, or None if it is not one."""
    parts = custom_id.split(":")
    if len(parts) != 5 or ":".join(parts[:2]) != CARD_PREFIX:
        return None
    numbers = parts[2:]
    if not all(part.isdigit() and len(part) <= 18 for part in numbers):
        return None
    return int(numbers[0]), int(numbers[1]), int(numbers[2])


# Review buttons and forms: `qm:s:<verb>:<submission>` and `qm:f:<form>[:<submission>]`.
REVIEW_PREFIX = "qm:s"
FORM_PREFIX = "qm:f"
SUBMIT_FORM = f"{FORM_PREFIX}:submit"
REJECT_FORM = f"{FORM_PREFIX}:reject"
REVIEW_VERBS = ("accept", "reject", "skip", "edit")


def review_custom_id(verb: str, number: int) -> str:
    return f"{REVIEW_PREFIX}:{verb}:{number}"


def parse_numbered_id(custom_id: str, prefix: str, verbs: Sequence[str]) -> tuple[str, int] | None:
    """`<prefix>:<verb>:<number>` → (verb, number); None for anything else."""
    parts = custom_id.split(":")
    if len(parts) != 4 or ":".join(parts[:2]) != prefix or parts[2] not in verbs:
        return None
    if not parts[3].isdigit() or len(parts[3]) > 18:
        return None
    return parts[2], int(parts[3])


def mention(platform: str, user_id: str, names: Mapping[str, str] | None = None) -> str:
    """How to name a member: a mention on chat platforms, or, in channels that
    turned mentions off (`names` given), their display name, which never pings."""
    if platform == "console":
        return "you" if user_id == "local" else user_id
    if names is not None:
        name = names.get(user_id)
        # Names are the member's own text: shown as written, never as markup.
        return escape_name(platform, name) if name else "a member"
    return f"<@{user_id}>"


def letter(slot: int) -> str:
    return LETTERS[slot]


@dataclass(frozen=True)
class QuestionView:
    """A posted question as the renderer needs it."""

    post_id: int
    bank_title: str
    question: Question
    option_order: Sequence[int]
    sequence: int | None
    total: int | None
    closes_at: datetime
    seconds: int

    def option(self, slot: int) -> str:
        return self.question.options[self.option_order[slot]]

    @property
    def heading(self) -> str:
        if self.sequence is not None and self.total is not None:
            return f"{self.bank_title} · Question {self.sequence}/{self.total}"
        return f"{self.bank_title} · Question of the day"


def _options_text(view: QuestionView, platform: str, marks: Sequence[str] | None = None) -> str:
    lines = []
    for slot in range(len(view.option_order)):
        mark = marks[slot] if marks else ""
        lines.append(f"{mark}**{letter(slot)}.** {escape_text(platform, view.option(slot))}")
    return "\n".join(lines)


def question(view: QuestionView, platform: str) -> OutMessage:
    heading = escape_text(platform, view.heading)
    prompt = escape_text(platform, view.question.prompt)
    body = f"{prompt}\n\n{_options_text(view, platform)}"
    buttons = tuple(
        Button(answer_custom_id(view.post_id, slot), letter(slot))
        for slot in range(len(view.option_order))
    )
    plain_options = "\n".join(
        f"{letter(slot)}. {escape_text(platform, view.option(slot))}"
        for slot in range(len(view.option_order))
    )
    return OutMessage(
        text=f"{heading}\n{prompt}\n{plain_options}",
        title=heading,
        body=body,
        buttons=buttons,
        footer=_question_footer(view),
        deadline=view.closes_at,
    )


def _question_footer(view: QuestionView) -> str:
    if view.sequence is None:
        return "Open until the next daily question · one answer each, the first click counts"
    return f"{view.seconds} seconds to answer · one answer each, the first click counts"


def closes(when: str) -> str:
    """The closing-time line; `when` is the platform's own live time markup
    (Discord `<t:…:R>`, Slack `<!date^…>`), which each client shows locally."""
    return f"Closes {when}"


def _bar(count: int, total: int) -> str:
    share = count / total if total else 0.0
    filled = round(share * BAR_WIDTH)
    return "█" * filled + "░" * (BAR_WIDTH - filled)


def distribution(view: QuestionView, tally: PostTally) -> str:
    lines = []
    for slot, count in enumerate(tally.counts):
        percent = round(100 * count / tally.total) if tally.total else 0
        lines.append(f"{letter(slot)} {_bar(count, tally.total)} {count} ({percent}%)")
    return "\n".join(lines)


def reveal(
    view: QuestionView,
    correct_slot: int,
    tally: PostTally,
    platform: str,
    names: Mapping[str, str] | None = None,
    streak_leaders: Sequence[tuple[str, int]] | None = None,
) -> OutMessage:
    """The closed question; a daily one (`streak_leaders` given) also shows
    who has the longest daily streaks now."""
    marks = ["✅ " if slot == correct_slot else "▫️ " for slot in range(len(view.option_order))]
    heading = escape_text(platform, view.heading)
    prompt = escape_text(platform, view.question.prompt)
    explanation = escape_text(platform, view.question.explanation)
    answer = f"{letter(correct_slot)}. {escape_text(platform, view.option(correct_slot))}"
    answers = "1 answer" if tally.total == 1 else f"{tally.total} answers"
    first = (
        f"First correct: {mention(platform, tally.first_correct_user, names)}"
        if tally.first_correct_user
        else "Nobody got it right."
    )
    buttons = tuple(
        Button(
            answer_custom_id(view.post_id, slot),
            letter(slot),
            ButtonStyle.SUCCESS if slot == correct_slot else ButtonStyle.NEUTRAL,
            disabled=True,
        )
        for slot in range(len(view.option_order))
    )
    fields = [
        Field("Answer", answer),
        Field("Why", explanation),
        Field("How the channel voted", distribution(view, tally)),
        Field("Answers", f"{answers}. {first}"),
    ]
    text = (
        f"{heading} (closed)\n{prompt}\nAnswer: {answer}\n"
        f"{explanation}\n{distribution(view, tally)}\n{answers}. {first}"
    )
    if streak_leaders is not None:
        streak_text = _streak_lines(streak_leaders, platform, names)
        fields.append(Field("Daily streaks", streak_text))
        text += f"\nDaily streaks:\n{streak_text}"
    return OutMessage(
        text=text,
        title=f"{heading} (closed)",
        body=f"{prompt}\n\n{_options_text(view, platform, marks)}",
        fields=tuple(fields),
        buttons=buttons,
    )


def _days(count: int) -> str:
    return "1 day" if count == 1 else f"{count} days"


def _streak_lines(
    leaders: Sequence[tuple[str, int]], platform: str, names: Mapping[str, str] | None
) -> str:
    if not leaders:
        return "No streaks yet: answer the next daily question right to start one."
    return "\n".join(
        f"🔥 {mention(platform, user, names)}: {_days(count)}" for user, count in leaders
    )


def _rank_lines(
    rows: Sequence[RankRow], platform: str, names: Mapping[str, str] | None = None
) -> str:
    medals = {1: "🥇", 2: "🥈", 3: "🥉"}
    lines = []
    for place, row in enumerate(rows, start=1):
        badge = medals.get(place, f"{place}.")
        lines.append(
            f"{badge} {mention(platform, row.user_id, names)}: {row.points} pts "
            f"({row.correct}/{row.answered} correct)"
        )
    return "\n".join(lines)


def scoreboard(
    result: QuizResult,
    platform: str,
    *,
    stopped: bool,
    names: Mapping[str, str] | None = None,
) -> OutMessage:
    title = "Quiz stopped: final scores" if stopped else "Quiz over: final scores"
    if not result.participants:
        body = "Nobody answered this time."
    else:
        accuracy = round(100 * result.correct / result.answers) if result.answers else 0
        people = "1 player" if result.participants == 1 else f"{result.participants} players"
        ranks = _rank_lines(result.rows, platform, names)
        body = f"{ranks}\n\n{people} · {accuracy}% of answers correct"
    return OutMessage(text=f"{title}\n{body}", title=title, body=body)


_PERIOD_NAMES = {Period.WEEK: "this week", Period.MONTH: "this month", Period.ALL: "all time"}


def leaderboard(
    rows: Sequence[RankRow],
    platform: str,
    scope: Scope,
    period: Period,
    names: Mapping[str, str] | None = None,
) -> OutMessage:
    """Posted for the whole channel to see, as the answer to `/quiz leaderboard`."""
    where = "this channel" if scope is Scope.CHANNEL else "this server"
    if platform == "slack" and scope is Scope.COMMUNITY:
        where = "this workspace"
    title = f"Leaderboard: {where}, {_PERIOD_NAMES[period]}"
    body = _rank_lines(rows, platform, names) if rows else "No answers yet in this period."
    return OutMessage(text=f"{title}\n{body}", title=title, body=body, public=True)


def streak_board(
    board: Sequence[tuple[str, tuple[int, int]]],
    platform: str,
    names: Mapping[str, str] | None = None,
) -> OutMessage:
    """`/quiz leaderboard streaks`: current and best daily streaks in the channel."""
    title = "Daily streaks: this channel"
    lines = [
        f"{place}. {mention(platform, user, names)}: {_days(current)} (best {best})"
        for place, (user, (current, best)) in enumerate(board, start=1)
    ]
    body = "\n".join(lines) or "No daily streaks yet: they start with the first daily question."
    return OutMessage(text=f"{title}\n{body}", title=title, body=body, public=True)


@dataclass(frozen=True)
class Hardest:
    """The question of a week that the fewest members got right."""

    prompt: str
    correct: int
    answered: int


def weekly_leaderboard(
    rows: Sequence[RankRow],
    week_start: date,
    streak_leaders: Sequence[tuple[str, int]],
    hardest: Hardest | None,
    platform: str,
    names: Mapping[str, str] | None = None,
) -> OutMessage:
    """The scheduled weekly post: last week's top ten, streaks, the hardest question."""
    week_end = week_start + timedelta(days=6)
    title = f"Weekly leaderboard: {week_start:%b %d} – {week_end:%b %d}"
    body = _rank_lines(rows, platform, names) if rows else "Nobody answered last week."
    fields = [Field("Daily streaks", _streak_lines(streak_leaders, platform, names))]
    if hardest is not None:
        share = _percent(hardest.correct, hardest.answered)
        fields.append(
            Field(
                "Hardest question",
                f"{escape_text(platform, hardest.prompt)}\n"
                f"{hardest.correct} of {hardest.answered} right ({share})",
            )
        )
    text = f"{title}\n{body}\n" + "\n".join(f"{f.name}:\n{f.value}" for f in fields)
    return OutMessage(text=text, title=title, body=body, fields=tuple(fields), public=True)


@dataclass(frozen=True)
class StatsView:
    user_id: str
    answered: int
    correct: int
    points: int
    streak: int
    best_streak: int
    best_streak_anywhere: int
    per_tag: Sequence[tuple[str, int, int]]  # (tag, answered, correct)
    reviews_due: int | None = None  # the member's own due review cards


def _percent(part: int, whole: int) -> str:
    return f"{round(100 * part / whole)}%" if whole else "–"


def stats(view: StatsView, platform: str) -> OutMessage:
    who = mention(platform, view.user_id)
    title = "Your stats" if who == "you" else f"Stats for {who}"
    summary = (
        f"Answered: {view.answered}\nCorrect: {view.correct} "
        f"({_percent(view.correct, view.answered)})\nPoints: {view.points}\n"
        f"Daily streak: {view.streak} (best here {view.best_streak}, "
        f"best anywhere {view.best_streak_anywhere})"
    )
    if view.reviews_due is not None:
        summary += f"\n{reviews_due_line(view.reviews_due)}"
    tags = "\n".join(
        f"{tag}: {_percent(correct, answered)} of {answered}"
        for tag, answered, correct in view.per_tag
    )
    fields = (Field("By topic", tags),) if tags else ()
    text = f"{title}\n{summary}" + (f"\nBy topic:\n{tags}" if tags else "")
    return OutMessage(text=text, title=title, body=summary, fields=fields)


def private(text: str) -> OutMessage:
    return OutMessage(text=text, body=text)


# -- replies to clicks ----------------------------------------------------------


@cache  # the same few replies for every click of a burst: built once each
def locked_in(slot: int) -> OutMessage:
    return private(f"Locked in {letter(slot)}. The answer is revealed when the question closes.")


def daily_feedback(
    slot: int,
    correct: bool,
    correct_slot: int,
    explanation: str,
    streak: int | None = None,
    reviews_due: int | None = None,
) -> OutMessage:
    """The private reply to a click on an open (non-live) question; `streak` is
    the member's daily streak in the channel after this answer, `reviews_due`
    how many of their review cards are due."""
    text = _verdict(slot, correct, correct_slot, explanation)
    if correct and streak:
        text += f"\n🔥 {streak}-day streak"
    if not correct and streak is not None:
        text += "\nYour daily streak starts again with the next daily question."
    if reviews_due:
        text += f"\n{reviews_due_line(reviews_due)}"
    return private(text)


def _verdict(slot: int, correct: bool, correct_slot: int, explanation: str) -> str:
    if correct:
        return f"✅ {letter(slot)} is right! {explanation}"
    return f"❌ {letter(slot)} is not it: the answer is {letter(correct_slot)}. {explanation}"


def reviews_due_line(count: int) -> str:
    if count == 0:
        return "Reviews due: none"
    noun = "review is" if count == 1 else "reviews are"
    return f"📚 {count} {noun} due: `/quiz review`"


def already_answered(slot: int | None) -> OutMessage:
    if slot is None:
        return private("You have already answered this question.")
    return private(f"You already answered {letter(slot)}: the first click counts.")


def question_closed(correct_slot: int) -> OutMessage:
    return private(f"This question has closed; the answer was {letter(correct_slot)}.")


def unknown_question() -> OutMessage:
    return private("I don't know that question any more; it may have been removed.")


def answer_not_counted() -> OutMessage:
    """A click whose answer could not be confirmed as stored (an error, or a write
    slower than the platform's window): clicking again is safe, since a second
    answer to the same question is never counted twice."""
    return private(
        "Your answer did not go through: I could not confirm your answer, so it may not "
        "count. Please click again; if it was saved after all, I'll say so when you "
        "click your answer again."
    )


# -- replies to commands --------------------------------------------------------


def not_moderator(action: str, moderator_role: str | None = None) -> OutMessage:
    who = f"members of `{moderator_role}`" if moderator_role else "the channel's moderator role"
    return private(
        f"Only moderators can {action}. Ask a server or workspace admin, or one of {who}, to do it."
    )


def cannot_post(problem: str) -> OutMessage:
    return private(
        f"I can't post in this channel ({problem}). Check that I'm in this channel and "
        "allowed to post here, then try again."
    )


# -- channel settings -------------------------------------------------------------

CONFIG_KEYS = {
    "moderator-role": "role (Discord) or user group (Slack) whose members moderate; "
    "`none` clears it",
    "moderator-group": "same as moderator-role",
    "mentions": "`on` or `off`: off names members in channel posts without pinging them",
    "timezone": "IANA time zone for schedules, leaderboard weeks and months, e.g. Europe/Berlin",
    "daily-window": f"hours a daily question stays open at most "
    f"({MIN_DAILY_WINDOW_HOURS}–{MAX_DAILY_WINDOW_HOURS}, default 24)",
    "grace": f"minutes a scheduled post missed while the bot was down may still be made "
    f"({MIN_GRACE_MINUTES}–{MAX_GRACE_MINUTES}, default 120)",
}


def channel_settings(channel: ChannelInfo) -> OutMessage:
    lines = [
        f"Moderator role/group: {channel.moderator_role or 'none (admins only)'}",
        f"Mentions in channel posts: {'on' if channel.mentions else 'off'}",
        f"Time zone: {channel.timezone}",
        f"Daily question open for: {channel.daily_window_hours} h at most",
        f"Grace for missed posts: {channel.grace_minutes} min",
    ]
    if channel.delivery_problem:
        lines.append(
            f"⚠️ My last post here failed: {channel.delivery_problem}. Timed posts are "
            "paused until a moderator starts a quiz that posts."
        )
    body = "\n".join(lines)
    return OutMessage(text=f"Channel settings\n{body}", title="Channel settings", body=body)


def unknown_setting(key: str) -> OutMessage:
    known = ", ".join(f"`{name}`" for name in CONFIG_KEYS)
    return private(f"There is no setting `{key}`. Settings: {known}.")


def setting_needs_value(key: str) -> OutMessage:
    return private(f"`/quiz config set {key}` needs a value: {CONFIG_KEYS[key]}.")


def unknown_timezone(name: str) -> OutMessage:
    return private(
        f"`{name}` is not a time zone I know. Use an IANA name such as Europe/Berlin, "
        "America/New_York or UTC."
    )


def setting_changed(key: str, channel: ChannelInfo) -> OutMessage:
    shown = replace(channel_settings(channel), title="Setting saved")
    return replace(shown, text=f"Saved `{key}`.\n{shown.body}")


# -- schedules --------------------------------------------------------------------


@dataclass(frozen=True)
class ScheduleView:
    kind: str  # "daily" or "leaderboard"
    at_time: str
    zone: str
    days: str  # short form, e.g. "mon-fri"
    bank: str | None
    tag: str | None
    next_fire: datetime  # local to the schedule's zone


def schedule_line(view: ScheduleView) -> str:
    """E.g. `daily 09:00 Europe/Berlin mon-fri (next: Thu 03 Dec 09:00 CET)`."""
    if view.kind == "leaderboard":
        line = f"leaderboard {view.days} {view.at_time} {view.zone}"
    else:
        line = f"daily {view.at_time} {view.zone} {view.days}"
        line += "".join(
            f" {key}={value}" for key, value in (("bank", view.bank), ("tag", view.tag)) if value
        )
    return f"{line} (next: {view.next_fire:%a %d %b %H:%M %Z})"


def schedule_list(views: Sequence[ScheduleView], channel: ChannelInfo) -> OutMessage:
    title = "Schedules in this channel"
    if not views:
        body = (
            "Nothing is scheduled here. Moderators can add a daily question with "
            "`/quiz schedule daily 09:00 Europe/Berlin mon-fri` and a weekly "
            "leaderboard with `/quiz schedule leaderboard mon 09:00`."
        )
    else:
        body = "\n".join(f"• {schedule_line(view)}" for view in views)
        body += (
            f"\nDaily questions stay open until the next one, {channel.daily_window_hours} h "
            f"at most. A post missed while I was down is made up to "
            f"{channel.grace_minutes} min late, never twice."
        )
    if channel.delivery_problem:
        body += (
            f"\n⚠️ My last post here failed: {channel.delivery_problem}. Scheduled posts are "
            "paused until a moderator starts a quiz that posts."
        )
    return OutMessage(text=f"{title}\n{body}", title=title, body=body)


def schedule_saved(view: ScheduleView) -> OutMessage:
    what = "Daily question" if view.kind == "daily" else "Weekly leaderboard"
    return private(f"{what} scheduled: {schedule_line(view)}.")


def schedules_off(kinds: Sequence[str], removed: int) -> OutMessage:
    names = " and ".join("daily question" if k == "daily" else "weekly leaderboard" for k in kinds)
    if not removed:
        return private(f"Nothing to turn off: no {names} is scheduled here.")
    return private(f"Turned off the {names} schedule here.")


_SCHEDULE_OPTIONS = {
    "time": "a time like 09:00",
    "day": "a day (mon, tue, wed, thu, fri, sat, sun)",
}


def schedule_needs(option: str) -> OutMessage:
    return schedule_problem(f"this schedule needs {_SCHEDULE_OPTIONS[option]}")


def not_a_schedule(which: str) -> OutMessage:
    return schedule_problem(f"`{which}` is not a schedule: use daily or leaderboard")


def unknown_schedule_action(action: str) -> OutMessage:
    return schedule_problem(
        f"`{action}` is not a schedule action: use daily, leaderboard, show or off"
    )


def schedule_problem(problem: str) -> OutMessage:
    return private(
        f"{problem.rstrip('.')}. Nothing was changed. Example: "
        "`/quiz schedule daily 09:00 Europe/Berlin mon-fri`."
    )


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


def bad_value(problem: str) -> OutMessage:
    return private(f"{problem}. Try `/quiz help`.")


def quiz_stopped() -> OutMessage:
    return private("Quiz stopped.")


def question_skipped() -> OutMessage:
    return private("Skipped: revealing the answer now.")


def forgotten(count: int) -> OutMessage:
    noun = "answer" if count == 1 else "answers"
    return private(
        f"Done: I deleted your {count} {noun}, the stats built on them, your review cards"
        " and your submissions (questions already accepted stay, without your name)."
    )


def unknown_command(name: str) -> OutMessage:
    return private(f"I don't know `/quiz {name}`.\n\n{HELP}")


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


def pick_a_letter(letters: Sequence[str]) -> OutMessage:
    return private(f"Type one of {', '.join(letters)} and press Enter.")


def console_intro() -> OutMessage:
    return private(
        "Local console channel. Type `/quiz start 3 20` to start a quiz, a letter to "
        "answer, `quit` to leave."
    )


def failure() -> OutMessage:
    return private("Something went wrong on my side; nothing was lost. Please try again.")


# -- faults ---------------------------------------------------------------------


def malformed_id() -> OutMessage:
    return private("I can't accept this: the member or channel id it came with is malformed.")


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


def too_slow() -> OutMessage:
    """A command that outlasted the wait for it; it may still finish."""
    return private(
        "That is taking me too long, so I stopped waiting; it may still happen. "
        "Please check in a moment before trying again."
    )


def form_too_slow() -> OutMessage:
    return private("Opening the form took me too long; please run the command again.")


def restarting() -> OutMessage:
    return private("The bot is restarting; please try again in a moment.")


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


# -- submissions and review -------------------------------------------------------

SUBMISSION_FIELDS = (
    FormField("prompt", "Question", multiline=True, max_length=1000),
    FormField(
        "options",
        "Options, one per line (2 to 5)",
        multiline=True,
        max_length=1600,
        placeholder="Gradient compression\nData shuffling\nTask parallelism",
    ),
    FormField("answer", "Letter of the right option (A to E)", max_length=2, placeholder="A"),
    FormField("explanation", "Why it is right (one to three sentences)", multiline=True),
    FormField(
        "tags",
        "Tags (optional), e.g. ddp, communication",
        required=False,
        max_length=200,
    ),
)
_FIELD_NAMES = {
    "prompt": "Question",
    "options": "Options",
    "answer": "Right option",
    "explanation": "Explanation",
    "tags": "Tags",
}


def field_problem(key: str, problem: str) -> str:
    """A validation problem as the form shows it beside its field."""
    problem = problem.replace("String should have at least 1 character", "this is empty")
    problem = problem.replace("List should have at least 2 items", "give at least two options")
    problem = problem.replace("List should have at most 5 items", "give at most five options")
    if key == "answer" and "pattern" in problem:
        problem = "give one letter, A to E"
    if key == "tags" and "pattern" in problem:
        problem += " (lowercase letters, digits and dashes, like `data-parallel`)"
    return problem[0].upper() + problem[1:] if problem else problem


def submission_form(values: Mapping[str, str] | None = None) -> OutMessage:
    filled = values or {}
    fields = tuple(replace(spec, value=filled.get(spec.key, "")) for spec in SUBMISSION_FIELDS)
    return OutMessage(
        text="Questions are submitted through a form on Discord or Slack.",
        form=Form(SUBMIT_FORM, "Submit a question", fields, "Submit"),
    )


def submission_problems(errors: Mapping[str, str], draft: int | None) -> OutMessage:
    lines = [f"• **{_FIELD_NAMES.get(key, key)}**: {problem}" for key, problem in errors.items()]
    text = "Your question was not queued yet:\n" + "\n".join(lines)
    buttons: tuple[Button, ...] = ()
    if draft is not None:
        text += "\nWhat you typed is kept: click **Edit my question** to fix it."
        buttons = (Button(review_custom_id("edit", draft), "Edit my question"),)
    return OutMessage(text=text, body=text, buttons=buttons)


def too_many_pending(limit: int) -> OutMessage:
    return private(
        f"You already have {limit} questions waiting for review here, the most one member "
        "may have. Once a moderator has looked at them you can submit more."
    )


def submission_queued(number: int) -> OutMessage:
    return private(
        f"Thanks! Your question (submission #{number}) is waiting for a moderator. "
        "I'll tell you privately when it has been reviewed."
    )


def _submission_text(submission: SubmissionInfo, platform: str) -> str:
    question = submission.question
    right = str(question.get("answer", ""))
    lines = [escape_text(platform, str(question.get("prompt", ""))), ""]
    for index, option in enumerate(question.get("options") or []):
        mark = " ✅" if LETTERS[index] == right else ""
        lines.append(f"{LETTERS[index]}. {escape_text(platform, str(option))}{mark}")
    lines += ["", f"**Why:** {escape_text(platform, str(question.get('explanation', '')))}"]
    tags = question.get("tags") or []
    if tags:
        lines.append(f"**Tags:** {', '.join(str(tag) for tag in tags)}")
    return "\n".join(lines)


def review_card(
    submission: SubmissionInfo, pending: int, platform: str, note: str = ""
) -> OutMessage:
    title = f"Submission #{submission.id} ({pending} pending)"
    author = mention(platform, submission.author_id)
    body = _submission_text(submission, platform) + f"\n\nSubmitted by {author}."
    if note:
        body = f"{note}\n\n{body}"
    buttons = (
        Button(review_custom_id("accept", submission.id), "Accept", ButtonStyle.SUCCESS),
        Button(review_custom_id("reject", submission.id), "Reject", ButtonStyle.DANGER),
        Button(review_custom_id("skip", submission.id), "Skip"),
    )
    return OutMessage(
        text=f"{note}\n{title}\n{body}".strip(), title=title, body=body, buttons=buttons
    )


def queue_empty(note: str = "") -> OutMessage:
    text = "No submissions are waiting for review here."
    return private(f"{note}\n{text}" if note else text)


def already_reviewed() -> str:
    return "That submission was already reviewed (or removed); here is the next one."


def accepted_note(submission: SubmissionInfo) -> str:
    return (
        f"Accepted submission #{submission.id}: it is {submission.question_id} in the "
        "community bank now."
    )


def rejected_note(submission: SubmissionInfo) -> str:
    return f"Rejected submission #{submission.id}; its author has been told."


def reject_form(number: int) -> OutMessage:
    reason = FormField(
        "reason",
        "Reason for the author (optional)",
        multiline=True,
        required=False,
        max_length=500,
    )
    return OutMessage(
        text="Rejecting needs Discord or Slack.",
        form=Form(f"{REJECT_FORM}:{number}", "Reject submission", (reason,), "Reject"),
    )


def _short(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def author_accepted(submission: SubmissionInfo, platform: str) -> OutMessage:
    prompt = escape_text(platform, _short(str(submission.question.get("prompt", ""))))
    return private(
        f"🎉 Your question “{prompt}” was accepted: it joins this community's question bank "
        f"as {submission.question_id}."
    )


def author_rejected(submission: SubmissionInfo, platform: str) -> OutMessage:
    prompt = escape_text(platform, _short(str(submission.question.get("prompt", ""))))
    text = f"Your question “{prompt}” was not accepted."
    if submission.reason:
        text += f" The moderator said: {escape_text(platform, submission.reason)}"
    return private(text)


def not_a_community_question(question_id: str) -> OutMessage:
    shown = _short(question_id, 40) or "(none)"
    return private(
        f"`{shown}` is not a question of this community's bank. Give its id, like "
        "`community-12` (bank files are changed by editing them)."
    )


def question_removed(question_id: str) -> OutMessage:
    return private(f"Removed {question_id}: it will not be drawn here again.")


# -- Discord


def discord_server_only() -> OutMessage:
    return private("Quizzes run in server channels: use `/quiz` in a channel of a server.")


# -- study: review cards and Anki export ------------------------------------------


@dataclass(frozen=True)
class ReviewCardView:
    """A review card as the member sees it: `number` counts cards in this run."""

    session_id: int
    step: int
    bank_title: str
    question: Question
    option_order: Sequence[int]
    number: int
    limit: int
    due: int  # cards due now, this one included

    def option(self, slot: int) -> str:
        return self.question.options[self.option_order[slot]]


def review_time(local: datetime) -> str:
    """A review time in the channel's zone: `Thu 03 Dec 09:00`."""
    return local.strftime("%a %d %b %H:%M")


def study_card(view: ReviewCardView, platform: str, before: str = "") -> OutMessage:
    """One card with its letter buttons; `before` is the verdict on the last one."""
    title = escape_text(platform, f"Review · {view.bank_title}")
    prompt = escape_text(platform, view.question.prompt)
    slots = range(len(view.option_order))
    options = "\n".join(
        f"**{letter(slot)}.** {escape_text(platform, view.option(slot))}" for slot in slots
    )
    lead = f"{before}\n\n" if before else ""
    body = f"{lead}{prompt}\n\n{options}"
    buttons = tuple(
        Button(card_custom_id(view.session_id, view.step, slot), letter(slot)) for slot in slots
    )
    plain = "\n".join(
        f"{letter(slot)}. {escape_text(platform, view.option(slot))}" for slot in slots
    )
    footer = (
        f"Card {view.number} of at most {view.limit} · {view.due} due · "
        "only you see this; it does not change points or streaks"
    )
    text = f"{lead}{title}\n{prompt}\n{plain}"
    return OutMessage(text=text, title=title, body=body, buttons=buttons, footer=footer)


def review_verdict(
    platform: str, slot: int, correct: bool, correct_slot: int, explanation: str
) -> str:
    return _verdict(slot, correct, correct_slot, escape_text(platform, explanation))


def review_done(before: str, reviewed: int, next_review: str | None) -> OutMessage:
    noun = "card" if reviewed == 1 else "cards"
    text = f"{before}\n\nReview done: {reviewed} {noun}."
    if next_review:
        text += f" Next review: {next_review}"
    return private(text)


def nothing_to_review(next_review: str | None) -> OutMessage:
    if next_review is None:
        return private(
            "Nothing to review yet. Questions you answer in quizzes and daily questions "
            "come back here for review when they are due."
        )
    return private(f"Nothing to review. Next review: {next_review}")


def review_not_yours() -> OutMessage:
    return private("This review card belongs to someone else. `/quiz review` starts your own.")


def review_already_answered() -> OutMessage:
    return private("You already answered this card; your review continues below it.")


def review_ended() -> OutMessage:
    return private("This review has ended. `/quiz review` starts a new one.")


def review_count_problem(value: str, low: int, high: int) -> OutMessage:
    return private(
        f"The number of cards must be a whole number from {low} to {high} (got {value})."
    )


ANKI_FIELDS = ("Prompt", "Options", "Answer", "Explanation")


def anki_fields(question: Question) -> tuple[str, str, str, str]:
    """A question's note fields (HTML): prompt, options lettered in bank order,
    the answer, the explanation."""
    options = "<br>".join(
        f"<b>{letter(index)}.</b> {html.escape(option)}"
        for index, option in enumerate(question.options)
    )
    right = question.options[question.answer_index]
    answer = f"<b>{question.answer}.</b> {html.escape(right)}"
    return html.escape(question.prompt), options, answer, html.escape(question.explanation)


EXPORT_CHOICES = ("missed", "all")


def export_file_name(which: str) -> str:
    return f"quizmaster-{which}.apkg"


def export_ready(which: str, count: int, deck: Attachment) -> OutMessage:
    noun = "question" if count == 1 else "questions"
    kind = "you missed" if which == "missed" else "you answered"
    text = (
        f"Your Anki deck: {count} {noun} {kind}. In Anki choose File → Import and pick "
        f"{deck.filename}; importing a newer export updates these cards."
    )
    return replace(private(text), attachment=deck)


def nothing_to_export(which: str) -> OutMessage:
    if which == "missed":
        return private("No missed questions to export yet. `/quiz export all` exports every one.")
    return private("No answered questions to export yet.")


def export_choice_problem(value: str) -> OutMessage:
    return private(f"Export `missed` (the default) or `all`, not `{value}`.")


def file_sent_to_direct_messages() -> OutMessage:
    return private("I sent your Anki deck to our direct messages.")


def file_not_delivered(problem: str) -> OutMessage:
    return private(f"I could not send you the file ({problem}). Please try again later.")


def file_saved(path: str) -> OutMessage:
    return private(f"Saved {path}")


# Imported banks: the text an import writes into a bank, shown later at reveals
# and in `questions list`.

OPENTDB_CREDIT = (
    "Questions from the Open Trivia DB (https://opentdb.com), "
    "licensed under CC BY-SA 4.0 (https://creativecommons.org/licenses/by-sa/4.0/)."
)


def imported_explanation(answer: str) -> str:
    """For source formats without explanations: at least the reveal names the answer."""
    return f"The answer is {answer}."


def red_explanation(accepted: Sequence[str]) -> str:
    if len(accepted) < 2:
        return imported_explanation(accepted[0])
    others = ", ".join(accepted[1:])
    return f"The answer is {accepted[0]} (the original list also accepts {others})."


def imported_description(source: str, format_name: str) -> str:
    return f"Imported from {source} ({format_name})."


def opentdb_description(source: str) -> str:
    return f"{OPENTDB_CREDIT} Imported from {source}."


def red_description(source: str, author: str | None) -> str:
    by = f" by {author}" if author else ""
    return (
        f"Imported from the Red-DiscordBot trivia list {source}{by}. Red's questions have "
        "no wrong options, so each question's wrong options were drawn from the answers "
        "of other questions in the same list."
    )
