"""Shared by the dashboard tests: a scripted history through the service, and
the bot's web server (health, /metrics, dashboard) on 127.0.0.1."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass

from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer

from bot.chat import Target
from bot.health import health_app
from bot.quiz.service import QuizService
from bot.web.links import DashboardLinks
from bot.web.pages import web_mounts
from bot.web.tokens import Signer
from bot.web.views import ReviewCounts
from tests.conftest import CHANNEL, OTHER_CHANNEL, Host

SECRET = "a test secret that is long enough"
FAR_CHANNEL = Target("test", "guild-2", "far-1")


@dataclass(frozen=True)
class History:
    """What the script did: per member the points they must show, and the
    prompt of the question left open (which no page may show)."""

    points: dict[str, int]
    open_prompt: str
    far_member: str


async def play_history(host: Host) -> History:
    """Two channels of guild-1 and one of guild-2. In chan-1 a three-question
    quiz: ada right three times (fast), bob right once, cy wrong twice; in
    chan-2 one question, ada wrong and bob right; in guild-2 far-member right.
    Then one more question opens in chan-1 and stays open with answers."""
    await host.start(CHANNEL, questions=3, seconds=10)
    for number in range(3):
        await host.answer("ada", correct=True)
        await host.answer("bob", correct=number == 0)
        if number < 2:
            await host.answer("cy", correct=False)
        await host.close_current()
    await host.start(OTHER_CHANNEL, questions=1, seconds=10)
    await host.answer("ada", correct=False, target=OTHER_CHANNEL)
    await host.answer("bob", correct=True, target=OTHER_CHANNEL)
    await host.close_current(OTHER_CHANNEL)
    await host.start(FAR_CHANNEL, questions=1, seconds=10)
    await host.answer("far-member", correct=True, target=FAR_CHANNEL)
    await host.close_current(FAR_CHANNEL)
    # Left open: its answers must not show anywhere yet.
    await host.start(CHANNEL, questions=1, seconds=600)
    await host.answer("dee", correct=True)
    open_prompt = host.question_of(host.current()).prompt
    # Answers at once in a 10 s question earn 15 points when right.
    return History({"ada": 45, "bob": 30, "cy": 0}, open_prompt, "far-member")


def links_for(service: QuizService) -> DashboardLinks:
    return DashboardLinks(Signer(SECRET, service.clock), "http://127.0.0.1")


@asynccontextmanager
async def web_client(
    service: QuizService, links: DashboardLinks | None, reviews: ReviewCounts | None = None
) -> AsyncIterator[TestClient[web.Request, web.Application]]:
    async def database_ok() -> bool:
        return True

    app = health_app(service.adapters, database_ok, web_mounts(service, links, reviews))
    async with TestClient(TestServer(app, host="127.0.0.1")) as client:
        yield client


def path_of(url: str) -> str:
    """The path and query of a dashboard link (the test server has its own port)."""
    found = re.match(r"https?://[^/]+(/.*)$", url)
    assert found, url
    return found.group(1)


def rows_of(html: str) -> list[list[str]]:
    """Each table row's cells as text, in page order (tags stripped)."""
    rows = []
    for row in re.findall(r"<tr[^>]*>(.*?)</tr>", html, re.DOTALL):
        cells = re.findall(r"<td[^>]*>(.*?)</td>", row, re.DOTALL)
        if cells:
            rows.append([re.sub(r"<[^>]+>", "", cell).strip() for cell in cells])
    return rows
