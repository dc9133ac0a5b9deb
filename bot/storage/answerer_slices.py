"""Where a slice of a closed post's answerers ends. The close (closing.py)
and the review cards (cards.py) both take a big post's answerers a slice at a
time, in user order, so that no transaction holds the writer long."""

from __future__ import annotations

from sqlalchemy import Connection, bindparam, select

from bot.storage.models import Answer

# Built once: every close runs it, for the boards and for the cards.
_SLICE_END = (
    select(Answer.user_id)
    .where(Answer.post_id == bindparam("post"), Answer.user_id > bindparam("after"))
    .order_by(Answer.user_id)
    .offset(bindparam("skip"))
    .limit(1)
)


def slice_end(connection: Connection, post_id: int, after: str, size: int) -> str | None:
    """The last of the next `size` answerers after `after` (user order); None
    when fewer are left: the rest is the last slice."""
    values = {"post": post_id, "after": after, "skip": size - 1}
    found: str | None = connection.execute(_SLICE_END, values).scalar_one_or_none()
    return found
