"""Member submissions, their review queue, and the community banks they build.

One table: a submission is a draft (a form that failed validation, kept so the
member can fix it), pending, rejected, or accepted, which makes it a question
of its community's bank until a moderator removes it. Every query names the
platform and community, so one community never sees another's rows."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import delete, func, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from bot.storage.base import Store, rowcount
from bot.storage.models import Submission

DRAFT = "draft"
PENDING = "pending"
ACCEPTED = "accepted"
REJECTED = "rejected"
REMOVED = "removed"
# Question ids of community questions: never a bank file's (the bank schema
# refuses this prefix in files; bot.quiz.bank.RESERVED_PREFIX).
QUESTION_PREFIX = "community-"


@dataclass(frozen=True)
class SubmissionInfo:
    id: int
    platform: str
    community: str
    channel: str
    author_id: str
    author_name: str | None
    status: str
    question: dict[str, Any]
    reason: str | None
    created_at: datetime

    @property
    def question_id(self) -> str:
        return f"{QUESTION_PREFIX}{self.id}"


def submission_id(question_id: str) -> int | None:
    """The row behind a community question id, or None for any other id."""
    number = question_id.removeprefix(QUESTION_PREFIX)
    if number == question_id or not number.isdigit() or len(number) > 18:
        return None
    return int(number)


def _info(row: Submission) -> SubmissionInfo:
    return SubmissionInfo(
        row.id,
        row.platform,
        row.community,
        row.channel,
        row.author_id,
        row.author_name,
        row.status,
        dict(row.question),
        row.reason,
        row.created_at,
    )


class SubmissionStore(Store):
    async def submit(
        self,
        *,
        platform: str,
        community: str,
        channel: str,
        author_id: str,
        author_name: str | None,
        question: dict[str, Any],
        now: datetime,
        limit: int,
    ) -> SubmissionInfo | None:
        """Queue a valid question; None when the author already has `limit` pending.
        The author's drafts in this community go (the question they held is in)."""
        async with self._sessions.begin() as session:
            if self._dialect == "postgresql":
                # Two submits by one member at once must not both see room for
                # one more: they take turns on a lock named by the author (held
                # to the commit). SQLite's writes take turns anyway.
                author = f"submissions {platform} {community} {author_id}"
                await session.execute(select(func.pg_advisory_xact_lock(func.hashtext(author))))
            mine = _authored(platform, community, author_id)
            pending = (
                await session.execute(
                    select(func.count()).where(*mine, Submission.status == PENDING)
                )
            ).scalar_one()
            if pending >= limit:
                return None
            await session.execute(delete(Submission).where(*mine, Submission.status == DRAFT))
            row = Submission(
                platform=platform,
                community=community,
                channel=channel,
                author_id=author_id,
                author_name=author_name,
                status=PENDING,
                question=question,
                created_at=now,
            )
            session.add(row)
            await session.flush()
            return _info(row)

    async def pending_count(self, platform: str, community: str, author_id: str) -> int:
        async with self._reads() as session:
            count = await session.execute(
                select(func.count()).where(
                    *_authored(platform, community, author_id), Submission.status == PENDING
                )
            )
            return int(count.scalar_one())

    async def save_draft(
        self,
        *,
        platform: str,
        community: str,
        channel: str,
        author_id: str,
        values: dict[str, str],
        now: datetime,
    ) -> int:
        """Keep what the member typed (one draft per member and community)."""
        async with self._sessions.begin() as session:
            await session.execute(
                delete(Submission).where(
                    *_authored(platform, community, author_id), Submission.status == DRAFT
                )
            )
            row = Submission(
                platform=platform,
                community=community,
                channel=channel,
                author_id=author_id,
                status=DRAFT,
                question=values,
                created_at=now,
            )
            session.add(row)
            await session.flush()
            return row.id

    async def draft(
        self, draft_id: int, platform: str, community: str, author_id: str
    ) -> dict[str, str] | None:
        """A draft's values, only for its own author in its own community."""
        async with self._reads() as session:
            row = await session.get(Submission, draft_id)
            if (
                row is None
                or row.status != DRAFT
                or (row.platform, row.community, row.author_id) != (platform, community, author_id)
            ):
                return None
            return {str(key): str(value) for key, value in row.question.items()}

    async def next_pending(
        self, platform: str, community: str, after: int | None = None
    ) -> SubmissionInfo | None:
        """The oldest pending submission after `after` (a skipped one), wrapping
        round to the oldest of all when none comes after it."""
        async with self._reads() as session:
            queue = (
                select(Submission)
                .where(
                    Submission.platform == platform,
                    Submission.community == community,
                    Submission.status == PENDING,
                )
                .order_by(Submission.id)
                .limit(1)
            )
            row = None
            if after is not None:
                row = (await session.execute(queue.where(Submission.id > after))).scalar()
            if row is None:
                row = (await session.execute(queue)).scalar()
            return _info(row) if row is not None else None

    async def pending_total(self, platform: str, community: str) -> int:
        async with self._reads() as session:
            count = await session.execute(
                select(func.count()).where(
                    Submission.platform == platform,
                    Submission.community == community,
                    Submission.status == PENDING,
                )
            )
            return int(count.scalar_one())

    async def submission(self, platform: str, community: str, number: int) -> SubmissionInfo | None:
        async with self._reads() as session:
            row = await session.get(Submission, number)
            if row is None or (row.platform, row.community) != (platform, community):
                return None
            return _info(row)

    async def review(
        self,
        platform: str,
        community: str,
        number: int,
        *,
        accept: bool,
        reviewer: str,
        reason: str | None,
        now: datetime,
    ) -> SubmissionInfo | None:
        """Accept or reject a pending submission; None when it is not pending (any
        more) in this community, such as when another moderator was quicker."""
        async with self._sessions.begin() as session:
            result = await session.execute(
                update(Submission)
                .where(
                    Submission.id == number,
                    Submission.platform == platform,
                    Submission.community == community,
                    Submission.status == PENDING,
                )
                .values(
                    status=ACCEPTED if accept else REJECTED,
                    reviewed_by=reviewer,
                    reviewed_at=now,
                    reason=reason,
                )
            )
            if rowcount(result) != 1:
                return None
            return _info(await session.get_one(Submission, number))

    async def remove(
        self, platform: str, community: str, number: int, *, by: str, now: datetime
    ) -> SubmissionInfo | None:
        """Take an accepted question out of the community bank. The row stays, so
        posts and stats that name it still find its text."""
        async with self._sessions.begin() as session:
            result = await session.execute(
                update(Submission)
                .where(
                    Submission.id == number,
                    Submission.platform == platform,
                    Submission.community == community,
                    Submission.status == ACCEPTED,
                )
                .values(status=REMOVED, reviewed_by=by, reviewed_at=now)
            )
            if rowcount(result) != 1:
                return None
            return _info(await session.get_one(Submission, number))

    async def forget_author(self, platform: str, user_id: str) -> None:
        """forget-me: the member's drafts, pending and rejected submissions go;
        the questions a moderator accepted stay in their community's bank,
        credited to nobody."""
        async with self._sessions.begin() as session:
            await forget_author(session, platform, user_id)

    async def community_bank(self, platform: str, community: str) -> list[SubmissionInfo]:
        """The community's accepted questions, oldest first."""
        async with self._reads() as session:
            rows = await session.execute(
                select(Submission)
                .where(
                    Submission.platform == platform,
                    Submission.community == community,
                    Submission.status == ACCEPTED,
                )
                .order_by(Submission.id)
            )
            return [_info(row) for row in rows.scalars()]

    async def questions(self, numbers: list[int]) -> list[SubmissionInfo]:
        """Accepted or removed questions by row id (posts made before a removal)."""
        if not numbers:
            return []
        async with self._reads() as session:
            rows = await session.execute(
                select(Submission).where(
                    Submission.id.in_(numbers), Submission.status.in_((ACCEPTED, REMOVED))
                )
            )
            return [_info(row) for row in rows.scalars()]

    async def all_community_banks(self) -> list[SubmissionInfo]:
        """Every community's accepted questions (for `quizmaster questions`)."""
        async with self._reads() as session:
            rows = await session.execute(
                select(Submission)
                .where(Submission.status == ACCEPTED)
                .order_by(Submission.platform, Submission.community, Submission.id)
            )
            return [_info(row) for row in rows.scalars()]


def _authored(platform: str, community: str, author_id: str) -> tuple[Any, ...]:
    """One member's rows in one community."""
    return (
        Submission.platform == platform,
        Submission.community == community,
        Submission.author_id == author_id,
    )


async def forget_author(session: AsyncSession, platform: str, user_id: str) -> None:
    """In `session`: the member's unaccepted submissions go; accepted ones stay,
    credited to nobody; their name leaves the ones they reviewed."""
    mine = (Submission.platform == platform, Submission.author_id == user_id)
    await session.execute(
        delete(Submission).where(*mine, Submission.status.in_([DRAFT, PENDING, REJECTED]))
    )
    await session.execute(update(Submission).where(*mine).values(author_id="", author_name=None))
    await session.execute(
        update(Submission)
        .where(Submission.platform == platform, Submission.reviewed_by == user_id)
        .values(reviewed_by="")
    )
