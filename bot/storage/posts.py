"""Posted questions: their deadlines, delivery tries, closing and revealing.

Closing a post happens in one place: `start_close` claims it and
`finish_close` counts its answers (bot/storage/closing.py)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import Row, bindparam, delete, or_, select, update
from sqlalchemy.orm import Session

from bot.domain.records import PostInfo, RevealClaim
from bot.storage import closing
from bot.storage.base import PUBLISHED_OR_GIVEN_UP, UNPUBLISHED, Store, post_info, rowcount
from bot.storage.db_thread import read_in_one_hop, write_in_one_hop
from bot.storage.liveness import owner_gone
from bot.storage.models import Channel, Post, Quiz
from bot.storage.process import PROCESS

# Built once: every close and every post runs these (a statement built anew
# costs as much CPU as running it).
_PUBLISHED = (
    update(Post)
    .where(Post.id == bindparam("post"))
    .values(
        message_id=bindparam("message"),
        posted_at=bindparam("posted"),
        closes_at=bindparam("closes"),
        publish_retry_at=None,
    )
)
_MARK_REVEALED = (
    update(Post)
    .where(Post.id == bindparam("post"), Post.revealed_at.is_(None))
    .values(revealed_at=bindparam("now"))
)


# A post with its channel and quiz, as the answer path and the close read it
# (Core columns: loading ORM objects cost more than the query).
_POST = (
    select(
        Post.id,
        Post.channel_id,
        Post.quiz_id,
        Post.kind,
        Post.sequence,
        Post.question_id,
        Post.option_order,
        Post.correct_slot,
        Post.seconds,
        Post.posted_at,
        Post.closes_at,
        Post.closed_at,
        Post.message_id,
        Post.publish_attempts,
        Post.publish_by,
        Post.review_share,
        Post.review_of,
        Channel.platform,
        Channel.community,
        Channel.channel,
        Channel.mode,
        Channel.timezone,
        Quiz.expected_players,
        Quiz.teams,
        Quiz.question_ids,
    )
    .join(Channel, Channel.id == Post.channel_id)
    .outerjoin(Quiz, Quiz.id == Post.quiz_id)
    .where(Post.id == bindparam("post"))
)


def _post_from_row(row: Row[Any]) -> PostInfo:
    """A `_POST` row: it carries the post's and the channel's columns."""
    total = None if row.question_ids is None else len(row.question_ids)
    return post_info(row, row, row.expected_players, row.teams, total)


def _reveal_free(claimed_before: datetime) -> Any:
    return or_(Post.reveal_claimed_at.is_(None), Post.reveal_claimed_at < claimed_before)


class PostStore(Store):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # The closes being finished here, one at a time per community.
        self._finishing: dict[tuple[str, str], asyncio.Lock] = {}

    async def post(self, post_id: int) -> PostInfo | None:
        rows = await self._read_rows(_POST, {"post": post_id})
        return _post_from_row(rows[0]) if rows else None

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

    # The timer loop's reads below are one hand-off each (`_read_rows`): it
    # makes them on every tick, and a fan-out wakes it with every post.

    async def next_deadline(
        self, handover: timedelta, in_hand: tuple[datetime, datetime] | None = None
    ) -> datetime | None:
        """When the timer loop next has a post to close: this process's own at
        their deadline. With a `handover`, another process's posts are left out:
        their makers close them, and the idle ticks find those left late. With
        none (one process on the database), every post counts. Posts due within
        `in_hand` (after its start, up to its end) are left out too: the tick
        that just ran is closing them."""
        query = (
            select(Post.closes_at)
            .where(Post.closed_at.is_(None), PUBLISHED_OR_GIVEN_UP)
            .order_by(Post.closes_at)
            .limit(1)
        )
        if handover:
            query = query.where(Post.owner == PROCESS)
        if in_hand is not None:
            start, end = in_hand
            query = query.where(or_(Post.closes_at <= start, Post.closes_at > end))
        rows = await self._read_rows(query)
        return rows[0][0] if rows else None

    async def due_posts(self, now: datetime, handover: timedelta) -> list[tuple[int, int | None]]:
        """(post, quiz) of open posts past their deadline (a post still being
        delivered has no deadline yet); another process's post only once it is
        `handover` late, so that its maker closes it unless it died."""
        rows = await self._read_rows(
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
        rows = await self._read_rows(
            select(Post.publish_retry_at)
            .join(Channel, Channel.id == Post.channel_id)
            .where(UNPUBLISHED, Channel.platform.in_(platforms))
            .order_by(Post.publish_retry_at)
            .limit(1)
        )
        return rows[0][0] if rows else None

    async def due_publishes(
        self, now: datetime, platforms: Sequence[str]
    ) -> list[tuple[int, int | None]]:
        """(post, quiz) of posts not yet delivered whose next try (or whose
        sender's lease) is due."""
        rows = await self._read_rows(
            select(Post.id, Post.quiz_id)
            .join(Channel, Channel.id == Post.channel_id)
            .where(UNPUBLISHED, self._sendable(now), Channel.platform.in_(platforms))
            .order_by(Post.publish_retry_at)
        )
        return [(post_id, quiz_id) for post_id, quiz_id in rows]

    def _sendable(self, now: datetime) -> Any:
        """A post not yet delivered may be tried now: its next try is due (or
        its sender's lease ran out), or its sender's process is gone."""
        return or_(Post.publish_retry_at <= now, owner_gone(Post.owner, self._dialect))

    async def claim_publish(self, post_id: int, now: datetime, lease: datetime) -> int | None:
        """Take a due post for one delivery try; its attempt count, or None if
        someone else holds it, it was delivered, or it was given up. The taker
        owns the post from then on (it closes what it sent)."""
        async with self._sessions.begin() as session:
            result = await session.execute(
                update(Post)
                .where(Post.id == post_id, UNPUBLISHED, self._sendable(now))
                .values(publish_retry_at=lease, owner=PROCESS)
                .returning(Post.publish_attempts)
            )
            attempts = result.scalar_one_or_none()
            return None if attempts is None else int(attempts)

    async def published(
        self, post_id: int, message_id: str, posted_at: datetime, closes_at: datetime
    ) -> None:
        """Record the delivered message; the post's clock starts now (one
        write: every post of a fan-out does this)."""
        await self._write_one(
            _PUBLISHED,
            {"post": post_id, "message": message_id, "posted": posted_at, "closes": closes_at},
        )

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
        """Close the post and count its answers; true only for the one caller
        that closed it."""
        if not await self.start_close(post_id, now):
            return False
        await self.finish_close(post_id)
        return True

    async def start_close(self, post_id: int, now: datetime, *, reveal: bool = False) -> bool:
        """Mark the post closed (one short transaction); true only for the one
        caller that closed it, who then calls `finish_close`. With `reveal`
        the same transaction claims its reveal for that caller."""
        return await write_in_one_hop(
            self._sessions, lambda session: closing.claim(session, post_id, now, reveal=reveal)
        )

    async def finish_close(self, post_id: int) -> None:
        """Add a closed post's answers to the read models, a slice at a time,
        each slice one hand-off to SQLite's write thread (bot/storage/closing.py).
        Safe to call from any number of processes, and again after a crash.

        A community's closes are finished one at a time in this process, each
        after the community's earlier ones: a fan-out closing yesterday's
        question in a thousand channels of one server would otherwise have
        every closer racing to finish the same earliest post."""
        found = await self._closing(post_id)
        if found is None:
            return
        community = (found.platform, found.community)
        lock = self._finishing.setdefault(community, asyncio.Lock())
        waited = lock.locked()
        try:
            async with lock:
                # What was read above still holds unless another close of the
                # community ran meanwhile (a stale step would only cost a wasted read).
                current: closing.Closing | None = found
                if waited:
                    current = await self._closing(post_id)
                while current is not None:
                    earlier = await self._earlier(current)
                    await self._finish_one(earlier if earlier is not None else current)
                    if earlier is None:
                        return  # `_finish_one` finished it
                    current = await self._closing(post_id)
        finally:
            if not lock.locked() and self._finishing.get(community) is lock:
                del self._finishing[community]

    async def _closing(self, post_id: int) -> closing.Closing | None:
        return await read_in_one_hop(self._reader, lambda c: closing.state(c, post_id))

    async def _earlier(self, current: closing.Closing) -> closing.Closing | None:
        """The unfinished post of the community closed before `current`, to
        finish first (only a post not yet analysed needs it)."""
        if current.step != 0:
            return None
        return await read_in_one_hop(
            self._reader, lambda c: closing.earlier_in_community(c, current)
        )

    async def _finish_one(self, current: closing.Closing) -> None:
        counts = None
        if current.step == 0:
            # Read outside the write lock; added with the first slice.
            counts = await read_in_one_hop(
                self._reader, lambda c: closing.post_analysis(c, current)
            )

        def next_slice(session: Session) -> bool:
            if current.step == 0:
                closing.add_analysis(session, current, counts)
            return closing.score_slice(session, current.post_id)

        while not await write_in_one_hop(self._sessions, next_slice, preemptible=True):
            current = replace(current, step=1)

    async def unfinished_closes(self, closed_before: datetime) -> list[int]:
        """Closed posts whose answers a crash left half counted (or that
        another process is still counting), closed before `closed_before`."""
        return await read_in_one_hop(self._reader, lambda c: closing.unfinished(c, closed_before))

    async def unrevealed_posts(
        self, closed_since: datetime, claimed_before: datetime, others_closed_before: datetime
    ) -> list[int]:
        """Posts closed since `closed_since` whose message does not show the answer
        yet, and that nobody is revealing (no claim, or one older than `claimed_before`);
        another process's only if closed before `others_closed_before` (its
        closer reveals it at once unless it died)."""
        rows = await self._read_rows(
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
        return [post_id for (post_id,) in rows]

    async def claim_reveal(
        self, post_id: int, now: datetime, claimed_before: datetime
    ) -> RevealClaim | None:
        """Become the one caller that edits the post's message to show the answer;
        None if it is revealed or someone else holds the reveal."""

        def claim(session: Session) -> RevealClaim | None:
            # Locked first, so what an earlier claim left is read by its taker only.
            earlier = session.execute(
                select(Post.reveal_claimed_at).where(Post.id == post_id).with_for_update()
            ).scalar_one_or_none()
            result = session.execute(
                update(Post)
                .where(Post.id == post_id, Post.revealed_at.is_(None), _reveal_free(claimed_before))
                .values(reveal_claimed_at=now)
            )
            return RevealClaim(again=earlier is not None) if rowcount(result) else None

        # One hand-off each: every channel of a fan-out reveals yesterday's question.
        return await write_in_one_hop(self._sessions, claim)

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
        await self._write_one(_MARK_REVEALED, {"post": post_id, "now": now})
