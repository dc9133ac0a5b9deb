"""A channel row per chat channel, created on first use, and its settings."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import select, update

from bot.chat import Target
from bot.domain.records import ChannelInfo
from bot.storage.base import Store, channel_info, rowcount
from bot.storage.models import Channel, Community


class ChannelStore(Store):
    async def channel(self, target: Target, now: datetime) -> ChannelInfo:
        """The channel's row, created on first use."""
        async with self._sessions.begin() as session:
            await session.execute(
                self._insert(Channel)
                .values(
                    platform=target.platform,
                    community=target.community,
                    channel=target.channel,
                    created_at=now,
                )
                .on_conflict_do_nothing(index_elements=["platform", "channel"])
            )
            row = (
                await session.execute(
                    select(Channel).where(
                        Channel.platform == target.platform, Channel.channel == target.channel
                    )
                )
            ).scalar_one()
            return channel_info(row)

    async def channel_target(self, channel_id: int) -> Target:
        async with self._reads() as session:
            row = await session.get_one(Channel, channel_id)
            return Target(row.platform, row.community, row.channel)

    async def set_channel_timezone(self, channel_id: int, zone: str) -> None:
        await self.update_channel(channel_id, timezone=zone)

    async def community_language(self, platform: str, community: str) -> str | None:
        """The community's language of channel posts, None where none was set."""
        async with self._reads() as session:
            row = await session.get(Community, (platform, community))
            return None if row is None else row.language

    async def set_community_language(self, platform: str, community: str, language: str) -> None:
        async with self._sessions.begin() as session:
            await session.execute(
                self._insert(Community)
                .values(platform=platform, community=community, language=language)
                .on_conflict_do_update(
                    index_elements=["platform", "community"], set_={"language": language}
                )
            )

    async def set_community_problem(
        self, platform: str, community: str, problem: str | None
    ) -> int:
        """Set (or clear) the delivery problem of every channel of a community:
        a community that removed the bot gets no timed posts until it is back."""
        async with self._sessions.begin() as session:
            result = await session.execute(
                update(Channel)
                .where(Channel.platform == platform, Channel.community == community)
                .values(delivery_problem=problem)
            )
            return rowcount(result)

    async def update_channel(
        self, channel_id: int, **values: str | bool | int | None
    ) -> ChannelInfo:
        """Change channel settings (any of the `channels` columns ChannelInfo shows)."""
        async with self._sessions.begin() as session:
            await session.execute(update(Channel).where(Channel.id == channel_id).values(**values))
            return channel_info(await session.get_one(Channel, channel_id))
