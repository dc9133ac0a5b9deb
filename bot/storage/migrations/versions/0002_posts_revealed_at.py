"""posts.revealed_at: retry reveals that a crash or a platform error interrupted

Revision ID: 0002
Revises: 0001
Create Date: 2026-12-02 12:45:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

import bot.storage.models

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("posts", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("revealed_at", bot.storage.models.UTCDateTime(timezone=True), nullable=True)
        )
    # Posts closed before this migration were revealed (or will never be).
    op.execute("UPDATE posts SET revealed_at = closed_at WHERE closed_at IS NOT NULL")
    with op.batch_alter_table("posts", schema=None) as batch_op:
        batch_op.create_index(
            "ix_posts_unrevealed_closed_at",
            ["closed_at"],
            unique=False,
            sqlite_where=sa.text("revealed_at IS NULL"),
            postgresql_where=sa.text("revealed_at IS NULL"),
        )


def downgrade() -> None:
    with op.batch_alter_table("posts", schema=None) as batch_op:
        batch_op.drop_index(
            "ix_posts_unrevealed_closed_at",
            sqlite_where=sa.text("revealed_at IS NULL"),
            postgresql_where=sa.text("revealed_at IS NULL"),
        )
        batch_op.drop_column("revealed_at")
