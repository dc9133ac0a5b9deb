"""How each closed post's channel voted: counted at close, recounted by `db check`."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from sqlalchemy import (
    Integer,
    cast,
    delete,
    func,
    insert,
    select,
)
from sqlalchemy.engine import Connection
from sqlalchemy.ext.asyncio import AsyncSession

from bot.storage.models import (
    Answer,
    Channel,
    Post,
    PostVotes,
)
from bot.storage.read_models import ClosedPost
from bot.storage.sql import insert_for

# Every read-model table (the recount replaces them all).

# How a closed post was answered (the dashboard's question pages).
_ANSWERS = Answer.__table__.c
OPTIONS = 5


def _vote_queries(post_ids: Sequence[int] | None) -> tuple[Any, Any]:
    """The closed posts (with what their row is keyed by) and their answers
    counted per shown slot; all closed posts when `post_ids` is None."""
    posts = (
        select(
            Post.id,
            Channel.platform,
            Channel.community,
            Post.question_id,
            Post.option_order,
            Post.closed_at,
        )
        .join(Channel, Channel.id == Post.channel_id)
        .where(Post.closed_at.is_not(None))
    )
    counts = select(
        _ANSWERS.post_id,
        _ANSWERS.slot,
        func.count(),
        func.coalesce(func.sum(cast(_ANSWERS.correct, Integer)), 0),
    ).group_by(_ANSWERS.post_id, _ANSWERS.slot)
    if post_ids is not None:
        posts = posts.where(Post.id.in_(post_ids))
        counts = counts.where(_ANSWERS.post_id.in_(post_ids))
    return posts, counts


def _vote_rows(posts: Iterable[Any], counts: Iterable[Any]) -> list[dict[str, Any]]:
    """One `post_votes` row per closed post with answers, its votes turned from
    the shown slots into bank order (`option_order[slot]` is the bank option)."""
    by_post: dict[int, list[tuple[int, int, int]]] = {}
    for post_id, slot, answered, correct in counts:
        by_post.setdefault(post_id, []).append((slot, int(answered), int(correct)))
    rows = []
    for post_id, platform, community, question_id, order, closed_at in posts:
        slots = by_post.get(post_id)
        if not slots:
            continue
        row: dict[str, Any] = {
            "post_id": post_id,
            "platform": platform,
            "community": community,
            "question_id": question_id,
            "closed_at": closed_at,
            "answered": sum(n for _, n, _ in slots),
            "correct": sum(c for _, _, c in slots),
        }
        votes = [0] * OPTIONS
        for slot, answered, _ in slots:
            if 0 <= slot < len(order):
                votes[order[slot]] += answered
        row.update({f"option_{n}": votes[n] for n in range(OPTIONS)})
        rows.append(row)
    return rows


async def count_post_votes(session: AsyncSession, post_ids: Sequence[int]) -> None:
    """(Re)count these posts' votes, in the caller's transaction: the one that
    closes a post, or the one that deletes a member's answers."""
    # In slices: a member's answers can touch more posts than a statement may bind.
    for start in range(0, len(post_ids), 1_000):
        chosen = post_ids[start : start + 1_000]
        await session.execute(delete(PostVotes).where(PostVotes.post_id.in_(chosen)))
        posts, counts = _vote_queries(chosen)
        found = (await session.execute(posts)).all(), (await session.execute(counts)).all()
        rows = _vote_rows(*found)
        if rows:
            await session.execute(insert(PostVotes), rows)


def count_closed_post_votes(
    connection: Connection, post: ClosedPost, option_order: Sequence[int]
) -> None:
    """The votes row of a post whose close is being finished (its last
    slice), from one count of its answers; it replaces a row a member's
    forgetting may have written meanwhile."""
    _, counts = _vote_queries([post.id])
    shown = (post.id, post.platform, post.community, post.question_id, option_order, post.closed_at)
    rows = _vote_rows([shown], connection.execute(counts).all())
    if not rows:
        return
    upsert = insert_for(connection.dialect.name, PostVotes).values(rows)
    replaced = {name: upsert.excluded[name] for name in rows[0] if name != "post_id"}
    connection.execute(upsert.on_conflict_do_update(index_elements=["post_id"], set_=replaced))


def expected_post_votes(connection: Connection) -> dict[int, dict[str, Any]]:
    """Every closed post's `post_votes` row as its answers say, by post id:
    one pass over the answers, grouped by post and slot."""
    posts, counts = _vote_queries(None)
    rows = _vote_rows(connection.execute(posts).all(), connection.execute(counts).all())
    return {row["post_id"]: row for row in rows}


def stored_post_votes(connection: Connection) -> dict[int, dict[str, Any]]:
    return {
        row["post_id"]: dict(row)
        for row in connection.execute(select(PostVotes.__table__)).mappings()
    }


def backfill_post_votes(connection: Connection) -> None:
    """Replace every `post_votes` row with what the answers say (migration
    0010, `quizmaster db rebuild`)."""
    connection.execute(delete(PostVotes))
    rows = list(expected_post_votes(connection).values())
    for start in range(0, len(rows), 5_000):
        connection.execute(insert(PostVotes), rows[start : start + 5_000])


# -- reading them ---------------------------------------------------------------
