"""Start-up failures an operator meets: `quizmaster run`, `play` and `db upgrade`
each say what is wrong and what to do in one line on stderr and exit 2, with no
traceback and never the password of the database URL."""

from __future__ import annotations

import functools
import os
import shutil
import socket
import sqlite3
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy.engine import make_url

from tests.conftest import POSTGRES_URL, SKIP_POSTGRES
from tests.processes import QUIZMASTER, ROOT, bot_environment
from tests.test_cli import run_cli

PASSWORD = "s3cret-Pa55word"
COMMANDS = {"run": ("run",), "play": ("play",), "db upgrade": ("db", "upgrade")}
# `run` needs something to serve; the database fails before Discord is contacted,
# and a closed port for Discord keeps a regression from hanging the test.
SERVE = {"DISCORD_TOKEN": "token-never-sent", "QUIZ_DISCORD_API_URL": "http://127.0.0.1:1/api/v10"}


def start(command: str, cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return run_cli(*COMMANDS[command], cwd=cwd, env={"QUIZ_HEALTH_PORT": "0", **SERVE, **env})


def the_one_line(result: subprocess.CompletedProcess[str]) -> str:
    """The single line on stderr, after checking exit 2 and no traceback or password."""
    assert "Traceback" not in result.stderr, result.stderr[-2000:]
    assert result.returncode == 2, result.stderr[-2000:]
    assert PASSWORD not in result.stderr + result.stdout
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("Cannot start: ")
    return lines[0]


def postgres_url(**parts: str | int) -> str:
    """A URL for the test PostgreSQL server with `parts` changed (user, database…)."""
    if not POSTGRES_URL:
        pytest.skip(SKIP_POSTGRES)
    return make_url(POSTGRES_URL).set(**parts).render_as_string(hide_password=False)  # type: ignore[arg-type]


@pytest.fixture(params=list(COMMANDS))
def command(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def test_postgres_on_a_closed_port(tmp_path: Path, command: str) -> None:
    url = f"postgresql://quiz:{PASSWORD}@127.0.0.1:1/quiz"
    line = the_one_line(start(command, tmp_path, QUIZ_DATABASE_URL=url))
    assert "127.0.0.1:1" in line and "not accepting connections" in line
    assert "start PostgreSQL" in line


def test_an_unknown_postgres_role(tmp_path: Path, command: str) -> None:
    url = postgres_url(username="nosuchrole", password=PASSWORD)
    line = the_one_line(start(command, tmp_path, QUIZ_DATABASE_URL=url))
    assert "role nosuchrole" in line and "does not exist" in line
    assert "create the role" in line


def test_a_missing_postgres_database(tmp_path: Path, command: str) -> None:
    url = postgres_url(database="no_such_db", password=PASSWORD)
    line = the_one_line(start(command, tmp_path, QUIZ_DATABASE_URL=url))
    assert "database no_such_db does not exist" in line
    assert "createdb no_such_db" in line


def test_a_data_folder_below_a_file(tmp_path: Path, command: str) -> None:
    # Root may write anywhere, but nobody can make a folder inside a regular file.
    (tmp_path / "file").write_text("not a folder")
    line = the_one_line(start(command, tmp_path, QUIZ_DATA_DIR=str(tmp_path / "file" / "data")))
    assert f"data folder {tmp_path / 'file' / 'data'} cannot be created" in line
    assert "QUIZ_DATA_DIR" in line


def test_a_data_folder_that_is_a_file(tmp_path: Path, command: str) -> None:
    (tmp_path / "data").write_text("not a folder")
    line = the_one_line(start(command, tmp_path, QUIZ_DATA_DIR=str(tmp_path / "data")))
    assert "a file is in the way" in line


def test_a_folder_where_no_file_can_be_created(tmp_path: Path, command: str) -> None:
    # /proc/self exists, and not even root can create a file in it.
    line = the_one_line(start(command, tmp_path, QUIZ_DATA_DIR="/proc/self"))
    assert "/proc/self/quizmaster.db cannot be opened or created" in line
    assert "QUIZ_DATA_DIR" in line


NOBODY = ["--reuid=65534", "--regid=65534", "--clear-groups"]


def can_import_as(prefix: list[str], root: Path, module: str) -> bool:
    """Whether `prefix` (a drop to another user) can still import `module` with
    this interpreter and read `root`'s files: not when the checkout sits in a
    folder only its owner may enter (a 0700 home, a `mktemp -d` folder)."""
    check = f"import os, {module}; os.listdir({str(root)!r})"
    probe = subprocess.run(
        [*prefix, sys.executable, "-c", check],
        env={**os.environ, "PYTHONPATH": str(root)},
        cwd="/",
        capture_output=True,
        timeout=60,
    )
    return probe.returncode == 0


@functools.cache
def unprivileged() -> list[str]:
    """A command prefix that drops root (who may write anywhere) to nobody."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("running as root without setpriv: no folder is read-only to us")
    prefix = [setpriv, *NOBODY]
    if not can_import_as(prefix, ROOT / "questions", "bot"):
        pytest.skip(
            f"user nobody cannot read the checkout at {ROOT} or its virtualenv "
            "(a folder only its owner may enter): these tests drop root to nobody "
            "to make a folder read-only; clone into a folder others can read to run them"
        )
    return prefix


@pytest.fixture
def shared_folder() -> Iterator[Path]:
    """A folder the unprivileged user can enter (pytest's tmp_path is root's alone)."""
    made = Path(tempfile.mkdtemp(prefix="quiz-startup-"))
    made.chmod(0o755)
    yield made
    for path in made.rglob("*"):
        path.chmod(0o755)
    shutil.rmtree(made)


def start_unprivileged(command: str, cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    environment = bot_environment(cwd, QUIZ_HEALTH_PORT="0", **SERVE, **env)
    return subprocess.run(
        [*unprivileged(), *QUIZMASTER, *COMMANDS[command]],
        cwd=cwd,
        input="",
        capture_output=True,
        text=True,
        env=environment,
        timeout=60,
    )


def test_the_drop_to_nobody_notices_a_checkout_it_cannot_read() -> None:
    prefix = unprivileged()
    if not prefix:
        pytest.skip("not root: nothing is dropped")
    private = Path(tempfile.mkdtemp(prefix="quiz-private-"))  # 0700, like mktemp -d
    try:
        (private / "probe_module.py").write_text("")
        assert not can_import_as(prefix, private, "probe_module")
        private.chmod(0o755)
        assert can_import_as(prefix, private, "probe_module")
    finally:
        shutil.rmtree(private)


def test_a_read_only_data_folder(shared_folder: Path, command: str) -> None:
    folder = shared_folder / "data"
    folder.mkdir()
    folder.chmod(0o555)
    line = the_one_line(start_unprivileged(command, shared_folder, QUIZ_DATA_DIR=str(folder)))
    assert f"{folder / 'quizmaster.db'} cannot be opened or created" in line
    assert "not writable" in line


def test_a_read_only_database_file(shared_folder: Path, command: str) -> None:
    folder = shared_folder / "data"
    created = run_cli("db", "upgrade", cwd=shared_folder, env={"QUIZ_DATA_DIR": str(folder)})
    assert created.returncode == 0, created.stderr
    for path in folder.iterdir():
        path.chmod(0o444)
    folder.chmod(0o555)
    line = the_one_line(start_unprivileged(command, shared_folder, QUIZ_DATA_DIR=str(folder)))
    assert f"{folder / 'quizmaster.db'} is read-only" in line


def test_run_with_the_health_port_taken(tmp_path: Path) -> None:
    with socket.socket() as other:
        other.bind(("127.0.0.1", 0))
        other.listen()
        port = other.getsockname()[1]
        line = the_one_line(start("run", tmp_path, QUIZ_HEALTH_PORT=str(port)))
    assert f"port {port} (QUIZ_HEALTH_PORT" in line and "already in use" in line
    assert "0 turns the health check off" in line
    assert not (tmp_path / "data" / "quizmaster.db").exists(), "found before the database"


# -- the mapping itself, for failures a test machine cannot produce for real ------------


def describe_database_error(error: BaseException, url: str) -> str | None:
    from bot.storage.db import describe_database_error as describe

    return describe(error, url)


def test_a_read_only_sqlite_database_is_named(tmp_path: Path) -> None:
    path = tmp_path / "quiz.db"
    sqlite3.connect(path).close()
    read_only = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    with pytest.raises(sqlite3.OperationalError) as raised:
        read_only.execute("CREATE TABLE t (x)")
    read_only.close()
    sentence = describe_database_error(raised.value, f"sqlite+aiosqlite:///{path}")
    assert sentence is not None
    assert f"{path} is read-only" in sentence


def test_a_rejected_password_is_named_but_never_shown() -> None:
    import asyncpg

    error = asyncpg.InvalidPasswordError('password authentication failed for user "quiz"')
    url = f"postgresql+asyncpg://quiz:{PASSWORD}@db.example:5433/quiz"
    sentence = describe_database_error(error, url)
    assert sentence is not None
    assert "rejected the password of role quiz" in sentence and "db.example:5433" in sentence
    assert PASSWORD not in sentence


def test_errors_we_do_not_know_are_left_alone() -> None:
    assert describe_database_error(ValueError("no"), "sqlite+aiosqlite:///x.db") is None
    assert describe_database_error(KeyError("no"), "postgresql+asyncpg://u@h/d") is None
