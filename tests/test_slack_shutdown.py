"""`quizmaster run` in Slack HTTP mode, stopped in the middle of a burst of
clicks: every click Slack got a 200 for is in the database afterwards, whether
the bot was asked to stop (SIGTERM, exit 0) or killed outright (kill -9)."""

from __future__ import annotations

import signal
from pathlib import Path

from tests.slack_burst import burst_then_stop

BURST = 200
STOP_AFTER = 40  # answered clicks before the bot is stopped


async def _burst_then_stop(tmp_path: Path, stop: signal.Signals) -> None:
    burst = await burst_then_stop(tmp_path, stop, BURST, STOP_AFTER)
    if stop is signal.SIGTERM:
        assert burst.returncode == 0, burst.stderr
        assert "Traceback" not in burst.stderr
    assert len(burst.acked_before_stop) >= STOP_AFTER
    assert not burst.lost, f"{len(burst.lost)} acknowledged clicks were not stored"


async def test_sigterm_mid_burst_stores_every_click_that_got_200(tmp_path: Path) -> None:
    await _burst_then_stop(tmp_path, signal.SIGTERM)


async def test_kill_9_mid_burst_loses_no_click_that_got_200(tmp_path: Path) -> None:
    await _burst_then_stop(tmp_path, signal.SIGKILL)
