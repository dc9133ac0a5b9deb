"""sliced close: closing_posts, the closed posts whose answers are still being
added to the read models a slice at a time (finished by the next process
after a crash)

Revision ID: 0018
Revises: 0017
Create Date: 2026-12-04 21:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

import bot.storage.models

revision = "0018"
down_revision = "0017"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "closing_posts",
        sa.Column(
            "post_id",
            sa.Integer(),
            sa.ForeignKey("posts.id", ondelete="CASCADE"),
            primary_key=True,
        ),
        sa.Column("platform", sa.String(length=16), nullable=False),
        sa.Column("community", sa.String(length=64), nullable=False),
        sa.Column("closed_at", bot.storage.models.UTCDateTime(timezone=True), nullable=False),
        sa.Column("step", sa.Integer(), nullable=False),
        sa.Column("after_user", sa.String(length=64), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("closing_posts")
