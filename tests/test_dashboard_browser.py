"""The dashboard in a real browser: Debian's Chromium driven by Playwright,
on a generated history (tests/datagen.py, migrated as a release would be).
Each page is opened from its signed link and checked for what a person sees;
screenshots go to the test's folder, and one of each page to docs/ for the
README."""

from __future__ import annotations

import os
import random
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import pytest
from aiohttp import web
from playwright.async_api import Browser, Page, async_playwright, expect

from bot.chat import Target
from bot.health import start_health_server
from bot.quiz.bank import Catalog
from bot.quiz.service import QuizService
from bot.storage.db import create_engine, open_database, upgrade
from bot.storage.repository import Repository
from bot.web.links import DashboardLinks
from bot.web.pages import web_mounts
from bot.web.tokens import Signer
from tests.conftest import ROOT
from tests.datagen import PLATFORM, SCHEMA_REVISION, GeneratedInfo, generate
from tests.fakes.clock import FakeClock
from tests.fakes.recording import RecordingAdapter

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
NOW = datetime(2026, 3, 18, 15, 30, tzinfo=UTC)  # a Wednesday in mid-month
DOCS = ROOT / "docs"
FIRST = ("Ada", "Bo", "Chen", "Dara", "Emil", "Femi", "Gia", "Hugo", "Ines", "Jun", "Kai", "Lena")
LAST = [f"{letter}." for letter in "ABCDEFGHIJKLMNOPRSTUVWZ"]

pytestmark = pytest.mark.skipif(
    not CHROMIUM.exists() and os.environ.get("CI") != "true",
    reason="/usr/bin/chromium is missing (apt-get install chromium; .ci/run installs it)",
)


class NamedAdapter(RecordingAdapter):
    """A Discord stand-in whose members have short readable names."""

    async def display_names(self, target: Target, user_ids: Sequence[str]) -> dict[str, str]:
        return {u: f"{FIRST[int(u) % 12]} {LAST[int(u) // 12 % len(LAST)]}" for u in user_ids}


@dataclass
class Site:
    base: str
    links: DashboardLinks
    info: GeneratedInfo
    clock: FakeClock


@pytest.fixture
async def site(tmp_path: Path, catalog: Catalog) -> AsyncIterator[Site]:
    url = f"sqlite+aiosqlite:///{tmp_path / 'history.db'}"
    engine = create_engine(url)
    await upgrade(engine, SCHEMA_REVISION)
    info = await generate(
        engine,
        answers=6_000,
        members=120,
        channels=4,
        communities=2,
        days=40,
        seed=14,
        now=NOW,
    )
    await upgrade(engine)  # the read models, post_votes included, are backfilled
    await engine.dispose()
    database = open_database(url)
    clock = FakeClock(NOW)
    links = DashboardLinks(Signer("a browser test secret, long enough", clock), "http://x")
    service = QuizService(Repository(database), catalog, clock, rng=random.Random(3), links=links)
    service.register(NamedAdapter(PLATFORM))

    async def database_ok() -> bool:
        return True

    runner: web.AppRunner = await start_health_server(
        service.adapters, database_ok, 0, host="127.0.0.1", mounts=web_mounts(service, links)
    )
    host, port = runner.addresses[0][:2]
    try:
        yield Site(f"http://{host}:{port}", links, info, clock)
    finally:
        await runner.cleanup()
        await database.dispose()


@pytest.fixture
async def browser() -> AsyncIterator[Browser]:
    async with async_playwright() as playwright:
        launched = await playwright.chromium.launch(
            executable_path=str(CHROMIUM), args=CHROMIUM_ARGS
        )
        try:
            yield launched
        finally:
            await launched.close()


def local(site: Site, url: str) -> str:
    return site.base + url.removeprefix("http://x")


async def opened(browser: Browser, url: str) -> Page:
    page = await browser.new_page(viewport={"width": 1280, "height": 900})
    response = await page.goto(url)
    assert response is not None and response.status == 200, url
    return page


async def shoot(
    page: Page, tmp_path: Path, name: str, docs: bool = False, whole: bool = True
) -> None:
    """The whole page into the test's folder; for docs/, the whole page or
    (`whole` false, for a long page) its first screen."""
    await page.screenshot(path=str(tmp_path / name), full_page=True)
    if docs:
        DOCS.mkdir(exist_ok=True)
        await page.screenshot(path=str(DOCS / name), full_page=whole)


async def test_the_community_page_shows_boards_and_switches_period(
    site: Site, browser: Browser, tmp_path: Path
) -> None:
    target = Target(PLATFORM, site.info.community, site.info.busy_channel.channel)
    page = await opened(browser, local(site, site.links.community(target)))
    await expect(page.locator("h1")).to_have_text("Leaderboards")
    await expect(page.locator("nav.periods a.on")).to_have_text("This week")
    community_board = page.locator("section.board").first
    await expect(community_board.locator("h2")).to_contain_text("The whole community")
    await expect(community_board.locator("tbody tr")).to_have_count(10)
    first_name = await community_board.locator("tbody tr td.who").first.inner_text()
    assert first_name.split()[0] in FIRST  # a display name, not an id
    # The top-ten chart is drawn: ten bars with a width, the widest first.
    bars = page.locator("svg.bars rect")
    await expect(bars).to_have_count(10)
    widths = [float(await bars.nth(i).get_attribute("width") or 0) for i in range(10)]
    assert widths[0] > 0 and widths == sorted(widths, reverse=True)
    box = await bars.first.bounding_box()
    assert box is not None and box["width"] > 50
    # Two channels in this community, each with its own board.
    await expect(page.locator("section.board")).to_have_count(3)
    week_points = int(
        (await community_board.locator("tbody tr td.n").first.inner_text()).replace(",", "")
    )
    await shoot(page, tmp_path, "dashboard-community.png", docs=True)

    await page.get_by_role("link", name="All time").click()
    await expect(page.locator("nav.periods a.on")).to_have_text("All time")
    assert "period=all" in page.url
    await expect(community_board.locator("h2")).to_contain_text("All time")
    all_points = int(
        (await community_board.locator("tbody tr td.n").first.inner_text()).replace(",", "")
    )
    assert all_points > week_points  # 40 days beat half a week

    await page.get_by_role("link", name="Daily streaks").click()
    await expect(page.locator("th", has_text="Current streak").first).to_be_visible()
    assert await page.locator("section.board tbody tr").count() > 0
    await shoot(page, tmp_path, "community-streaks.png")


async def test_the_questions_page_shows_the_hardest_and_the_votes(
    site: Site, browser: Browser, tmp_path: Path
) -> None:
    target = Target(PLATFORM, site.info.community, site.info.busy_channel.channel)
    page = await opened(browser, local(site, site.links.community(target)))
    await page.get_by_role("link", name="Questions").click()
    await expect(page.locator("h1")).to_have_text("Questions")
    await expect(page.locator("nav.periods a.on")).to_have_text("This month")
    hardest = page.locator("ol.hardest li")
    await expect(hardest).to_have_count(10)
    shares = [
        int((await hardest.nth(i).locator(".share").inner_text()).rstrip("%")) for i in range(10)
    ]
    assert shares == sorted(shares)  # hardest first
    # Every question's votes drawn as a split bar, its right option marked.
    rows = page.locator("table.questions tbody tr")
    assert await rows.count() >= 10
    assert await rows.first.locator("svg.split rect").count() >= 1
    assert await rows.first.locator("ul.options li.right").count() == 1
    await expect(page.locator("figure.chart svg.bars").nth(1)).to_be_visible()  # per tag
    month = await page.locator("p.summary strong").nth(1).inner_text()
    await page.set_viewport_size({"width": 1280, "height": 1300})
    await shoot(page, tmp_path, "dashboard-questions.png", docs=True, whole=False)

    await page.get_by_role("link", name="All time").click()
    await expect(page.locator("nav.periods a.on")).to_have_text("All time")
    every = await page.locator("p.summary strong").nth(1).inner_text()
    assert int(every.replace(",", "")) > int(month.replace(",", ""))


async def test_a_member_page_from_their_own_link(
    site: Site, browser: Browser, tmp_path: Path
) -> None:
    member = site.info.heavy_member
    target = site.info.heavy_member_channel
    page = await opened(browser, local(site, site.links.member(target, member)))
    await expect(page.locator("nav.sections a.on")).to_have_text("My page")
    assert (await page.locator("h1").inner_text()).split()[0] in FIRST
    answered = int((await page.locator(".tile .big").nth(1).inner_text()).replace(",", ""))
    assert answered > 0
    # Points over time: a rising line with many points.
    line = page.locator("svg.line polyline.trend")
    await expect(line).to_have_count(1)
    points = (await line.get_attribute("points") or "").split()
    assert len(points) > 10
    heights = [float(p.split(",")[1]) for p in points]
    assert heights[-1] < heights[0]  # cumulative points rise (SVG y grows downwards)
    assert await page.locator("svg.bars rect").count() >= 3  # accuracy per tag
    assert await page.locator("table.rank tbody tr").count() >= 1  # streaks
    await shoot(page, tmp_path, "dashboard-member.png", docs=True)


async def test_a_bad_link_shows_nothing_in_the_browser(site: Site, browser: Browser) -> None:
    target = Target(PLATFORM, site.info.community, site.info.busy_channel.channel)
    url = local(site, site.links.community(target))
    page = await browser.new_page()
    response = await page.goto(url[:-3] + "abc")
    assert response is not None and response.status == 403
    await expect(page.locator("h1")).to_have_text("Link not valid")
    assert await page.locator("table").count() == 0
    site.clock.advance(25 * 3600)
    response = await page.goto(url)
    assert response is not None and response.status == 403
