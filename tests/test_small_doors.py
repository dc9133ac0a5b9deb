"""The small doors of issue #21: each odd input gets one clear line, never an
internal error or silence."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from bot.app import Runtime
from bot.config import Settings
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
