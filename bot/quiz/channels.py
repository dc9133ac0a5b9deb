"""Channel settings: the channel record (cached), `/quiz config`, remembering
that a platform refused our posts, and display names where mentions are off."""

from __future__ import annotations

import logging
from collections import OrderedDict
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta

from bot.chat import Command, DeliveryError, OutMessage, Target
from bot.clock import Clock
from bot.dialect import Dialect
from bot.domain.records import ChannelInfo
from bot.domain.rules import (
    MAX_DAILY_WINDOW_HOURS,
    MAX_GRACE_MINUTES,
    MIN_DAILY_WINDOW_HOURS,
    MIN_GRACE_MINUTES,
    as_int,
    in_range,
)
from bot.domain.schedule_rules import ScheduleError, parse_zone
from bot.i18n import DEFAULT, speaking, supported
from bot.quiz import texts
from bot.quiz.connections import Connections
from bot.quiz.delivery import within_deadline
from bot.quiz.surface.spec import CommandSpec, Kind, Option, Variant
from bot.storage.channels import ChannelStore

log = logging.getLogger(__name__)

# Whole-number channel settings: key → (name in errors, channel column, limits).
NUMBER_SETTINGS = {
    "daily-window": (
        "daily-window (hours)",
        "daily_window_hours",
        MIN_DAILY_WINDOW_HOURS,
        MAX_DAILY_WINDOW_HOURS,
    ),
    "grace": ("grace (minutes)", "grace_minutes", MIN_GRACE_MINUTES, MAX_GRACE_MINUTES),
}
# Channel records kept in memory, the most recently used; a channel read again
# after it was dropped costs one database round trip.
CHANNEL_CACHE_SIZE = 10_000
COMMUNITY_CACHE_SIZE = 10_000
# Another process may change a community's language (`config set` lands on one
# shard): a cached language is read again after this long.
LANGUAGE_TTL = timedelta(minutes=1)
CLEAR_WORDS = {"none", "off", "-", "clear"}
ON_OFF = {"on": True, "off": False, "yes": True, "no": False, "true": True, "false": False}


class ChannelCache:
    """Channel records by platform and channel, and by id; the most recently
    used `size` are kept, so a bot in many channels does not grow without end."""

    def __init__(self, size: int = CHANNEL_CACHE_SIZE) -> None:
        self.size = size
        self._channels: OrderedDict[tuple[str, str], ChannelInfo] = OrderedDict()
        self._keys: dict[int, tuple[str, str]] = {}

    def get(self, target: Target) -> ChannelInfo | None:
        key = (target.platform, target.channel)
        info = self._channels.get(key)
        if info is not None:
            self._channels.move_to_end(key)
        return info

    def by_id(self, channel_id: int) -> ChannelInfo | None:
        key = self._keys.get(channel_id)
        return None if key is None else self._channels.get(key)

    def remember(self, info: ChannelInfo) -> None:
        key = (info.target.platform, info.target.channel)
        self._channels[key] = info
        self._channels.move_to_end(key)
        self._keys[info.id] = key
        while len(self._channels) > self.size:
            _, dropped = self._channels.popitem(last=False)
            self._keys.pop(dropped.id, None)

    def forget_community(self, platform: str, community: str) -> None:
        for key, info in list(self._channels.items()):
            if info.target.platform == platform and info.target.community == community:
                del self._channels[key]
                self._keys.pop(info.id, None)

    def __len__(self) -> int:
        return len(self._channels)


class ChannelSettings:
    def __init__(self, store: ChannelStore, connections: Connections, clock: Clock) -> None:
        self.store = store
        self.connections = connections
        self.clock = clock
        self.cache = ChannelCache()
        # Community languages, the most recently used kept (like the channels).
        self._languages: OrderedDict[tuple[str, str], tuple[datetime, str]] = OrderedDict()

    async def channel(self, target: Target) -> ChannelInfo:
        """The channel's settings, created on first use (cached: this process
        is the only one that changes them)."""
        info = self.cache.get(target)
        if info is None:
            info = await self.store.channel(target, self.clock.now())
            self.cache.remember(info)
        return info

    async def language(self, target: Target) -> str:
        """The language of the community's channel posts (`config set language`)."""
        key = (target.platform, target.community)
        cached = self._languages.get(key)
        if cached is not None and self.clock.now() - cached[0] < LANGUAGE_TTL:
            self._languages.move_to_end(key)
            return cached[1]
        stored = await self.store.community_language(target.platform, target.community)
        found = supported(stored) or DEFAULT
        self._remember_language(key, found)
        return found

    def _remember_language(self, key: tuple[str, str], language: str) -> None:
        self._languages[key] = (self.clock.now(), language)
        self._languages.move_to_end(key)
        while len(self._languages) > COMMUNITY_CACHE_SIZE:
            self._languages.popitem(last=False)

    async def set_language(self, target: Target, value: str) -> str | None:
        """Set the community's language; None when the code is not one we speak."""
        code = supported(value)
        if code is None:
            return None
        await self.store.set_community_language(target.platform, target.community, code)
        self._remember_language((target.platform, target.community), code)
        return code

    async def target_of(self, channel_id: int) -> Target:
        info = self.cache.by_id(channel_id)
        if info is not None:
            return info.target
        return await self.store.channel_target(channel_id)

    async def configure(self, target: Target, key: str | None, value: str | None) -> OutMessage:
        """`config show` (no key) or `config set <key> <value>`."""
        channel = await self.channel(target)
        if key is None:
            return texts.settings.channel_settings(channel, await self.language(target))
        key = key.lower()
        if key not in SETTINGS and key not in SETTING_ALIASES:
            return texts.settings.unknown_setting(key)
        if value is None or not value.strip():
            return texts.settings.setting_needs_value(key)
        value = value.strip()
        if key == "language":
            code = await self.set_language(target, value)
            if code is None:
                return texts.settings.unknown_language(value)
            # The reply is in the new language where the member has none of their own.
            return texts.settings.setting_changed(key, channel, code)
        if key in ("moderator-role", "moderator-group"):
            cleared = value.lower() in CLEAR_WORDS
            role = None if cleared else value.lstrip("@")
            channel = await self.update_channel(channel, moderator_role=role)
        elif key == "mentions":
            switch = ON_OFF.get(value.lower())
            if switch is None:
                return texts.common.not_one_of("mentions", ("on", "off"), value)
            channel = await self.update_channel(channel, mentions=switch)
        elif key == "reading-time":
            switch = ON_OFF.get(value.lower())
            if switch is None:
                return texts.common.not_one_of("reading-time", ("on", "off"), value)
            channel = await self.update_channel(channel, reading_time=switch)
        elif key == "mode":
            if value.lower() not in MODES:
                return texts.common.not_one_of("mode", MODES, value)
            channel = await self.update_channel(channel, mode=value.lower())
        elif key == "daily-pick":
            if value.lower() not in DAILY_PICKS:
                return texts.common.not_one_of("daily-pick", DAILY_PICKS, value)
            channel = await self.update_channel(channel, daily_pick=value.lower())
        elif key == "timezone":
            if not _known_zone(value):
                return texts.settings.unknown_timezone(value)
            channel = await self.update_channel(channel, timezone=value)
        elif key in NUMBER_SETTINGS:
            label, column, low, high = NUMBER_SETTINGS[key]
            number = as_int(value, 0)
            if number is None:
                return texts.common.not_whole_number(label, value)
            if not in_range(number, low, high):
                return texts.common.out_of_range(label, number, low, high)
            channel = await self.update_channel(channel, **{column: number})
        return texts.settings.setting_changed(key, channel, await self.language(target))

    async def update_channel(
        self, channel: ChannelInfo, **values: str | bool | int | None
    ) -> ChannelInfo:
        updated = await self.store.update_channel(channel.id, **values)
        self.cache.remember(updated)
        return updated

    async def delivery_failed(self, target: Target, error: DeliveryError) -> None:
        """Remember why the platform refused a post here, so timed posts stop
        and moderators are told (see `texts.settings.channel_settings`)."""
        if not error.permanent:
            return
        channel = await self.channel(target)
        await self.update_channel(channel, delivery_problem=str(error)[:300])

    async def community_left(self, platform: str, community: str, why: str) -> int:
        """The platform says the bot was removed from a community: its channels
        get no timed posts (as after a refused post) until it is back."""
        changed = await self.store.set_community_problem(platform, community, why[:300])
        self.cache.forget_community(platform, community)
        return changed

    async def community_back(self, platform: str, community: str) -> int:
        changed = await self.store.set_community_problem(platform, community, None)
        self.cache.forget_community(platform, community)
        return changed

    async def announce(
        self,
        target: Target,
        what: str,
        build: Callable[[Dialect, dict[str, str] | None], OutMessage],
        users: Sequence[str] = (),
    ) -> None:
        """Post `build(dialect, names)` in the channel within the platform
        deadline; a refusal is logged and remembered for the channel (other
        errors are the caller's). `names` are the `users`' display names where
        mentions are off."""
        adapter = self.connections.get(target.platform)
        if adapter is None:
            return
        try:
            names = await self.names(target, list(users)) if users else None
            with speaking(await self.language(target)):  # a channel post: the community's
                message = build(adapter.dialect, names)
                await within_deadline(adapter.send(target, message))
        except DeliveryError as error:
            log.warning("cannot post %s in %s: %s", what, target, error)
            await self.delivery_failed(target, error)

    async def names(self, target: Target, user_ids: list[str]) -> dict[str, str] | None:
        """Display names for a channel post where mentions are off; None means mention."""
        channel = await self.channel(target)
        adapter = self.connections.get(target.platform)
        if channel.mentions or adapter is None or not user_ids:
            return None
        try:
            return await within_deadline(adapter.display_names(target, user_ids))
        except Exception:
            log.warning("could not look up display names in %s", target, exc_info=True)
            return {}


def _known_zone(name: str) -> bool:
    try:
        parse_zone(name)  # also refuses a name too long for a file name (OSError)
    except ScheduleError:
        return False
    return True


# The settings a channel has (their descriptions are in texts.settings).
SETTINGS = (
    "moderator-role",
    "mentions",
    "timezone",
    "daily-window",
    "grace",
    "mode",
    "reading-time",
    "daily-pick",
    "language",
)
MODES = ("compete", "study")
DAILY_PICKS = ("shuffle", "adaptive")  # the deck, or what the channel needs (daily_pick.py)
SETTING_ALIASES = {"moderator-group": "moderator-role"}


async def _config(channels: ChannelSettings, command: Command) -> OutMessage:
    args = command.args
    return await channels.configure(command.target, args.get("key"), args.get("value"))


SETTING = Option(
    "setting",
    Kind.CHOICE,
    arg="key",
    required=True,
    choices=SETTINGS,
    aliases=tuple(SETTING_ALIASES),
    open_text=True,  # an unknown name gets the list of settings from the handler
)
VALUE = Option("value", Kind.REST, required=True)
COMMANDS = (
    CommandSpec(
        "config",
        ChannelSettings,
        _config,
        (Variant(("config", "show")), Variant(("config", "set"), (SETTING, VALUE))),
        moderator=True,
        bare={},
    ),
)
