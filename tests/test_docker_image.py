"""What the Docker image does on its own: its health check asks the port the bot
serves /healthz on, and its working folder is one its user may write."""

from __future__ import annotations

import asyncio
import re
import sys
from pathlib import Path

from bot.health import start_health_server
from tests.processes import ROOT, bot_environment, free_port

DOCKERFILE = (ROOT / "Dockerfile").read_text(encoding="utf-8")


async def _probe(tmp_path: Path, port: str) -> int:
    """`python -m bot.healthcheck` as the image's HEALTHCHECK runs it."""
    env = bot_environment(tmp_path, QUIZ_HEALTH_PORT=port)
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot.healthcheck", env=env, cwd=tmp_path
    )
    return await asyncio.wait_for(process.wait(), 30)


async def test_the_health_check_asks_the_configured_port(tmp_path: Path) -> None:
    database_up = True

    async def database_ok() -> bool:
        return database_up

    port = free_port()
    server = await start_health_server({}, database_ok, port, host="127.0.0.1")
    try:
        assert await _probe(tmp_path, str(port)) == 0
        database_up = False  # /healthz answers 503
        assert await _probe(tmp_path, str(port)) == 1
    finally:
        await server.cleanup()
    assert await _probe(tmp_path, str(port)) == 1, "nothing listening is unhealthy"
    assert await _probe(tmp_path, "0") == 0, "no health server: nothing to ask"


def test_the_image_uses_that_check_and_no_fixed_port() -> None:
    healthcheck = DOCKERFILE[DOCKERFILE.index("HEALTHCHECK") :].split("\n\n")[0]
    assert "bot.healthcheck" in healthcheck
    assert "8080" not in healthcheck


def test_the_working_folder_is_the_users_own() -> None:
    # The last WORKDIR is where the bot runs; it must be a folder made for its user.
    workdir = re.findall(r"^WORKDIR (\S+)", DOCKERFILE, re.M)[-1]
    owned = re.findall(r"chown quiz:quiz (\S+)", DOCKERFILE)
    assert workdir in owned, f"WORKDIR {workdir} is not chowned to the quiz user ({owned})"
    assert DOCKERFILE.index(f"WORKDIR {workdir}") > DOCKERFILE.index("USER ")
