"""Slack installed in many workspaces: the real Bolt app runs Slack's OAuth v2
flow against the fake Slack (install page, state cookie, code exchange), keeps
each installation in our database through slack-sdk's stores, answers each
workspace with its own token, and stops posting where the app is uninstalled.
On SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio
import json
import random
import re
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

import aiohttp
import pytest
import yaml

from bot.adapters.slack.oauth import BOT_SCOPES, REDIRECT_PATH
from bot.adapters.slack.platform import SlackPlatform
from bot.chat import OutMessage, Target
from bot.clock import SystemClock
from bot.config import Settings
from bot.platforms import settings_problem
from bot.quiz.bank import Catalog
from bot.quiz.service import QuizService
from bot.storage.db import Database
from bot.storage.repository import Repository
from tests.conftest import ROOT
from tests.fakes.fake_slack import (
    CLIENT_ID,
    CLIENT_SECRET,
    SIGNING_SECRET,
    FakeSlack,
    SignedSender,
    slash_payload,
)

ALPHA, BETA = "T0ALPHA", "T0BETA"
CHANNEL_A, CHANNEL_B = "C0ALPHA", "C0BETA"
ADMIN = "U0ADMIN"


def oauth_settings(fake: FakeSlack, **extra: Any) -> Settings:
    values: dict[str, Any] = {
        "slack_client_id": CLIENT_ID,
        "slack_client_secret": CLIENT_SECRET,
        "slack_signing_secret": SIGNING_SECRET,
        "slack_api_url": fake.api_url,
        "slack_host": "127.0.0.1",
        "slack_port": 0,
        **extra,
    }
    return Settings(_env_file=None, **values)  # type: ignore[call-arg]


@dataclass
class Bot:
    fake: FakeSlack
    platform: SlackPlatform
    service: QuizService
    sender: SignedSender
    browser: aiohttp.ClientSession

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.platform.port}"

    async def install(self, team: str, *, org: str | None = None) -> str:
        """A member opens the install page, clicks Add to Slack, approves in
        `team`, and comes back to the redirect: the page they end on."""
        async with self.browser.get(f"{self.base}/slack/install") as page:
            assert page.status == 200
            shown = await page.text()
            # A Secure cookie, which a browser sends back over https only; the
            # test hands it back itself.
            cookie = page.headers["Set-Cookie"].split(";")[0]
        [link] = re.findall(r'href="([^"]+)"', shown)
        chosen = {"org": org} if org else {"team": team}
        authorize = link.replace("&amp;", "&") + "&" + urlencode(chosen)
        # The fake Slack approves and redirects back to the bot with a code.
        async with self.browser.get(authorize, allow_redirects=False) as approved:
            back = approved.headers["Location"]
        async with self.browser.get(back, headers={"Cookie": cookie}) as done:
            return await done.text()

    async def slash(
        self, team: str, channel: str, text: str, *, org_wide: bool = False
    ) -> tuple[int, str]:
        payload = slash_payload(
            text, user=ADMIN, channel=channel, response_url=self.fake.response_url("r"), team=team
        )
        enterprise = self.fake.workspaces[team].enterprise
        if enterprise:  # as Slack sends it from a workspace of an organisation
            payload |= {"enterprise_id": enterprise, "enterprise_name": "Org"}
        if org_wide:
            payload["is_enterprise_install"] = "true"
        return await self.sender.slash(payload)

    async def event(self, team: str, kind: str, **event: Any) -> int:
        body = {
            "token": "legacy-verification-token",
            "team_id": team,
            "api_app_id": "A0QUIZ",
            "type": "event_callback",
            "event_id": f"Ev{time.monotonic_ns()}",
            "event_time": int(time.time()),
            "event": {"type": kind, "event_ts": f"{time.time():.6f}", **event},
            "authorizations": [
                {"team_id": team, "user_id": "U0BOT", "is_bot": True, "enterprise_id": None}
            ],
        }
        status, _ = await self.sender.post(json.dumps(body))
        return status


@pytest.fixture
async def fake() -> AsyncIterator[FakeSlack]:
    made = await FakeSlack().start()
    made.add_workspace(ALPHA, "Alpha")
    made.add_workspace(BETA, "Beta", enterprise="E0ORG")
    made.add_user(ADMIN, "Ada", admin=True)
    yield made
    await made.close()


@pytest.fixture
async def bot(fake: FakeSlack, database: Database, catalog: Catalog) -> AsyncIterator[Bot]:
    service = QuizService(Repository(database), catalog, SystemClock(), rng=random.Random(3))
    platform = SlackPlatform(oauth_settings(fake), service)
    service.register(platform.adapter)
    await platform.start()
    fake.redirect_url = f"http://127.0.0.1:{platform.port}/slack/oauth_redirect"
    timers = asyncio.create_task(service.run_timers())
    sender = SignedSender(f"http://127.0.0.1:{platform.port}/slack/events")
    browser = aiohttp.ClientSession(cookie_jar=aiohttp.DummyCookieJar())
    try:
        yield Bot(fake, platform, service, sender, browser)
    finally:
        await browser.close()
        await sender.close()
        service.shutdown()
        timers.cancel()
        await asyncio.gather(timers, return_exceptions=True)
        await platform.close()


def test_the_oauth_settings_are_checked_in_one_line_each() -> None:
    fake = FakeSlack()
    assert settings_problem(oauth_settings(fake)) is None
    both = oauth_settings(fake, slack_bot_token="xoxb-1")
    assert settings_problem(both) == (
        "set either SLACK_BOT_TOKEN (one workspace) or SLACK_CLIENT_ID and "
        "SLACK_CLIENT_SECRET (installed in many workspaces), not both"
    )
    half = oauth_settings(fake, slack_client_secret=None)
    assert "needs both SLACK_CLIENT_ID and SLACK_CLIENT_SECRET" in str(settings_problem(half))
    socket = oauth_settings(fake, slack_app_token="xapp-1")
    assert "runs in HTTP mode" in str(settings_problem(socket))


async def test_two_workspaces_install_and_each_is_answered_with_its_own_token(bot: Bot) -> None:
    fake = bot.fake
    async with bot.browser.get(f"{bot.base}/slack/install") as page:
        assert "Add to Slack" in await page.text()
        assert "slack-app-oauth-state" in page.headers.get("Set-Cookie", "")

    assert "Quizmaster is ready in Alpha" in await bot.install(ALPHA)
    assert "Quizmaster is ready in Beta" in await bot.install(BETA)
    assert len(fake.calls_to("oauth.v2.access")) == 2

    for team, channel in ((ALPHA, CHANNEL_A), (BETA, CHANNEL_B)):
        status, _ = await bot.slash(team, channel, "start 1 5")
        assert status == 200
        await fake.wait_for(lambda team=team: fake.calls_in(team, "chat.postMessage"))
    # Each workspace's question went out with that workspace's token, in its channel.
    assert [c.channel for c in fake.calls_in(ALPHA, "chat.postMessage")] == [CHANNEL_A]
    assert [c.channel for c in fake.calls_in(BETA, "chat.postMessage")] == [CHANNEL_B]


async def test_a_click_on_a_link_used_twice_or_forged_installs_nothing(bot: Bot) -> None:
    page = await bot.install(ALPHA)
    assert "Quizmaster is ready" in page
    async with bot.browser.get(
        f"{bot.base}/slack/oauth_redirect?" + urlencode({"code": "code-forged", "state": "made-up"})
    ) as forged:
        assert "was not installed" in await forged.text()
    assert len(bot.fake.calls_to("oauth.v2.access")) == 1


async def test_an_uninstalled_workspace_gets_no_more_posts_and_others_keep_theirs(
    bot: Bot,
) -> None:
    fake = bot.fake
    await bot.install(ALPHA)
    await bot.install(BETA)
    for team, channel in ((ALPHA, CHANNEL_A), (BETA, CHANNEL_B)):
        status, _ = await bot.slash(team, channel, "schedule daily 09:00")
        assert status == 200
    await fake.wait_for(lambda: len(fake.calls_to("chat.postEphemeral")) + len(fake.responses) >= 2)

    fake.uninstall(ALPHA)
    assert await bot.event(ALPHA, "app_uninstalled") == 200

    async def paused() -> bool:
        info = await bot.service.channel(Target("slack", ALPHA, CHANNEL_A))
        return info.delivery_problem is not None

    for _ in range(50):
        if await paused():
            break
        await asyncio.sleep(0.1)
    assert await paused()
    beta = await bot.service.channel(Target("slack", BETA, CHANNEL_B))
    assert beta.delivery_problem is None
    # A post for the removed workspace is refused before any call is made.
    with pytest.raises(Exception, match="not installed in workspace T0ALPHA"):
        await bot.platform.adapter.send(Target("slack", ALPHA, CHANNEL_A), OutMessage(text="hello"))

    # Installed again: the channel's timed posts resume.
    await bot.install(ALPHA)
    info = await bot.service.channel(Target("slack", ALPHA, CHANNEL_A))
    assert info.delivery_problem is None


async def test_a_rotating_token_is_refreshed_before_a_post(bot: Bot) -> None:
    fake = bot.fake
    fake.rotating = True  # tokens good for 10 minutes, under the 2 h refresh margin
    await bot.install(ALPHA)
    [first] = [t for t, team in fake.tokens.items() if team == ALPHA]
    await bot.platform.adapter.send(Target("slack", ALPHA, CHANNEL_A), OutMessage(text="hello"))
    [post] = fake.calls_in(ALPHA, "chat.postMessage")
    assert post.token != first  # refreshed through oauth.v2.access before posting
    refreshes = [c for c in fake.calls_to("oauth.v2.access") if c.params.get("grant_type")]
    assert len(refreshes) == 1


def test_the_install_asks_for_the_scopes_the_manifest_declares() -> None:
    manifest = yaml.safe_load((ROOT / "slack-app-manifest.yml").read_text())
    assert set(BOT_SCOPES) == set(manifest["oauth_config"]["scopes"]["bot"])
    [redirect] = manifest["oauth_config"]["redirect_urls"]
    assert redirect.endswith(REDIRECT_PATH)


async def test_an_org_wide_install_serves_each_workspace_of_the_organisation(bot: Bot) -> None:
    fake = bot.fake
    assert "Quizmaster is ready in Org" in await bot.install(BETA, org="E0ORG")
    status, _ = await bot.slash(BETA, CHANNEL_B, "start 1 5", org_wide=True)
    assert status == 200
    await fake.wait_for(lambda: fake.calls_in("E0ORG", "chat.postMessage"))
    # A timed post (no request to learn the organisation from) finds the
    # organisation's token through what the database remembers.
    assert bot.platform.installed is not None
    bot.platform.installed._orgs.clear()
    await bot.platform.adapter.send(Target("slack", BETA, CHANNEL_B), OutMessage(text="hello"))
    assert [c.text for c in fake.calls_in("E0ORG", "chat.postMessage")][-1] == "hello"


def test_the_installation_tables_are_the_ones_slack_sdks_stores_use() -> None:
    """Storage writes them out without importing slack-sdk; the stores must
    find exactly the columns, types, nullability and indexes they build."""
    import sqlalchemy as sa
    from slack_sdk.oauth.installation_store.sqlalchemy import SQLAlchemyInstallationStore
    from slack_sdk.oauth.state_store.sqlalchemy import SQLAlchemyOAuthStateStore

    from bot.storage.installations import SLACK_BOTS, SLACK_INSTALLATIONS, SLACK_OAUTH_STATES

    def shape(table: sa.Table) -> tuple[set[tuple[str, str, bool, bool]], set[Any]]:
        columns = {(c.name, repr(c.type), bool(c.nullable), c.primary_key) for c in table.columns}
        indexes = {(i.name, tuple(c.name for c in i.columns)) for i in table.indexes}
        return columns, indexes

    theirs = sa.MetaData()
    built = [
        SQLAlchemyInstallationStore.build_bots_table(theirs, "slack_bots"),
        SQLAlchemyInstallationStore.build_installations_table(theirs, "slack_installations"),
        SQLAlchemyOAuthStateStore.build_oauth_states_table(theirs, "slack_oauth_states"),
    ]
    ours = [SLACK_BOTS, SLACK_INSTALLATIONS, SLACK_OAUTH_STATES]
    for mine, sdk in zip(ours, built, strict=True):
        assert shape(mine) == shape(sdk), mine.name
