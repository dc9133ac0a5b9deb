"""Which bot token speaks in which Slack workspace.

One workspace: the fixed SLACK_BOT_TOKEN. Many: the installations made through
Slack's OAuth flow, kept by slack-sdk's SQLAlchemy installation store in our
database (bot/storage/installations.py, migration 0015)."""

from __future__ import annotations

import logging
from collections import OrderedDict
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Protocol

import sqlalchemy as sa
from slack_sdk.oauth.installation_store.async_installation_store import AsyncInstallationStore
from slack_sdk.oauth.installation_store.models.bot import Bot
from slack_sdk.oauth.token_rotation.async_rotator import AsyncTokenRotator
from slack_sdk.web.async_client import AsyncWebClient
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.chat import DeliveryError
from bot.storage.installations import SLACK_WORKSPACES as WORKSPACES

log = logging.getLogger(__name__)

# Clients kept per token, and workspaces' organisations remembered in memory.
MAX_CACHED = 1024
# A rotating token is refreshed when it has less than this left.
ROTATE_BEFORE_MINUTES = 120


class Workspaces(Protocol):
    async def client(self, team: str) -> AsyncWebClient:
        """The Web API client with this workspace's bot token; raises
        DeliveryError (permanent) when the app is not installed there."""
        ...


class OneWorkspace:
    """SLACK_BOT_TOKEN: the same client for every request and post."""

    def __init__(self, client: AsyncWebClient) -> None:
        self._client = client

    async def client(self, team: str) -> AsyncWebClient:
        return self._client


class _Bounded(OrderedDict[str, object]):
    """Least recently used entries dropped past MAX_CACHED."""

    def remember(self, key: str, value: object) -> None:
        self[key] = value
        self.move_to_end(key)
        while len(self) > MAX_CACHED:
            self.popitem(last=False)


class InstalledWorkspaces:
    """Tokens from the installations people made with "Add to Slack"."""

    def __init__(
        self,
        store: AsyncInstallationStore,
        engine: AsyncEngine,
        make_client: Callable[[str], AsyncWebClient],
        rotator: AsyncTokenRotator | None = None,
        now: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self.store = store
        self.engine = engine
        self.make_client = make_client
        self.rotator = rotator
        self.now = now
        self._clients = _Bounded()  # token → client
        self._orgs = _Bounded()  # team → (enterprise id, org-wide install)

    async def client(self, team: str) -> AsyncWebClient:
        bot = await self._bot(team)
        if bot is None or not bot.bot_token:
            raise DeliveryError(f"the app is not installed in workspace {team}", permanent=True)
        token = bot.bot_token
        known = self._clients.get(token)
        if isinstance(known, AsyncWebClient):
            return known
        made = self.make_client(token)
        self._clients.remember(token, made)
        return made

    async def _bot(self, team: str) -> Bot | None:
        enterprise, org_wide = await self._organisation(team)
        bot = await self.store.async_find_bot(
            enterprise_id=enterprise, team_id=team, is_enterprise_install=org_wide
        )
        if bot is None or self.rotator is None or not bot.bot_refresh_token:
            return bot
        refreshed = await self.rotator.perform_bot_token_rotation(
            bot=bot, minutes_before_expiration=ROTATE_BEFORE_MINUTES
        )
        if refreshed is None:
            return bot
        await self.store.async_save_bot(refreshed)
        log.info("Slack: refreshed the bot token of workspace %s", team)
        return refreshed

    async def _organisation(self, team: str) -> tuple[str | None, bool]:
        known = self._orgs.get(team)
        if isinstance(known, tuple):
            return known
        async with self.engine.connect() as connection:
            row = (
                await connection.execute(
                    sa.select(WORKSPACES.c.enterprise_id, WORKSPACES.c.enterprise_install).where(
                        WORKSPACES.c.team_id == team
                    )
                )
            ).first()
        found = (row[0], bool(row[1])) if row is not None else (None, False)
        self._orgs.remember(team, found)
        return found

    async def seen(self, team: str, enterprise: str | None, org_wide: bool) -> None:
        """A request from `team` (of `enterprise`): remember its organisation,
        which posts without a request need to find the token."""
        if self._orgs.get(team) == (enterprise, org_wide):
            return
        await self._record(team, enterprise, org_wide, installed=True)
        self._orgs.remember(team, (enterprise, org_wide))

    async def removed(self, team: str, enterprise: str | None) -> None:
        """The app was uninstalled (or its tokens revoked) in `team`."""
        await self.store.async_delete_all(enterprise_id=enterprise, team_id=team)
        await self._record(team, enterprise, False, installed=False)
        self._orgs.pop(team, None)
        self._clients.clear()  # a revoked token's client must not be reused

    async def _record(
        self, team: str, enterprise: str | None, org_wide: bool, *, installed: bool
    ) -> None:
        values = {
            "enterprise_id": enterprise,
            "enterprise_install": org_wide,
            "installed": installed,
            "updated_at": self.now(),
        }
        for _ in range(2):  # a second process may insert the same team between the two
            try:
                async with self.engine.begin() as connection:
                    updated = await connection.execute(
                        WORKSPACES.update().where(WORKSPACES.c.team_id == team).values(**values)
                    )
                    if updated.rowcount == 0:
                        await connection.execute(WORKSPACES.insert().values(team_id=team, **values))
                return
            except sa.exc.IntegrityError:
                continue
