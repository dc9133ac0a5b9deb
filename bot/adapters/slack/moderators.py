"""Who moderates on Slack, and members' display names and languages, from the
Web API with caches.

The quiz service decides which commands need a moderator; this only answers
"is this member one here?" for a channel's configured user group.

A workspace's members are read in bulk (`users.list`, 200 a call) when the bot
first posts or first meets an unknown member there, so a question answered by
a thousand new members costs a few calls instead of a `users.info` each
before each acknowledgement. A member the bulk read did not reach (joined
since, or past its last page) is still looked up alone.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable
from typing import Any

from slack_sdk.errors import SlackApiError

from bot.adapters.slack.workspaces import Workspaces
from bot.chat import DeliveryError

log = logging.getLogger(__name__)

ADMIN_TTL = 300.0  # admin status rarely changes
GROUP_TTL = 60.0  # group membership changes more often; keep it fresh
NAME_TTL = 3600.0
LOCALE_TTL = 3600.0
CACHE_SIZE = 10_000  # entries per cache, the most recently used kept
# A member's language is looked up on the reply path: past this, the reply
# comes in the community's language instead of waiting.
LOCALE_WITHIN = 1.0
# The bulk read: users.list is Tier 2 (about 20 calls a minute), so a read
# stays under that and covers the members most likely to answer first.
ROSTER_PAGE = 200
ROSTER_PAGES = 15
ROSTER_RETRY = 60.0  # after a failed read, members are looked up alone this long
_GROUP_ID = re.compile(r"^S[A-Z0-9]{2,}$")


class _Cache:
    """A tiny time-to-live cache holding at most `size` entries (the most
    recently used); the clock is injectable for tests."""

    def __init__(self, ttl: float, clock: Callable[[], float], size: int = CACHE_SIZE) -> None:
        self.ttl = ttl
        self.clock = clock
        self.size = size
        self._values: OrderedDict[str, tuple[float, Any]] = OrderedDict()

    def get(self, key: str) -> Any | None:
        found = self._values.get(key)
        if found is None or self.clock() - found[0] > self.ttl:
            return None
        self._values.move_to_end(key)
        return found[1]

    def put(self, key: str, value: Any) -> None:
        self._values[key] = (self.clock(), value)
        self._values.move_to_end(key)
        while len(self._values) > self.size:
            self._values.popitem(last=False)

    def __len__(self) -> int:
        return len(self._values)


class SlackDirectory:
    """Users and user groups of each workspace, looked up on demand and cached
    (keyed by workspace: a group handle means something else in another)."""

    def __init__(
        self,
        workspaces: Workspaces,
        moderators: Iterable[str] = (),
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.workspaces = workspaces
        self.moderators = set(moderators)
        self._users = _Cache(ADMIN_TTL, clock)
        self._names = _Cache(NAME_TTL, clock)
        self._locales = _Cache(LOCALE_TTL, clock)
        self.locale_within = LOCALE_WITHIN
        self._groups = _Cache(GROUP_TTL, clock)
        self._handles = _Cache(GROUP_TTL, clock)
        self._clock = clock
        self._read_at: dict[str, float] = {}  # workspace -> when its roster was last read
        self._reading: dict[str, asyncio.Task[None]] = {}

    def warm(self, team: str) -> asyncio.Task[None] | None:
        """Start reading the workspace's roster unless it was read within the
        locale cache's lifetime; the read in flight, if any."""
        reading = self._reading.get(team)
        if reading is not None:
            return reading
        last = self._read_at.get(team)
        if last is not None and self._clock() - last < LOCALE_TTL:
            return None
        self._read_at[team] = self._clock()
        reading = asyncio.get_running_loop().create_task(self._read_roster(team))
        self._reading[team] = reading
        reading.add_done_callback(lambda _: self._reading.pop(team, None))
        return reading

    async def close(self) -> None:
        """Stop the roster reads in flight (at shutdown)."""
        reads = list(self._reading.values())
        for reading in reads:
            reading.cancel()
        await asyncio.gather(*reads, return_exceptions=True)

    async def _read_roster(self, team: str) -> None:
        cursor = ""
        try:
            client = await self.workspaces.client(team)
            for _ in range(ROSTER_PAGES):
                response = await client.users_list(
                    limit=ROSTER_PAGE, include_locale=True, cursor=cursor or None
                )
                for user in response.get("members") or []:
                    user_id = str(user.get("id") or "")
                    if not user_id or user.get("deleted"):
                        continue
                    self._users.put(f"{team}:{user_id}", user)
                    self._locales.put(f"{team}:{user_id}", str(user.get("locale") or ""))
                cursor = str((response.get("response_metadata") or {}).get("next_cursor") or "")
                if not cursor:
                    return
        except Exception as error:  # a failed read costs only the saving
            reason = error.response.get("error") if isinstance(error, SlackApiError) else error
            log.warning("users.list in %s failed: %s; members are looked up alone", team, reason)
            self._read_at[team] = self._clock() - LOCALE_TTL + ROSTER_RETRY

    async def is_moderator(self, team: str, user_id: str, group: str | None) -> bool:
        if user_id in self.moderators:
            return True
        user = await self._user(team, user_id)
        if user and (user.get("is_admin") or user.get("is_owner") or user.get("is_primary_owner")):
            return True
        if group:
            return user_id in await self._group_members(team, group)
        return False

    async def display_name(self, team: str, user_id: str) -> str | None:
        cached = self._names.get(f"{team}:{user_id}")
        if cached is not None:
            return str(cached)
        user = await self._user(team, user_id)
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
            self._names.put(f"{team}:{user_id}", str(name))
        return str(name) if name else None

    async def locale(self, team: str, user_id: str) -> str | None:
        """The member's Slack language (`fr-FR`), or None when Slack does not say
        in time or at all: the reply then speaks the community's language."""
        key = f"{team}:{user_id}"
        cached = self._locales.get(key)
        if cached is not None:
            return str(cached) or None
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.locale_within
        try:
            reading = self.warm(team)
            if reading is not None:
                await asyncio.wait_for(asyncio.shield(reading), deadline - loop.time())
                cached = self._locales.get(key)
                if cached is not None:
                    return str(cached) or None
            user = await asyncio.wait_for(self._user(team, user_id), deadline - loop.time())
        except TimeoutError:
            log.info("users.info for %s is slow; replying in the community's language", user_id)
            return None
        found = str((user or {}).get("locale") or "")
        if user is not None:
            self._locales.put(key, found)  # "" remembers that Slack gave none
        return found or None

    async def _user(self, team: str, user_id: str) -> dict[str, Any] | None:
        cached = self._users.get(f"{team}:{user_id}")
        if cached is not None:
            return dict(cached)
        try:
            client = await self.workspaces.client(team)
            response = await client.users_info(user=user_id, include_locale=True)
        except DeliveryError as error:
            log.warning("users.info for %s: %s", user_id, error)
            return None
        except SlackApiError as error:
            log.warning("users.info for %s failed: %s", user_id, error.response.get("error"))
            return None
        user = response.get("user") or {}
        self._users.put(f"{team}:{user_id}", user)
        return dict(user)

    async def _group_members(self, team: str, group: str) -> set[str]:
        group_id = await self._group_id(team, group)
        if group_id is None:
            return set()
        cached = self._groups.get(f"{team}:{group_id}")
        if cached is not None:
            return set(cached)
        try:
            client = await self.workspaces.client(team)
            response = await client.usergroups_users_list(usergroup=group_id)
        except DeliveryError:
            return set()
        except SlackApiError as error:
            log.warning(
                "usergroups.users.list %s failed: %s", group_id, error.response.get("error")
            )
            return set()
        members = set(response.get("users") or [])
        self._groups.put(f"{team}:{group_id}", members)
        return members

    async def _group_id(self, team: str, group: str) -> str | None:
        """A group id as given (S…), or the id of the group with that handle."""
        name = group.strip().lstrip("@")
        if _GROUP_ID.match(name):
            return name
        handles = self._handles.get(team)
        if handles is None:
            try:
                client = await self.workspaces.client(team)
                response = await client.usergroups_list()
            except DeliveryError:
                return None
            except SlackApiError as error:
                log.warning("usergroups.list failed: %s", error.response.get("error"))
                return None
            handles = {
                str(entry.get("handle", "")).lower(): str(entry["id"])
                for entry in response.get("usergroups") or []
                if entry.get("id")
            }
            self._handles.put(team, handles)
        found = handles.get(name.lower())
        return str(found) if found else None
