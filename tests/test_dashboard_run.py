"""`quizmaster run` with QUIZ_WEB_SECRET: the console's `/quiz dashboard` link
opens the page on the bot's own port, /metrics counts the command, and the
secret is never printed."""

from __future__ import annotations

import os
import pty
import re
import select
import signal
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

from tests.processes import QUIZMASTER, bot_environment, free_port

SECRET = "run-test-secret-0123456789"


def _read_until(fd: int, pattern: str, seconds: float = 30) -> str:
    """Terminal output until `pattern` shows up (the console echoes replies there)."""
    seen = ""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.2)
        if ready:
            try:
                seen += os.read(fd, 65536).decode(errors="replace")
            except OSError:
                break
            if re.search(pattern, seen):
                return seen
    raise AssertionError(f"{pattern!r} not in the output: {seen!r}")


def _get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


def test_the_console_link_opens_the_dashboard_and_metrics_count_it(tmp_path: Path) -> None:
    port = free_port()
    environment = bot_environment(tmp_path, QUIZ_HEALTH_PORT=str(port), QUIZ_WEB_SECRET=SECRET)
    controller, terminal = pty.openpty()
    process = subprocess.Popen(
        [*QUIZMASTER, "run"],
        stdin=terminal,
        stdout=terminal,
        stderr=subprocess.PIPE,
        cwd=tmp_path,
        env=environment,
        text=True,
    )
    os.close(terminal)
    try:
        _read_until(controller, "Local console channel")
        os.write(controller, b"/quiz dashboard\n")
        shown = _read_until(controller, r"/me\?t=\S+")
        urls = re.findall(r"http://localhost:\d+/dashboard/\S+", shown)
        assert len(urls) == 2, shown
        community = urls[0].replace("localhost", "127.0.0.1")
        status, page = _get(community)
        assert status == 200 and "<h1>Leaderboards</h1>" in page
        assert _get(community.split("?")[0])[0] == 403
        status, metrics = _get(f"http://127.0.0.1:{port}/metrics")
        assert status == 200
        assert 'quizmaster_commands_total{command="dashboard",platform="console"} 1.0' in metrics
        assert 'quizmaster_platform_connected{platform="console"} 1.0' in metrics
        process.send_signal(signal.SIGTERM)
        _, err = process.communicate(timeout=20)
    finally:
        if process.poll() is None:
            process.kill()
        os.close(controller)
    assert process.returncode == 0, err
    assert SECRET not in err and SECRET not in shown
