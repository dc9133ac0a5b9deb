"""The terminal channel of `quizmaster run` checks a typed member id by the
terminal's own shape before the command reaches the quiz core."""

from __future__ import annotations

import asyncio
import io

import pytest

from bot.adapters.console.frontends import local_channel
from bot.quiz.service import QuizService


@pytest.mark.parametrize("typed", ["U0SLACK", "440000000000000001", "a" * 40, "Local"])
async def test_a_member_id_of_another_shape_is_refused_in_one_line(
    service: QuizService, typed: str
) -> None:
    out = io.StringIO()
    source = io.StringIO(f"stats <@{typed}>\nstats <@local>\nquit\n")
    await asyncio.wait_for(local_channel(service, asyncio.Event(), source, out), 10)
    shown = out.getvalue()
    refusals = [line for line in shown.splitlines() if "is not a member here" in line]
    assert len(refusals) == 1 and typed[:39] in refusals[0]
    # The terminal's own player is looked up as before.
    assert "Answered: 0" in shown
