"""forget-me in one transaction: every row that names the member, in every
store, goes or is anonymised together (a crash half-way leaves nothing
half-forgotten), and a hash of the member is kept for a day so the dashboard
links issued to them before are refused."""

from __future__ import annotations

import hashlib
from datetime import datetime, timedelta

from sqlalchemy import delete, select, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.storage.answers import forget_answers
from bot.storage.cards import forget_cards
from bot.storage.models import Channel, ForgottenMember, QuestionReport, Quiz, Schedule
from bot.storage.sql import insert_for
from bot.storage.submissions import forget_author

# As long as any dashboard link lives (bot/web/tokens.py LIFETIME).
REMEMBERED_FOR = timedelta(hours=24)


def member_hash(platform: str, user_id: str) -> str:
    return hashlib.sha256(f"{platform}\x00{user_id}".encode()).hexdigest()


async def forget_member(
    sessions: async_sessionmaker[AsyncSession],
    dialect: str,
    platform: str,
    user_id: str,
    now: datetime,
) -> int:
    """Everything of the member on the platform, in one transaction; returns
    how many answers were deleted."""
    on_platform = select(Channel.id).where(Channel.platform == platform)
    remembered = (
        insert_for(dialect, ForgottenMember)
        .values(member_hash=member_hash(platform, user_id), forgotten_at=now)
        .on_conflict_do_update(index_elements=["member_hash"], set_={"forgotten_at": now})
    )
    async with sessions.begin() as session:
        forgotten = await forget_answers(session, platform, user_id)
        await forget_cards(session, platform, user_id)
        await forget_author(session, platform, user_id)
        await session.execute(
            delete(QuestionReport).where(
                QuestionReport.platform == platform, QuestionReport.user_id == user_id
            )
        )
        mine = (Quiz.started_by == user_id, Quiz.channel_id.in_(on_platform))
        await session.execute(update(Quiz).where(*mine).values(started_by=""))
        theirs = (Schedule.created_by == user_id, Schedule.channel_id.in_(on_platform))
        await session.execute(update(Schedule).where(*theirs).values(created_by=""))
        await session.execute(
            delete(ForgottenMember).where(ForgottenMember.forgotten_at < now - REMEMBERED_FOR)
        )
        await session.execute(remembered)
    return forgotten


async def forgotten_since(
    reads: async_sessionmaker[AsyncSession], platform: str, user_id: str, since: datetime
) -> bool:
    """True if the member used forget-me at or after `since`."""
    async with reads() as session:
        found = await session.execute(
            select(ForgottenMember.forgotten_at).where(
                ForgottenMember.member_hash == member_hash(platform, user_id),
                ForgottenMember.forgotten_at >= since,
            )
        )
        return found.first() is not None
