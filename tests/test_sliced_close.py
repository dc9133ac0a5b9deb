"""A big close runs in slices (bot/storage/closing.py): a failure between two
slices leaves the question closed and revealed with part of its answers
counted, and the next process finishes it, each answer counted once."""

from __future__ import annotations

import asyncio

from sqlalchemy import func, select, text
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.storage.closing import SLICES
from bot.storage.db import check_read_models
from bot.storage.models import (
    CardReview,
    ChannelScore,
    ClosingPost,
    CommunityScore,
    MemberDay,
    PostVotes,
    QuestionAnalysis,
)
from tests.conftest import CHANNEL, Host, restart


def _sizes(engine: AsyncEngine) -> tuple[int, int]:
    """(answerers per slice on this backend, members: three slices' worth)."""
    size = SLICES[engine.dialect.name]
    return size, 2 * size + size // 2


def _failing_member(engine: AsyncEngine) -> str:
    """A member of the second slice (members sort as m0000, m0001, …)."""
    size = _sizes(engine)[0]
    return f"m{size + size // 2:04d}"


_SQLITE_TRIGGER = """
CREATE TRIGGER crash_between_slices BEFORE INSERT ON channel_scores
WHEN NEW.user_id = '{member}'
BEGIN SELECT RAISE(ABORT, 'the process died here'); END
"""
_POSTGRES_FUNCTION = """
CREATE FUNCTION crash_between_slices() RETURNS trigger AS $$
BEGIN RAISE EXCEPTION 'the process died here'; END $$ LANGUAGE plpgsql
"""
_POSTGRES_TRIGGER = """
CREATE TRIGGER crash_between_slices BEFORE INSERT ON channel_scores
FOR EACH ROW WHEN (NEW.user_id = '{member}')
EXECUTE FUNCTION crash_between_slices()
"""


async def _fail_second_slice(engine: AsyncEngine) -> None:
    """The database refuses the second slice's first write, as if the
    process had died before it."""
    async with engine.begin() as connection:
        if connection.dialect.name == "sqlite":
            member = _failing_member(engine)
            await connection.execute(text(_SQLITE_TRIGGER.format(member=member)))
        else:
            await connection.execute(text(_POSTGRES_FUNCTION))
            member = _failing_member(engine)
            await connection.execute(text(_POSTGRES_TRIGGER.format(member=member)))


async def _let_slices_through(engine: AsyncEngine) -> None:
    async with engine.begin() as connection:
        await connection.execute(
            text("DROP TRIGGER crash_between_slices ON channel_scores")
            if connection.dialect.name != "sqlite"
            else text("DROP TRIGGER crash_between_slices")
        )
        if connection.dialect.name != "sqlite":
            await connection.execute(text("DROP FUNCTION crash_between_slices()"))


async def _count(engine: AsyncEngine, query: object) -> int:
    async with engine.connect() as connection:
        return int((await connection.execute(query)).scalar_one())  # type: ignore[call-overload]


async def _answer_all(host: Host, members_count: int) -> tuple[int, str]:
    """Every member answers the open question, a quarter of them right; how
    many were right and the right letter."""
    right, wrong = host.correct_letter(), host.wrong_letter()
    members = [f"m{n:04d}" for n in range(members_count)]
    replies = await asyncio.gather(
        *(host.click(member, right if n % 4 == 0 else wrong) for n, member in enumerate(members))
    )
    assert all(reply.text.startswith("Locked in") for reply in replies)
    return (members_count + 3) // 4, right


async def _close_failing_after_one_slice(host: Host, engine: AsyncEngine) -> None:
    """Close the open question with the database refusing its second slice."""
    await _fail_second_slice(engine)
    try:
        await host.close_current()
    finally:
        await _let_slices_through(engine)


async def test_a_failure_between_slices_is_finished_by_the_next_process_and_counted_once(
    host: Host, engine: AsyncEngine
) -> None:
    size, members = _sizes(engine)
    await host.start(questions=2, seconds=600)
    question = host.current()
    right_answers, _ = await _answer_all(host, members)
    await _close_failing_after_one_slice(host, engine)

    # Closed and revealed; the next question is up; one slice counted.
    [reveal] = host.adapter.edits_of(question.message_id)
    assert f"{members:,} answers" in reveal.text or f"{members} answers" in reveal.text
    assert len(host.adapter.questions(CHANNEL)) == 2
    assert await _count(engine, select(func.count()).select_from(ChannelScore)) == size
    assert await _count(engine, select(func.count()).select_from(ClosingPost)) == 1
    lines, _ = await check_read_models(engine)
    assert any("still being counted" in line for line in lines), lines
    # The review cards do not wait for the boards.
    assert await _count(engine, select(func.count()).select_from(CardReview)) == members

    # The process dies; the next one's timer loop finishes the close once the
    # grace for a close in progress has passed, and a second finisher at the
    # same moment (another process on PostgreSQL) adds nothing twice.
    after, other = restart(host), restart(host, seed=12)
    host.clock.advance(31)
    await asyncio.gather(after.service.tick(), other.service.tick())

    assert await check_read_models(engine) == ([], 0)
    assert await _count(engine, select(func.count()).select_from(ClosingPost)) == 0
    assert await _count(engine, select(func.sum(ChannelScore.answered))) == members
    assert await _count(engine, select(func.sum(CommunityScore.answered))) == members
    assert await _count(engine, select(func.sum(CommunityScore.correct))) == right_answers
    assert await _count(engine, select(func.sum(MemberDay.answered))) == members
    assert await _count(engine, select(func.sum(PostVotes.answered))) == members
    assert await _count(engine, select(func.sum(QuestionAnalysis.answered))) == members
    assert await _count(engine, select(func.count()).select_from(CardReview)) == members
    # What members see: every right answerer on the board, with one answer's points.
    board = await after.leaderboard()
    assert len(board) == 10
    assert len({points for _, points in board}) == 1
    stats = await after.stats("m0004")
    assert stats.answered == 1


async def test_a_later_close_in_the_community_finishes_an_earlier_one_first(
    host: Host, engine: AsyncEngine
) -> None:
    """The analysis ranks answerers by their records before a post, so a
    post waits for the community's earlier closes to be counted."""
    _, members = _sizes(engine)
    await host.start(questions=2, seconds=600)
    await _answer_all(host, members)
    await _close_failing_after_one_slice(host, engine)
    await _answer_all(host, members)
    await host.close_current()

    assert await check_read_models(engine) == ([], 0)
    assert await _count(engine, select(func.sum(ChannelScore.answered))) == 2 * members


async def test_a_member_who_forgets_themselves_during_a_sliced_close_is_counted_nowhere(
    host: Host, engine: AsyncEngine
) -> None:
    """Forgetting recounts the votes of every closed question the member
    answered, a question still being counted too; the close's last slice then
    replaces that row rather than failing on it, and the counts add up."""
    _, members = _sizes(engine)
    await host.start(questions=2, seconds=600)
    await _answer_all(host, members)
    await _close_failing_after_one_slice(host, engine)
    assert await _count(engine, select(func.count()).select_from(ClosingPost)) == 1

    leaver = "m0001"  # in the slice already counted
    reply = await host.command("forget-me", user=leaver, moderator=False)
    assert await _count(engine, select(func.count()).select_from(PostVotes)) == 1, reply.text

    after = restart(host)
    host.clock.advance(31)
    await after.service.tick()

    assert await check_read_models(engine) == ([], 0)
    assert await _count(engine, select(func.count()).select_from(ClosingPost)) == 0
    assert await _count(engine, select(func.sum(PostVotes.answered))) == members - 1
    assert await _count(engine, select(func.sum(ChannelScore.answered))) == members - 1
    stats = await after.stats(leaver)
    assert stats.answered == 0
