"""Reporting a question from the terminal, as a person does it at a real pty:
the console channel of `quizmaster run` takes "!" after a reveal, the game
offers "! N" at its end, and the form is asked a field at a time."""

from __future__ import annotations

import json
import signal
import sqlite3
from pathlib import Path

from tests.processes import QUIZMASTER
from tests.test_terminal_game import Terminal, _env, _plain


def _reports(tmp_path: Path) -> list[tuple[str, str, str | None]]:
    [database] = list(tmp_path.rglob("quizmaster.db"))
    with sqlite3.connect(database) as db:
        return list(db.execute("select question_id, reason, text from question_reports"))


def _report_opened(tmp_path: Path) -> Terminal:
    """`quizmaster run`'s console channel with a question revealed and its
    report form asking for the reason."""
    terminal = Terminal([*QUIZMASTER, "run"], tmp_path, _env(tmp_path, QUIZ_HEALTH_PORT="0"))
    try:
        terminal.read_until("Local console channel")
        terminal.type("/quiz start 1 60\n")
        terminal.read_until("Question 1/1")
        terminal.type("/quiz skip\n")
        terminal.read_until("Type ! to report it")
        terminal.type("!\n")
        terminal.read_until("What is wrong")
    except BaseException:
        terminal.process.kill()
        terminal.close()
        raise
    return terminal


def test_the_console_channel_reports_the_question_just_revealed(tmp_path: Path) -> None:
    terminal = _report_opened(tmp_path)
    try:
        terminal.type("boring\n")  # not a reason: told so once the form is sent
        terminal.read_until("an empty line ends or skips")
        terminal.type("option C is misspelt\n\n")
        # Only the reason is asked again; the details typed are kept.
        terminal.read_until(r"is not a reason[^\n]*\n[^\n]*What is wrong")
        terminal.type("typo\n")
        seen = _plain(terminal.read_until("is with the moderators"))
        question = seen.split("your report on ")[1].split(" ")[0]

        terminal.type("/quiz reports\n")  # the terminal's player is its moderator
        seen = _plain(terminal.read_until(f"Report 1 on {question}"))
        terminal.process.send_signal(signal.SIGTERM)
        assert terminal.close() == 0
    finally:
        if terminal.process.poll() is None:
            terminal.process.kill()
    assert _reports(tmp_path) == [(question, "typo", "option C is misspelt")]


def test_cancel_sends_nothing(tmp_path: Path) -> None:
    terminal = _report_opened(tmp_path)
    try:
        terminal.type("cancel\n")
        terminal.read_until("nothing was sent")
        terminal.type("/quiz reports\n")
        terminal.read_until("No open reports")
        terminal.process.send_signal(signal.SIGTERM)
        assert terminal.close() == 0
    finally:
        if terminal.process.poll() is None:
            terminal.process.kill()
    assert _reports(tmp_path) == []


def test_the_game_offers_a_report_on_any_of_its_questions_at_the_end(tmp_path: Path) -> None:
    play = [*QUIZMASTER, "play", "--questions", "2", "--seconds", "20"]
    terminal = Terminal(play, tmp_path, _env(tmp_path))
    try:
        terminal.read_until(r"⏱ \d+ s left")
        terminal.type("A\n")
        terminal.read_until(r"Score \d+")
        terminal.read_until(r"Question 2/2")
        terminal.type("B\n")
        terminal.read_until(r"Type ! and its number \(1-2\)")
        terminal.type("! 3\n")
        terminal.read_until("is not a question of this game")
        terminal.type("! 2\n")
        terminal.read_until("What is wrong")
        terminal.type("wrong answer\n")
        terminal.read_until("an empty line ends or skips")
        terminal.type("\n")
        seen = _plain(terminal.read_until("is with the moderators"))
        question = seen.split("your report on ")[1].split(" ")[0]
        terminal.read_until(r"(?s)moderators.*or Enter to leave")
        terminal.type("\n")
        assert terminal.close() == 0
    finally:
        if terminal.process.poll() is None:
            terminal.process.kill()
    assert _reports(tmp_path) == [(question, "wrong answer", None)]
    assert question == _question_of(tmp_path, sequence=2), "the second question was reported"


def _question_of(tmp_path: Path, *, sequence: int) -> str:
    [database] = list(tmp_path.rglob("quizmaster.db"))
    with sqlite3.connect(database) as db:
        [(question,)] = db.execute("select question_id from posts where sequence = ?", (sequence,))
    return str(question)


def test_a_question_is_submitted_from_the_terminal_a_field_at_a_time(tmp_path: Path) -> None:
    terminal = Terminal([*QUIZMASTER, "run"], tmp_path, _env(tmp_path, QUIZ_HEALTH_PORT="0"))
    try:
        terminal.read_until("Local console channel")
        terminal.type("/quiz submit\n")
        terminal.read_until("Submit a question")
        terminal.type("Which collective sums tensors across ranks?\n\n")
        terminal.read_until("one per line")
        terminal.type("all_reduce\nbroadcast\nscatter\n\n")
        terminal.read_until("Letter of the right option")
        terminal.type("A\n")
        terminal.read_until("Why it is right")
        terminal.type("all_reduce sums and shares the result with every rank.\n\n")
        terminal.read_until("Tags")
        terminal.type("\n")
        terminal.read_until("moderator", within=15)
        terminal.process.send_signal(signal.SIGTERM)
        assert terminal.close() == 0
    finally:
        if terminal.process.poll() is None:
            terminal.process.kill()
    [database] = list(tmp_path.rglob("quizmaster.db"))
    with sqlite3.connect(database) as db:
        [(question, status)] = db.execute("select question, status from submissions")
    submitted = json.loads(question)
    assert submitted["prompt"] == "Which collective sums tensors across ranks?"
    assert submitted["options"] == ["all_reduce", "broadcast", "scatter"]
    assert status == "pending"
