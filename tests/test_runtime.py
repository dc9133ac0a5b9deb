"""The timer loop and the health endpoint, with an injected clock and no platform."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import aiohttp

from bot.chat import Command
from bot.health import start_health_server
from bot.quiz.service import QuizService
from tests.conftest import CHANNEL
from tests.fakes.clock import FakeClock
from tests.fakes.recording import RecordingAdapter
from tests.processes import free_port


async def _until(condition: Callable[[], bool], rounds: int = 1000) -> None:
    for _ in range(rounds):
        if condition():
            return
        await asyncio.sleep(0.01)
    raise AssertionError("condition never became true")


async def test_timer_loop_closes_questions_when_their_time_comes(
    service: QuizService, adapter: RecordingAdapter, clock: FakeClock
) -> None:
    timers = asyncio.create_task(service.run_timers())
    try:
        await service.handle_command(
            Command("start", CHANNEL, "mod", True, {"questions": "2", "seconds": "20"})
        )
        await asyncio.sleep(0.05)
        assert not adapter.questions(CHANNEL)[0].edits, "closed before its time"
        clock.advance(21)
        await _until(lambda: len(adapter.questions(CHANNEL)) == 2)
        assert adapter.questions(CHANNEL)[0].edits, "the first question was not revealed"
        clock.advance(21)
        await _until(lambda: "final scores" in adapter.sent[-1].message.text)
    finally:
        service.shutdown()
        await asyncio.wait_for(timers, 5)


class _Adapter(RecordingAdapter):
    def __init__(self, up: bool) -> None:
        super().__init__("discord")
        self.up = up

    @property
    def connected(self) -> bool:
        return self.up


async def test_health_is_503_when_a_platform_or_the_database_is_down() -> None:
    adapter = _Adapter(up=True)
    database_up = True

    async def database_ok() -> bool:
        return database_up

    port = free_port()
    runner = await start_health_server({"discord": adapter}, database_ok, port, "127.0.0.1")
    try:
        async with aiohttp.ClientSession() as http:
            url = f"http://127.0.0.1:{port}/healthz"
            async with http.get(url) as response:
                assert response.status == 200
                assert (await response.json())["platforms"] == {"discord": "connected"}
            adapter.up = False
            async with http.get(url) as response:
                assert response.status == 503
                assert (await response.json())["platforms"] == {"discord": "disconnected"}
            adapter.up = True
            database_up = False
            async with http.get(url) as response:
                assert response.status == 503
                assert (await response.json())["database"] == "unreachable"
    finally:
        await runner.cleanup()
