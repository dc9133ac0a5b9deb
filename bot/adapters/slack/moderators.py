"""Who moderates on Slack, and members' display names, from the Web API with caches.

The quiz service decides which commands need a moderator; this only answers
"is this member one here?" for a channel's configured user group.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable, Iterable
from typing import Any

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

log = logging.getLogger(__name__)

ADMIN_TTL = 300.0  # admin status rarely changes
GROUP_TTL = 60.0  # group membership changes more often; keep it fresh
NAME_TTL = 3600.0
_GROUP_ID = re.compile(r"^S[A-Z0-9]{2,}$")


class _Cache:
    """A tiny time-to-live cache; the clock is injectable for tests."""

    def __init__(self, ttl: float, clock: Callable[[], float]) -> None:
        self.ttl = ttl
        self.clock = clock
        self._values: dict[str, tuple[float, Any]] = {}

    def get(self, key: str) -> Any | None:
        found = self._values.get(key)
        if found is None or self.clock() - found[0] > self.ttl:
            return None
        return found[1]

    def put(self, key: str, value: Any) -> None:
        self._values[key] = (self.clock(), value)


class SlackDirectory:
    """Users and user groups of the workspace, looked up on demand and cached."""

    def __init__(
        self,
        client: AsyncWebClient,
        moderators: Iterable[str] = (),
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.client = client
        self.moderators = set(moderators)
        self._users = _Cache(ADMIN_TTL, clock)
        self._names = _Cache(NAME_TTL, clock)
        self._groups = _Cache(GROUP_TTL, clock)
        self._handles = _Cache(GROUP_TTL, clock)

    async def is_moderator(self, user_id: str, group: str | None) -> bool:
        if user_id in self.moderators:
            return True
        user = await self._user(user_id)
        if user and (user.get("is_admin") or user.get("is_owner") or user.get("is_primary_owner")):
            return True
        if group:
            return user_id in await self._group_members(group)
        return False

    async def display_name(self, user_id: str) -> str | None:
        cached = self._names.get(user_id)
        if cached is not None:
            return str(cached)
        user = await self._user(user_id)
        if not user:
            return None
        profile = user.get("profile") or {}
        name = (
            profile.get("display_name")
            or profile.get("real_name")
            or user.get("real_name")
            or user.get("name")
        )
        if name:
            self._names.put(user_id, str(name))
        return str(name) if name else None

    async def _user(self, user_id: str) -> dict[str, Any] | None:
        cached = self._users.get(user_id)
        if cached is not None:
            return dict(cached)
        try:
            response = await self.client.users_info(user=user_id)
        except SlackApiError as error:
            log.warning("users.info for %s failed: %s", user_id, error.response.get("error"))
            return None
        user = response.get("user") or {}
        self._users.put(user_id, user)
        return dict(user)

    async def _group_members(self, group: str) -> set[str]:
        group_id = await self._group_id(group)
        if group_id is None:
            return set()
        cached = self._groups.get(group_id)
        if cached is not None:
            return set(cached)
        try:
            response = await self.client.usergroups_users_list(usergroup=group_id)
        except SlackApiError as error:
            log.warning(
                "usergroups.users.list %s failed: %s", group_id, error.response.get("error")
            )
            return set()
        members = set(response.get("users") or [])
        self._groups.put(group_id, members)
        return members

    async def _group_id(self, group: str) -> str | None:
        """A group id as given (S…), or the id of the group with that handle."""
        name = group.strip().lstrip("@")
        if _GROUP_ID.match(name):
            return name
        handles = self._handles.get("all")
        if handles is None:
            try:
                response = await self.client.usergroups_list()
            except SlackApiError as error:
                log.warning("usergroups.list failed: %s", error.response.get("error"))
                return None
            handles = {
                str(entry.get("handle", "")).lower(): str(entry["id"])
                for entry in response.get("usergroups") or []
                if entry.get("id")
            }
            self._handles.put("all", handles)
        found = handles.get(name.lower())
        return str(found) if found else None
