"""Every sentence the terminal game says in its own voice: one player, no channel.

The quiz core's texts speak to a channel; these replace the few that read wrong
to someone playing alone (the scoreboard, "how the channel voted", "the first
click counts") and add the lines only a terminal shows (countdown, verdict)."""

from __future__ import annotations

from collections.abc import Sequence

from bot.i18n import t, tn


def letters_hint(letters: Sequence[str]) -> str:
    if len(letters) == 1:
        return t("type {letter}", letter=letters[0])
    return t("type {letters} or {last}", letters=", ".join(letters[:-1]), last=letters[-1])


def countdown(seconds_left: int, letters: Sequence[str]) -> str:
    return t(
        "⏱ {seconds} s left · {hint}, then Enter", seconds=seconds_left, hint=letters_hint(letters)
    )


def time_to_answer(seconds: int, letters: Sequence[str]) -> str:
    """The static line where no countdown can be drawn (a pipe, NO_COLOR)."""
    return t("{seconds} seconds · {hint}, then Enter", seconds=seconds, hint=letters_hint(letters))


def right(points: int) -> str:
    return tn("✓ Right, +1 point", "✓ Right, +{count} points", points)


def wrong(answer: str) -> str:
    return t("✗ Not quite: the answer is {answer}", answer=answer)


def times_up(answer: str) -> str:
    return t("⏰ Time's up: the answer is {answer}", answer=answer)


def running_score(points: int, right_count: int, answered: int) -> str:
    return t(
        "Score {points} · {right}/{answered} right",
        points=points,
        right=right_count,
        answered=answered,
    )


def starting(questions: int, seconds: int) -> str:
    return tn(
        "1 question, {seconds} s · Ctrl-D ends the quiz",
        "{count} questions, {seconds} s each · Ctrl-D ends the quiz",
        questions,
        seconds=seconds,
    )


def data_line(place: str, banks: int, questions: int, legacy: bool) -> str:
    """The one start line: where stats are kept and what was loaded."""
    if legacy:
        kept = t(
            "Stats in {place} (the ./data folder from before; set `QUIZ_DATA_DIR` to move it)",
            place=place,
        )
    else:
        kept = t("Stats in {place}", place=place)
    loaded = (
        tn("1 bank", "{count} banks", banks)
        + ", "
        + tn("1 question", "{count} questions", questions)
    )
    return f"{kept} · {loaded}"


def end_title() -> str:
    return t("Quiz over")


def end_lines(points: int, right_count: int, answered: int, best_run: int) -> list[str]:
    share = f" ({round(100 * right_count / answered)}%)" if answered else ""
    run = tn("1 right answer", "{count} right answers in a row", best_run)
    return [
        t("Score: {points} points", points=points),
        t("Right: {right} of {answered}{share}", right=right_count, answered=answered, share=share),
        t("Best run: {run}", run=run) if best_run else t("Best run: none this time"),
    ]


def all_time(answered: int, right_count: int, points: int, daily_streak: int) -> str:
    share = f"{round(100 * right_count / answered)}%" if answered else "–"
    line = t(
        "All time: {answered} answered, {share} right, {points} points",
        answered=answered,
        share=share,
        points=points,
    )
    if daily_streak:
        line += " · " + t("daily streak {count}", count=daily_streak)
    return line


def review_hint(program: str) -> str:
    return t("Missed ones come back: {command}", command=f"`{program} review`")


# -- the command line's own voice: flags, not chat commands -----------------------


def flag_out_of_range(flag: str, value: int, low: int, high: int) -> str:
    return f"{flag} must be between {low} and {high} (got {value})."


def no_banks(folder: str) -> str:
    return (
        f"No question banks loaded from {folder}: nothing to play. "
        f"`quizmaster questions validate {folder}` says why; QUIZ_QUESTIONS_DIR names another."
    )


def unknown_bank(bank: str, known: list[str]) -> str:
    return f"--bank {bank}: there is no such bank. Banks: {', '.join(known) or 'none'}."


def unknown_tag(tag: str, known: list[str]) -> str:
    return f"--tag {tag}: no question has that tag. Tags: {', '.join(known) or 'none'}."


def nothing_to_export(every: bool) -> str:
    if every:
        return "No answered questions to export yet."
    return "No missed questions to export yet; --all exports every answered one."


def unknown_platform(name: str, known: list[str]) -> str:
    return f"Unknown platform {name!r}: use {', '.join(known[:-1])} or {known[-1]}."


def nothing_to_validate(paths: list[str]) -> str:
    return f"Nothing to validate: no .yaml or .yml bank file in {', '.join(paths)}."


def no_database(path: str) -> str:
    return f"There is no database at {path} to check; nothing was created."


def not_migrated(revision: str | None, head: str) -> str:
    found = f"at migration {revision}" if revision else "not migrated"
    return (
        f"The database is {found} and this version needs {head}: run "
        "`quizmaster db upgrade` first (a check never changes the database)."
    )


# -- forms, asked a field at a time (the terminal has no pop-ups) ------------------


def cancel_word() -> str:
    """What stops a form, in the reader's language (English `cancel` works too)."""
    return t("cancel")


def form_title(title: str) -> str:
    return t("{title} · type {word} to stop", title=title, word=cancel_word())


def form_field(label: str, required: bool, several_lines: bool) -> str:
    if several_lines and required:
        return t("{label} · a line each, an empty line ends", label=label)
    if several_lines:
        return t("{label} · an empty line ends or skips", label=label)
    return label if required else t("{label} · Enter skips", label=label)


def field_needed(label: str) -> str:
    return t("{label}: this one is needed (or type {word}).", label=label, word=cancel_word())


def field_too_long(most: int, got: int) -> str:
    return t(
        "At most {most} characters here (that was {got}); try a shorter one.", most=most, got=got
    )


def form_cancelled() -> str:
    return t("Cancelled; nothing was sent.")


def report_this() -> str:
    return t("Something wrong with this question? Type ! to report it.")


def report_which(count: int) -> str:
    if count == 1:
        return t("Something wrong with the question? Type ! to report it, or Enter to leave.")
    return t(
        "Something wrong with a question? Type ! and its number (1-{count}) to report it, "
        "or Enter to leave.",
        count=count,
    )


def no_such_question(typed: str, count: int) -> str:
    return t(
        "{typed} is not a question of this game: type ! and a number from 1 to {count}.",
        typed=repr(typed),
        count=count,
    )


def not_a_console_member(typed: str) -> str:
    shown = typed if len(typed) <= 40 else typed[:39] + "…"
    return t(
        "{typed} is not a member here: the terminal's one player is `local`.", typed=repr(shown)
    )
