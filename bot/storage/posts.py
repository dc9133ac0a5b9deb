"""Posted questions: their deadlines, delivery tries, closing and revealing.

Closing a post happens in one place, `claim_close`."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import delete, or_, select, update

from bot.domain.records import PostInfo, RevealClaim
from bot.domain.rules import zone_or_utc
from bot.storage import item_analysis, read_models
from bot.storage.base import PUBLISHED_OR_GIVEN_UP, UNPUBLISHED, Store, post_info, rowcount
from bot.storage.db_thread import write_in_one_hop
from bot.storage.models import Channel, Post, Quiz
from bot.storage.process import PROCESS


def _reveal_free(claimed_before: datetime) -> Any:
    return or_(Post.reveal_claimed_at.is_(None), Post.reveal_claimed_at < claimed_before)


class PostStore(Store):
    async def post(self, post_id: int) -> PostInfo | None:
        async with self._reads() as session:
            row = (
                await session.execute(
                    select(Post, Channel, Quiz.expected_players, Quiz.teams)
                    .join(Channel, Channel.id == Post.channel_id)
                    .outerjoin(Quiz, Quiz.id == Post.quiz_id)
                    .where(Post.id == post_id)
                )
            ).one_or_none()
            return post_info(row[0], row[1], row[2], row[3]) if row else None

    async def open_posts(self, quiz_id: int) -> list[int]:
        async with self._reads() as session:
            rows = await session.execute(
                select(Post.id).where(Post.quiz_id == quiz_id, Post.closed_at.is_(None))
            )
            return list(rows.scalars())

    async def open_post_in_channel(self, channel_id: int) -> int | None:
        async with self._reads() as session:
            rows = await session.execute(
                select(Post.id)
                .where(Post.channel_id == channel_id, Post.closed_at.is_(None), Post.kind == "live")
                .order_by(Post.id.desc())
                .limit(1)
            )
            return rows.scalar_one_or_none()

    async def open_daily_posts(self, channel_id: int, before: int | None = None) -> list[int]:
        """The channel's open daily questions (older than post `before`, if given)."""
        query = select(Post.id).where(
            Post.channel_id == channel_id, Post.kind == "daily", Post.closed_at.is_(None)
        )
        if before is not None:
            query = query.where(Post.id < before)
        async with self._reads() as session:
            return list((await session.execute(query)).scalars())

    async def next_deadline(self, handover: timedelta) -> datetime | None:
        """When the timer loop next has a post to close: this process's own at
        their deadline. With a `handover`, another process's posts are left out:
        their makers close them, and the idle ticks find those left late. With
        none (one process on the database), every post counts."""
        query = (
            select(Post.closes_at)
            .where(Post.closed_at.is_(None), PUBLISHED_OR_GIVEN_UP)
            .order_by(Post.closes_at)
            .limit(1)
        )
        if handover:
            query = query.where(Post.owner == PROCESS)
        async with self._reads() as session:
            return (await session.execute(query)).scalar_one_or_none()

    async def due_posts(self, now: datetime, handover: timedelta) -> list[tuple[int, int | None]]:
        """(post, quiz) of open posts past their deadline (a post still being
        delivered has no deadline yet); another process's post only once it is
        `handover` late, so that its maker closes it unless it died."""
        async with self._reads() as session:
            rows = await session.execute(
                select(Post.id, Post.quiz_id)
                .where(
                    Post.closed_at.is_(None),
                    Post.closes_at <= now,
                    PUBLISHED_OR_GIVEN_UP,
                    or_(Post.owner == PROCESS, Post.closes_at <= now - handover),
                )
                .order_by(Post.closes_at)
            )
            return [(post_id, quiz_id) for post_id, quiz_id in rows]

    async def next_publish_retry(self, platforms: Sequence[str]) -> datetime | None:
        async with self._reads() as session:
            found = await session.execute(
                select(Post.publish_retry_at)
                .join(Channel, Channel.id == Post.channel_id)
                .where(UNPUBLISHED, Channel.platform.in_(platforms))
                .order_by(Post.publish_retry_at)
                .limit(1)
            )
            return found.scalar_one_or_none()

    async def due_publishes(
        self, now: datetime, platforms: Sequence[str]
    ) -> list[tuple[int, int | None]]:
        """(post, quiz) of posts not yet delivered whose next try (or whose
        sender's lease) is due."""
        async with self._reads() as session:
            rows = await session.execute(
                select(Post.id, Post.quiz_id)
                .join(Channel, Channel.id == Post.channel_id)
                .where(UNPUBLISHED, Post.publish_retry_at <= now, Channel.platform.in_(platforms))
                .order_by(Post.publish_retry_at)
            )
            return [(post_id, quiz_id) for post_id, quiz_id in rows]

    async def claim_publish(self, post_id: int, now: datetime, lease: datetime) -> int | None:
        """Take a due post for one delivery try; its attempt count, or None if
        someone else holds it, it was delivered, or it was given up."""
        async with self._sessions.begin() as session:
            result = await session.execute(
                update(Post)
                .where(Post.id == post_id, UNPUBLISHED, Post.publish_retry_at <= now)
                .values(publish_retry_at=lease)
                .returning(Post.publish_attempts)
            )
            attempts = result.scalar_one_or_none()
            return None if attempts is None else int(attempts)

    async def published(
        self, post_id: int, message_id: str, posted_at: datetime, closes_at: datetime
    ) -> None:
        """Record the delivered message; the post's clock starts now (one
        hand-off to SQLite's write thread: every post of a fan-out does this)."""
        record = (
            update(Post)
            .where(Post.id == post_id)
            .values(
                message_id=message_id,
                posted_at=posted_at,
                closes_at=closes_at,
                publish_retry_at=None,
            )
        )
        await write_in_one_hop(self._sessions, lambda session: session.execute(record))

    async def publish_failed(self, post_id: int, retry_at: datetime) -> None:
        async with self._sessions.begin() as session:
            await session.execute(
                update(Post)
                .where(Post.id == post_id, Post.message_id.is_(None))
                .values(
                    publish_attempts=Post.publish_attempts + 1,
                    publish_retry_at=retry_at,
                )
            )

    async def publish_given_up(self, post_id: int) -> None:
        """Stop trying to deliver the post (its owner then discards or closes it)."""
        async with self._sessions.begin() as session:
            await session.execute(
                update(Post).where(Post.id == post_id).values(publish_retry_at=None)
            )

    async def discard_post(self, post_id: int) -> None:
        """Remove a post that never reached the channel, so it counts for nobody."""
        async with self._sessions.begin() as session:
            await session.execute(delete(Post).where(Post.id == post_id))

    async def close_early(self, post_id: int, now: datetime) -> None:
        """Bring an open post's deadline forward to now."""
        async with self._sessions.begin() as session:
            await session.execute(
                update(Post)
                .where(Post.id == post_id, Post.closed_at.is_(None), Post.closes_at > now)
                .values(closes_at=now)
            )

    async def claim_close(self, post_id: int, now: datetime) -> bool:
        """Mark the post closed; true only for the one caller that closed it."""
        async with self._sessions.begin() as session:
            closed = await session.execute(
                update(Post)
                .where(Post.id == post_id, Post.closed_at.is_(None))
                .values(closed_at=now)
                .returning(Post.channel_id, Post.kind, Post.question_id, Post.posted_at)
            )
            row = closed.first()
            if row is None:
                return False
            # Its answers count, and a daily question's streaks end, in the
            # same transaction as the close: once, by the one closer.
            channel = await session.get_one(Channel, row.channel_id)
            closing = read_models.ClosedPost(
                id=post_id,
                channel_id=row.channel_id,
                platform=channel.platform,
                community=channel.community,
                question_id=row.question_id,
                zone=zone_or_utc(channel.timezone),
                posted_at=row.posted_at,
                closed_at=now,
            )
            # The analysis ranks answerers by their record before this post,
            # so it goes before the post reaches community_scores.
            await item_analysis.count_closed_post(
                session, post_id, channel.platform, channel.community, row.question_id
            )
            await read_models.score_closed_post(session, closing)
            if row.kind == "daily":
                await read_models.close_daily(session, post_id, row.channel_id)
            return True

    async def unrevealed_posts(
        self, closed_since: datetime, claimed_before: datetime, others_closed_before: datetime
    ) -> list[int]:
        """Posts closed since `closed_since` whose message does not show the answer
        yet, and that nobody is revealing (no claim, or one older than `claimed_before`);
        another process's only if closed before `others_closed_before` (its
        closer reveals it at once unless it died)."""
        async with self._reads() as session:
            rows = await session.execute(
                select(Post.id)
                .where(
                    Post.revealed_at.is_(None),
                    Post.closed_at >= closed_since,
                    Post.message_id.is_not(None),
                    _reveal_free(claimed_before),
                    or_(Post.owner == PROCESS, Post.closed_at < others_closed_before),
                )
                .order_by(Post.closed_at)
            )
            return list(rows.scalars())

    async def claim_reveal(
        self, post_id: int, now: datetime, claimed_before: datetime
    ) -> RevealClaim | None:
        """Become the one caller that edits the post's message to show the answer;
        None if it is revealed or someone else holds the reveal."""
        async with self._sessions.begin() as session:
            # Locked first, so what an earlier claim left is read by its taker only.
            earlier = (
                await session.execute(
                    select(Post.reveal_claimed_at).where(Post.id == post_id).with_for_update()
                )
            ).scalar_one_or_none()
            result = await session.execute(
                update(Post)
                .where(Post.id == post_id, Post.revealed_at.is_(None), _reveal_free(claimed_before))
                .values(reveal_claimed_at=now)
            )
            return RevealClaim(again=earlier is not None) if rowcount(result) else None

    async def release_reveal(self, post_id: int, free_since: datetime) -> None:
        """The reveal failed for now: let the next timer tick try again. The claim
        is kept, dated `free_since` (older than any live lease), so the next
        try knows an edit may have gone out."""
        async with self._sessions.begin() as session:
            await session.execute(
                update(Post)
                .where(Post.id == post_id, Post.revealed_at.is_(None))
                .values(reveal_claimed_at=free_since)
            )

    async def mark_revealed(self, post_id: int, now: datetime) -> None:
        async with self._sessions.begin() as session:
            await session.execute(
                update(Post)
                .where(Post.id == post_id, Post.revealed_at.is_(None))
                .values(revealed_at=now)
            )
