"""Installing the app in many workspaces: Slack's OAuth v2 flow through Bolt.

`GET /slack/install` shows an "Add to Slack" page (with a state cookie kept in
the database's state store), `GET /slack/oauth_redirect` exchanges the code for
the workspace's bot token (oauth.v2.access) and keeps the installation in the
database's installation store, so every process on the database can use it."""

from __future__ import annotations

import html
import logging
from collections.abc import Awaitable, Callable

from aiohttp import web
from slack_bolt.adapter.aiohttp import to_aiohttp_response
from slack_bolt.authorization.async_authorize import AsyncInstallationStoreAuthorize
from slack_bolt.oauth.async_callback_options import (
    AsyncCallbackOptions,
    AsyncFailureArgs,
    AsyncSuccessArgs,
)
from slack_bolt.oauth.async_oauth_flow import AsyncOAuthFlow
from slack_bolt.oauth.async_oauth_settings import AsyncOAuthSettings
from slack_bolt.request.async_request import AsyncBoltRequest
from slack_bolt.response import BoltResponse
from slack_sdk.oauth.installation_store.models.installation import Installation
from slack_sdk.oauth.installation_store.sqlalchemy import AsyncSQLAlchemyInstallationStore
from slack_sdk.oauth.state_store.sqlalchemy import AsyncSQLAlchemyOAuthStateStore
from slack_sdk.web.async_client import AsyncWebClient
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.adapters.slack import texts

log = logging.getLogger(__name__)

INSTALL_PATH = "/slack/install"
REDIRECT_PATH = "/slack/oauth_redirect"
# What the bot asks each workspace for (the manifest lists the same, with why).
BOT_SCOPES = ["chat:write", "commands", "users:read", "usergroups:read", "im:write", "files:write"]
STATE_SECONDS = 600  # an "Add to Slack" click is good for ten minutes

Installed = Callable[[Installation], Awaitable[None]]


def installation_store(engine: AsyncEngine, client_id: str) -> AsyncSQLAlchemyInstallationStore:
    return AsyncSQLAlchemyInstallationStore(client_id=client_id, engine=engine)


def authorization_url(api_url: str) -> str:
    """Slack's authorize page beside its Web API (a test fake serves both)."""
    return api_url.rstrip("/").removesuffix("/api") + "/oauth/v2/authorize"


class InstallFlow(AsyncOAuthFlow):
    """Bolt's flow with our install page and outcome pages."""

    async def build_install_page_html(self, url: str, request: AsyncBoltRequest) -> str:
        return _page(texts.install_title(), texts.install_body(), (url, texts.add_to_slack()))


def install_flow(
    *,
    client_id: str,
    client_secret: str,
    engine: AsyncEngine,
    store: AsyncSQLAlchemyInstallationStore,
    client: AsyncWebClient,
    api_url: str,
    installed: Installed,
) -> InstallFlow:
    async def success(args: AsyncSuccessArgs) -> BoltResponse:
        await installed(args.installation)
        team = args.installation.team_name or args.installation.enterprise_name or ""
        return _html(200, _page(texts.installed_title(), texts.installed_body(team)))

    async def failure(args: AsyncFailureArgs) -> BoltResponse:
        log.info("Slack install failed: %s", args.reason)
        status = args.suggested_status_code
        return _html(status, _page(texts.install_failed_title(), texts.install_failed_body()))

    settings = AsyncOAuthSettings(
        client_id=client_id,
        client_secret=client_secret,
        scopes=BOT_SCOPES,
        install_path=INSTALL_PATH,
        redirect_uri_path=REDIRECT_PATH,
        authorization_url=authorization_url(api_url),
        installation_store=store,
        installation_store_bot_only=True,
        state_store=AsyncSQLAlchemyOAuthStateStore(expiration_seconds=STATE_SECONDS, engine=engine),
        state_expiration_seconds=STATE_SECONDS,
        callback_options=AsyncCallbackOptions(success=success, failure=failure),
    )
    # Bolt asks auth.test for every request unless told to remember the
    # answer per token; the token itself is looked up in the store each time,
    # so an uninstalled workspace is refused at once.
    settings.authorize = AsyncInstallationStoreAuthorize(
        logger=log,
        client_id=client_id,
        client_secret=client_secret,
        installation_store=store,
        bot_only=True,
        cache_enabled=True,
    )
    return InstallFlow(client=client, settings=settings)


def add_install_routes(app: web.Application, flow: InstallFlow) -> None:
    """The two pages of the flow, on the Slack port beside /slack/events."""

    async def install(request: web.Request) -> web.StreamResponse:
        return await to_aiohttp_response(await flow.handle_installation(_bolt(request)))

    async def redirect(request: web.Request) -> web.StreamResponse:
        return await to_aiohttp_response(await flow.handle_callback(_bolt(request)))

    app.router.add_get(INSTALL_PATH, install)
    app.router.add_get(REDIRECT_PATH, redirect)


def _bolt(request: web.Request) -> AsyncBoltRequest:
    return AsyncBoltRequest(body="", query=request.query_string, headers=dict(request.headers))


def _html(status: int, page: str) -> BoltResponse:
    return BoltResponse(status=status, body=page, headers={"Content-Type": "text/html"})


def _page(title: str, body: str, link: tuple[str, str] | None = None) -> str:
    button = ""
    if link is not None:
        url, label = link
        button = f'<p><a class="add" href="{html.escape(url)}">{html.escape(label)}</a></p>'
    return (
        "<!doctype html><html lang=en><head><meta charset=utf-8>"
        f"<title>{html.escape(title)}</title></head>"
        f"<body><h1>{html.escape(title)}</h1><p>{html.escape(body)}</p>{button}</body></html>"
    )
