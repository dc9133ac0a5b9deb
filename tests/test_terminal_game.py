"""`quizmaster play` as a person sees it: run in a pseudo-terminal it has colour,
a countdown that changes, an instant verdict with points and a compact reveal;
through a pipe or with NO_COLOR it prints the same words without one escape code."""

from __future__ import annotations

import os
import pty
import re
import select
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest

from tests.processes import QUIZMASTER, bot_environment
from tests.pseudo import GREEK_BANK, untranslated

ESCAPE = "\x1b"
VERDICT = re.compile(r"✓ Right, \+\d+ points|✗ Not quite: the answer is [A-E]")
COUNTDOWN = re.compile(r"⏱ (\d+) s left")


class Terminal:
    """A process on the slave side of a pty; its screen output read as text."""

    def __init__(self, args: list[str], cwd: Path, env: dict[str, str]) -> None:
        self.master, slave = pty.openpty()
        self.process = subprocess.Popen(
            args, cwd=cwd, env=env, stdin=slave, stdout=slave, stderr=slave, close_fds=True
        )
        os.close(slave)
        self.seen = ""

    def read_until(self, pattern: str | re.Pattern[str], within: float = 20) -> str:
        deadline = time.monotonic() + within
        while not re.search(pattern, self.seen):
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"never saw {pattern!r}; saw:\n{self.seen}")
            ready, _, _ = select.select([self.master], [], [], left)
            if ready:
                try:
                    self.seen += os.read(self.master, 65536).decode("utf-8", "replace")
                except OSError:  # the process closed its side
                    break
        return self.seen

    def type(self, text: str) -> None:
        os.write(self.master, text.encode())

    def close(self) -> int:
        try:
            return self.process.wait(timeout=30)
        finally:
            os.close(self.master)


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = bot_environment(tmp_path, TERM="xterm-256color", COLUMNS="100")
    env.pop("NO_COLOR", None)
    env.update(extra)
    return env


def _plain(text: str) -> str:
    return re.sub(r"\x1b(\[[0-9;?]*[A-Za-z]|[78])", "", text)


def test_in_a_terminal_the_game_has_colour_a_live_countdown_and_an_instant_verdict(
    tmp_path: Path,
) -> None:
    play = [*QUIZMASTER, "play", "--questions", "2", "--seconds", "5"]
    terminal = Terminal(play, tmp_path, _env(tmp_path))
    try:
        terminal.read_until(r"⏱ \d+ s left")
        seen = terminal.read_until(r"⏱ [0-3] s left", within=6)  # a later second drawn
        assert ESCAPE + "[" in seen and re.search(r"\x1b\[[0-9;]*3\dm", seen), "no colour"
        values = [int(v) for v in COUNTDOWN.findall(seen)]
        assert len(set(values)) >= 2 and values == sorted(values, reverse=True)

        terminal.type("A\n")
        seen = _plain(terminal.read_until(VERDICT))
        first_reveal = seen[seen.index("\nA\r\n") :] if "\nA\r\n" in seen else seen
        assert VERDICT.search(first_reveal)
        assert re.search(r"Score \d+ · [01]/1 right", terminal.read_until(r"Score \d+"))
        # Compact: the reveal does not print the question again, nor the channel's vote.
        prompt_line = _plain(seen).split("Question 1/2")[1].split("\n")[1].strip()
        assert _plain(terminal.seen).count(prompt_line) == 1
        assert "How the channel voted" not in terminal.seen
        assert "first click counts" not in terminal.seen

        # The second question is left to run out.
        seen = _plain(terminal.read_until(r"All time: .*\n", within=15))
        assert re.search(r"⏰ Time's up: the answer is [A-E]", seen)
        assert re.search(r"Right: [01] of 1", seen)
        assert "Best run:" in seen and "All time: 1 answered" in seen
        terminal.read_until("or Enter to leave")
        terminal.type("\n")  # no report: Enter leaves
        assert terminal.close() == 0
    finally:
        if terminal.process.poll() is None:
            terminal.process.kill()


def test_with_no_color_a_terminal_gets_plain_text(tmp_path: Path) -> None:
    play = [*QUIZMASTER, "play", "--questions", "1", "--seconds", "5"]
    terminal = Terminal(play, tmp_path, _env(tmp_path, NO_COLOR="1"))
    try:
        terminal.read_until("5 seconds · type")
        terminal.type("B\n")
        seen = terminal.read_until("Quiz over")
        terminal.read_until("or Enter to leave")
        terminal.type("\n")
        terminal.close()
    finally:
        if terminal.process.poll() is None:
            terminal.process.kill()
    assert ESCAPE not in seen
    assert VERDICT.search(seen)


def test_through_a_pipe_the_game_prints_no_escape_codes(tmp_path: Path) -> None:
    done = subprocess.run(
        [*QUIZMASTER, "play", "--questions", "2", "--seconds", "5"],
        cwd=tmp_path,
        env=_env(tmp_path),  # a colour terminal type, but a pipe
        input="A\nB\n",
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert ESCAPE not in done.stdout
    assert len(VERDICT.findall(done.stdout)) == 2
    assert "Score " in done.stdout and "Quiz over" in done.stdout


@pytest.mark.parametrize("wrong", ["zz", "7"])
def test_a_typo_is_told_the_letters_and_the_question_stays_open(tmp_path: Path, wrong: str) -> None:
    done = subprocess.run(
        [*QUIZMASTER, "play", "--questions", "1", "--seconds", "20"],
        cwd=tmp_path,
        env=_env(tmp_path),
        input=f"{wrong}\nC\n",
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert "Type one of A, B, C, D and press Enter." in done.stdout
    assert VERDICT.search(done.stdout)


def test_a_reader_that_goes_away_ends_the_game_quietly_and_closes_the_quiz(
    tmp_path: Path,
) -> None:
    # `quizmaster play | head -1`: the pipe closes after the first line.
    process = subprocess.Popen(
        [*QUIZMASTER, "play", "--questions", "3"],
        cwd=tmp_path,
        env=_env(tmp_path),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None and process.stdin is not None
    first = process.stdout.readline()
    process.stdout.close()
    try:
        process.stdin.write("A\nB\nC\n")
        process.stdin.close()
    except BrokenPipeError:
        pass
    assert process.wait(timeout=60) == 0
    assert first.startswith("Stats in ")
    assert process.stderr is not None and process.stderr.read() == ""  # no "Broken pipe"
    with sqlite3.connect(tmp_path / "data" / "quizmaster.db") as database:
        running = database.execute("SELECT count(*) FROM quizzes WHERE status = 'running'")
        assert running.fetchone() == (0,)


def test_the_game_speaks_the_terminals_language(tmp_path: Path) -> None:
    done = subprocess.run(
        [*QUIZMASTER, "play", "--questions", "1", "--seconds", "20"],
        cwd=tmp_path,
        env=_env(tmp_path, LANG="de_DE.UTF-8", NO_COLOR="1"),
        input="zz\nC\n",
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert "Tippe eins von A, B, C, D und drück Enter." in done.stdout or (
        "Tippe A, B, C, D und drück Enter." in done.stdout
    )
    assert re.search(r"✓ Richtig, \+\d+ Punkte|✗ Nicht ganz: Die Antwort ist [A-E]", done.stdout)
    assert "Quiz vorbei" in done.stdout


def test_a_pseudo_locale_game_shows_no_english_outside_the_bank(tmp_path: Path) -> None:
    banks = tmp_path / "banks"
    banks.mkdir()
    (banks / "greek.yaml").write_text(GREEK_BANK, encoding="utf-8")
    done = subprocess.run(
        [*QUIZMASTER, "play", "--questions", "2", "--seconds", "20"],
        cwd=tmp_path,
        env=_env(
            tmp_path,
            LANG="en_XA.UTF-8",
            QUIZ_PSEUDO_LOCALE="1",
            QUIZ_QUESTIONS_DIR=str(banks),
            NO_COLOR="1",
        ),
        input="zz\nB\n?\nA\n",
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    # The first line names the data folder (a path), and Ctrl-D is a key.
    lines = [line.replace("Ctrl-D", "") for line in done.stdout.splitlines()[1:]]
    found = [line for line in lines if untranslated(line)]
    assert not found, found
