"""scores count an answer when its question closes: the read models are
recounted from the answers by that rule; each board is read from an index in
rank order

Until this revision an answer counted on the boards and in stats as soon as it
was stored; now the transaction that closes a question counts its answers. A
database at 0006 counted the answers to questions still open, which their close
would count again, so every read model is rebuilt here. (0006 used to do this
backfill itself; it now only makes the tables, so an upgrade from 0005 recounts
once.)

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-03 13:30:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from bot.storage.recount import rebuild

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def _rank(prefix: str) -> list[sa.TextClause]:
    return [
        sa.text(f"{prefix}points DESC"),
        sa.text(f"{prefix}correct DESC"),
        sa.text(f"{prefix}last_correct_at"),
        sa.text("user_id"),
    ]


RANKED = {"channel_scores": ["channel_id"], "community_scores": ["platform", "community"]}


def upgrade() -> None:
    # An upgraded database shows the same leaderboards, stats and streaks.
    rebuild(op.get_bind())
    # After the recount: the indexes are built once, not row by row.
    for table, keys in RANKED.items():
        op.create_index(f"ix_{table}_all_rank", table, [*keys, *_rank("")])
        op.create_index(f"ix_{table}_week_rank", table, [*keys, "week", *_rank("week_")])
        op.create_index(f"ix_{table}_month_rank", table, [*keys, "month", *_rank("month_")])
    op.create_index(
        "ix_daily_streaks_rank",
        "daily_streaks",
        ["channel_id", sa.text("current DESC"), sa.text("best DESC"), "user_id"],
    )


def downgrade() -> None:
    op.drop_index("ix_daily_streaks_rank", table_name="daily_streaks")
    for table in RANKED:
        for period in ("all", "week", "month"):
            op.drop_index(f"ix_{table}_{period}_rank", table_name=table)
    # 0006's write path counted open questions' answers too: recount its way
    # is not kept, so a downgrade leaves the rows as they are; `quizmaster db
    # rebuild` on the older code would recount them.
