"""The first start as a newcomer sees it: few lines, the data folder named, the
same stats from any working folder, and an old ./data database still used."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.processes import QUIZMASTER, bot_environment
from tests.test_cli import run_cli

# A Discord that refuses every connection, on this machine: start-up gets as far
# as the platform and stops there.
UNREACHABLE_DISCORD = {
    "DISCORD_TOKEN": "token-never-sent",
    "QUIZ_DISCORD_API_URL": "http://127.0.0.1:1/api/v10",
    "QUIZ_HEALTH_PORT": "0",
}


def _user_env(tmp_path: Path) -> dict[str, str]:
    """No QUIZ_DATA_DIR: the default is the user data folder, here under a fake home."""
    home = tmp_path / "home"
    return {"HOME": str(home), "XDG_DATA_HOME": str(home / ".local" / "share")}


def _play(cwd: Path, env: dict[str, str]) -> str:
    cwd.mkdir(parents=True, exist_ok=True)
    environment = bot_environment(cwd, **env)
    environment.pop("QUIZ_DATA_DIR")
    done = subprocess.run(
        [*QUIZMASTER, "play", "--questions", "1"],
        cwd=cwd,
        env=environment,
        input="A\n",
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr == "", "a game starts without log lines"
    return done.stdout


def test_stats_are_the_same_from_any_folder(tmp_path: Path) -> None:
    env = _user_env(tmp_path)
    first = _play(tmp_path / "one", env)
    second = _play(tmp_path / "elsewhere" / "two", env)
    database = tmp_path / "home" / ".local" / "share" / "quizmaster" / "quizmaster.db"
    assert first.splitlines()[0].startswith(f"Stats in {database} · 1 bank, 30 questions")
    assert "All time: 1 answered" in first
    assert "All time: 2 answered" in second
    assert not (tmp_path / "one" / "data").exists()


def test_an_existing_data_folder_is_still_used_and_named(tmp_path: Path) -> None:
    old = tmp_path / "project"
    old.mkdir()
    assert run_cli("db", "upgrade", cwd=old).returncode == 0
    assert (old / "data" / "quizmaster.db").exists()  # made the old way, in ./data
    shown = _play(old, _user_env(tmp_path))
    assert shown.splitlines()[0].startswith(
        f"Stats in {old / 'data' / 'quizmaster.db'} (the ./data"
    )


def test_run_starts_with_one_line_naming_the_database_and_banks(tmp_path: Path) -> None:
    result = run_cli("run", cwd=tmp_path, env=UNREACHABLE_DISCORD)
    assert result.returncode == 2
    before_platform = result.stderr.split("Cannot start")[0].splitlines()
    # The first line names the data and banks; the platform's own lines follow.
    assert f"Stats in {tmp_path / 'data' / 'quizmaster.db'} · 1 bank" in before_platform[0]
    assert "alembic" not in result.stderr, "migrations log only at DEBUG"
