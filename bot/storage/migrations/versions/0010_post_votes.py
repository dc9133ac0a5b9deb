"""post votes: how each closed post was answered (per option, right answers), for
the dashboard's question pages; filled here from the answers of closed posts

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-03 14:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

import bot.storage.models
from bot.storage.post_votes import backfill_post_votes

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "post_votes",
        sa.Column(
            "post_id",
            sa.Integer(),
            sa.ForeignKey("posts.id", ondelete="CASCADE"),
            primary_key=True,
        ),
        sa.Column("platform", sa.String(length=16), nullable=False),
        sa.Column("community", sa.String(length=64), nullable=False),
        sa.Column("question_id", sa.String(length=64), nullable=False),
        sa.Column("closed_at", bot.storage.models.UTCDateTime(timezone=True), nullable=False),
        sa.Column("answered", sa.Integer(), nullable=False),
        sa.Column("correct", sa.Integer(), nullable=False),
        *[sa.Column(f"option_{n}", sa.Integer(), nullable=False) for n in range(5)],
    )
    backfill_post_votes(op.get_bind())
    op.create_index("ix_post_votes_community", "post_votes", ["platform", "community", "closed_at"])


def downgrade() -> None:
    op.drop_index("ix_post_votes_community", table_name="post_votes")
    op.drop_table("post_votes")
