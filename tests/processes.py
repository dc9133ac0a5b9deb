"""Running `python -m bot` as a separate process, as an operator would, for the
tests that go through the command line and `quizmaster run`."""

from __future__ import annotations

import asyncio
import os
import resource
import socket
import sys
import time
from pathlib import Path
from typing import Any

import aiohttp

ROOT = Path(__file__).resolve().parent.parent
QUIZMASTER = [sys.executable, "-m", "bot"]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def bot_environment(cwd: Path, **settings: str) -> dict[str, str]:
    """This environment without any bot settings of its own, plus the shipped
    banks, a data folder under `cwd`, and `settings`."""
    environment = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("QUIZ_", "DISCORD_", "SLACK_"))
        and key not in ("LANGUAGE", "LC_ALL", "LC_MESSAGES")
    }
    # The terminal game speaks the terminal's language: English unless a test says.
    environment["LANG"] = "C.UTF-8"
    environment.update(
        QUIZ_QUESTIONS_DIR=str(ROOT / "questions"),
        QUIZ_DATA_DIR=str(cwd / "data"),
        PYTHONPATH=str(ROOT),
    )
    environment.update(settings)
    return environment


async def start_run(
    cwd: Path, environment: dict[str, str], fd_limit: int = 0
) -> asyncio.subprocess.Process:
    """`quizmaster run` in the background, its output captured; `fd_limit`, if
    given, is its descriptor limit (RLIMIT_NOFILE)."""

    def limit() -> None:
        if fd_limit:
            resource.setrlimit(resource.RLIMIT_NOFILE, (fd_limit, fd_limit))

    return await asyncio.create_subprocess_exec(
        *QUIZMASTER,
        "run",
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        cwd=cwd,
        env=environment,
        preexec_fn=limit if fd_limit else None,
    )


async def wait_until_connected(
    port: int, platform: str, process: asyncio.subprocess.Process, within: float = 30
) -> dict[str, Any]:
    """Poll /healthz until it reports `platform` connected; its last answer."""
    deadline = time.monotonic() + within
    async with aiohttp.ClientSession() as session:
        while time.monotonic() < deadline:
            assert process.returncode is None, "quizmaster run exited early"
            try:
                async with session.get(f"http://127.0.0.1:{port}/healthz") as response:
                    body: dict[str, Any] = await response.json()
                    if body["platforms"].get(platform) == "connected":
                        return body
            except aiohttp.ClientError:
                pass
            await asyncio.sleep(0.2)
    raise AssertionError(f"quizmaster run never reported {platform} connected")
