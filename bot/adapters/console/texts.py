"""Every sentence the terminal game says in its own voice: one player, no channel.

The quiz core's texts speak to a channel; these replace the few that read wrong
to someone playing alone (the scoreboard, "how the channel voted", "the first
click counts") and add the lines only a terminal shows (countdown, verdict)."""

from __future__ import annotations

from collections.abc import Sequence


def letters_hint(letters: Sequence[str]) -> str:
    if len(letters) == 1:
        return f"type {letters[0]}"
    return f"type {', '.join(letters[:-1])} or {letters[-1]}"


def countdown(seconds_left: int, letters: Sequence[str]) -> str:
    return f"⏱ {seconds_left} s left · {letters_hint(letters)}, then Enter"


def time_to_answer(seconds: int, letters: Sequence[str]) -> str:
    """The static line where no countdown can be drawn (a pipe, NO_COLOR)."""
    return f"{seconds} seconds · {letters_hint(letters)}, then Enter"


def right(points: int) -> str:
    return f"✓ Right, +{points} points"


def wrong(answer: str) -> str:
    return f"✗ Not quite: the answer is {answer}"


def times_up(answer: str) -> str:
    return f"⏰ Time's up: the answer is {answer}"


def running_score(points: int, right_count: int, answered: int) -> str:
    return f"Score {points} · {right_count}/{answered} right"


def starting(questions: int, seconds: int) -> str:
    return f"{questions} questions, {seconds} s each · Ctrl-D ends the quiz"


def data_line(place: str, banks: int, questions: int, legacy: bool) -> str:
    """The one start line: where stats are kept and what was loaded."""
    kept = f"Stats in {place}"
    if legacy:
        kept += " (the ./data folder from before; set QUIZ_DATA_DIR to move it)"
    return f"{kept} · {banks} bank{'s' if banks != 1 else ''}, {questions} questions"


def end_title() -> str:
    return "Quiz over"


def end_lines(points: int, right_count: int, answered: int, best_run: int) -> list[str]:
    share = f" ({round(100 * right_count / answered)}%)" if answered else ""
    run = "1 right answer" if best_run == 1 else f"{best_run} right answers in a row"
    return [
        f"Score: {points} points",
        f"Right: {right_count} of {answered}{share}",
        f"Best run: {run}" if best_run else "Best run: none this time",
    ]


def all_time(answered: int, right_count: int, points: int, daily_streak: int) -> str:
    share = f"{round(100 * right_count / answered)}%" if answered else "–"
    line = f"All time: {answered} answered, {share} right, {points} points"
    if daily_streak:
        line += f" · daily streak {daily_streak}"
    return line


def review_hint(program: str) -> str:
    return f"Missed ones come back: {program} review"


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


def not_a_console_member(typed: str) -> str:
    shown = typed if len(typed) <= 40 else typed[:39] + "…"
    return f"{shown!r} is not a member here: the terminal's one player is `local`."
