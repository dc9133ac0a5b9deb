"""The small doors of issue #21: each odd input gets one clear line, never an
internal error or silence."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest
import yaml

from bot.app import Runtime
from bot.config import Settings
from tests.test_cli import run_cli
from tests.test_slack import MakeSlack, fake, make_slack

__all__ = ["fake", "make_slack"]  # fixtures used by name


@pytest.mark.parametrize("length", [320, 6000])
async def test_a_very_long_time_zone_is_not_a_time_zone(make_slack: MakeSlack, length: int) -> None:
    slack = await make_slack()
    zone = "Europe/" + "B" * length
    reply = await slack.command(f"config set timezone {zone}")
    assert reply.private
    assert "is not a time zone I know" in reply.text
    assert len(reply.text) < 300  # the paste is not echoed back whole
    assert "Europe/Berlin" in (await slack.command("config set timezone Europe/Berlin")).text


async def test_the_sqlite_files_are_readable_by_their_owner_only(tmp_path: Path) -> None:
    settings = Settings(_env_file=None, data_dir=tmp_path / "data")  # type: ignore[call-arg]
    async with Runtime.build(settings) as runtime:
        await runtime.database_ok()
        files = sorted((tmp_path / "data").iterdir())
        assert [path.name for path in files][:1] == ["quizmaster.db"]
        for path in files:  # the database and its -wal and -shm companions
            assert stat.S_IMODE(path.stat().st_mode) == 0o600, path.name


def test_db_check_never_creates_or_migrates_a_database(tmp_path: Path) -> None:
    missing = tmp_path / "data" / "quizmaster.db"
    result = run_cli("db", "check", cwd=tmp_path, env={"QUIZ_DATA_DIR": str(missing.parent)})
    assert result.returncode == 2, result.stderr
    assert result.stderr.strip() == (
        f"There is no database at {missing} to check; nothing was created."
    )
    assert not missing.exists()

    missing.parent.mkdir()
    missing.touch()  # an empty file: a database nobody migrated
    result = run_cli("db", "check", cwd=tmp_path, env={"QUIZ_DATA_DIR": str(missing.parent)})
    assert result.returncode == 2, result.stderr
    assert "is not migrated and this version needs" in result.stderr
    assert "quizmaster db upgrade" in result.stderr
    assert missing.stat().st_size == 0  # not a table written
    assert sorted(p.name for p in missing.parent.iterdir()) == ["quizmaster.db"]


def test_db_check_on_a_migrated_database_compares_the_read_models(tmp_path: Path) -> None:
    env = {"QUIZ_DATA_DIR": str(tmp_path / "data")}
    assert run_cli("db", "upgrade", cwd=tmp_path, env=env).returncode == 0
    result = run_cli("db", "check", cwd=tmp_path, env=env)
    assert result.returncode == 0, result.stderr
    assert "Read models match the answers." in result.stdout


def test_terminal_escapes_in_a_bank_never_reach_the_screen(tmp_path: Path) -> None:
    banks = tmp_path / "banks"
    banks.mkdir()
    escapes = "\x1b]0;owned\x07\x1b[2K\x1b]52;c;ZWNobyBvd25lZA==\x07"
    (banks / "odd.yaml").write_text(
        yaml.safe_dump(
            {
                "id": "odd",
                "title": f"Odd{escapes} bank",
                "questions": [
                    {
                        "id": "odd-1",
                        "prompt": f"Which{escapes} one?",
                        "options": [f"This{escapes}", "That"],
                        "answer": "A",
                        "explanation": f"Because{escapes}.",
                        "tags": ["odd"],
                    }
                ],
            }
        ),
        encoding="utf-8",
    )
    env = {"QUIZ_QUESTIONS_DIR": str(banks), "NO_COLOR": "1"}
    listed = run_cli("questions", "list", cwd=tmp_path, env=env)
    played = run_cli("play", "--questions", "1", cwd=tmp_path, env=env, stdin="A\n")
    for result in (listed, played):
        assert result.returncode == 0, result.stderr
        assert "\x1b" not in result.stdout + result.stderr
        assert "\x07" not in result.stdout + result.stderr
    # What is left of an escape is plain text, which a terminal only shows.
    assert "Which]0;owned" in listed.stdout + played.stdout
