"""`quizmaster run`: start-up checks, the local console channel, /healthz and a clean SIGTERM."""

from __future__ import annotations

import json
import os
import pty
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

from tests.processes import QUIZMASTER, bot_environment, free_port
from tests.test_cli import run_cli


def test_without_platforms_and_without_a_terminal_it_says_what_to_do_and_exits_2(
    tmp_path: Path,
) -> None:
    result = run_cli("run", cwd=tmp_path, env={"QUIZ_HEALTH_PORT": "0"})
    assert result.returncode == 2
    first, *rest = result.stderr.splitlines()
    assert first.startswith("Cannot start: no chat platform is configured")
    advice = "\n".join(rest[:2])
    assert "quizmaster play" in advice, "how to play in the terminal"
    assert "DISCORD_TOKEN" in advice and "SLACK_BOT_TOKEN" in advice, "how to set a token"
    assert "QUIZ_HEALTH_PORT" in result.stderr, "the settings are still listed"
    assert "Traceback" not in result.stderr


def test_a_slack_bot_token_alone_names_the_missing_setting(tmp_path: Path) -> None:
    result = run_cli(
        "run", cwd=tmp_path, env={"SLACK_BOT_TOKEN": "xoxb-secret-value", "QUIZ_HEALTH_PORT": "0"}
    )
    assert result.returncode == 2
    assert "SLACK_APP_TOKEN" in result.stderr
    assert "SLACK_SIGNING_SECRET" in result.stderr
    assert "xoxb-secret-value" not in result.stderr


def _get(url: str) -> tuple[int, dict[str, object]]:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def test_in_a_terminal_it_opens_the_console_channel_serves_health_and_stops_on_sigterm(
    tmp_path: Path,
) -> None:
    port = free_port()
    environment = bot_environment(tmp_path, QUIZ_HEALTH_PORT=str(port))
    controller, terminal = pty.openpty()
    process = subprocess.Popen(
        [*QUIZMASTER, "run"],
        stdin=terminal,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=tmp_path,
        env=environment,
        text=True,
    )
    os.close(terminal)
    try:
        deadline = time.monotonic() + 30
        status, body = 0, {}
        while time.monotonic() < deadline:
            try:
                status, body = _get(f"http://127.0.0.1:{port}/healthz")
                break
            except (urllib.error.URLError, ConnectionError):
                time.sleep(0.2)
        assert status == 200
        assert body["database"] == "ok"
        assert body["platforms"] == {"console": "connected"}

        os.write(controller, b"/quiz start 1 60\n")
        time.sleep(1.0)
        process.send_signal(signal.SIGTERM)
        out, err = process.communicate(timeout=20)
    finally:
        if process.poll() is None:
            process.kill()
        os.close(controller)
    assert process.returncode == 0, err
    assert "Local console channel" in out
    assert "Question 1/1" in out


def test_sigterm_while_a_platform_is_still_connecting_stops_cleanly(tmp_path: Path) -> None:
    # A server that accepts connections and never answers: Discord's login hangs.
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        port = silent.getsockname()[1]
        environment = bot_environment(
            tmp_path,
            DISCORD_TOKEN="token-that-is-never-checked",
            QUIZ_DISCORD_API_URL=f"http://127.0.0.1:{port}/api/v10",
            QUIZ_HEALTH_PORT="0",
        )
        process = subprocess.Popen(
            [*QUIZMASTER, "run"],
            cwd=tmp_path,
            env=environment,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            silent.settimeout(20)
            connection, _ = silent.accept()  # the login request has arrived
            process.send_signal(signal.SIGTERM)
            _, err = process.communicate(timeout=20)
            connection.close()
        finally:
            if process.poll() is None:
                process.kill()
    assert process.returncode == 0, err
    assert "token-that-is-never-checked" not in err
