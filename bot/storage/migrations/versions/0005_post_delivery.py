"""posts: reveal claims, and publish retries for posts not yet delivered

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-03 08:30:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

import bot.storage.models

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None

_UNPUBLISHED = "message_id IS NULL AND closed_at IS NULL"


def upgrade() -> None:
    with op.batch_alter_table("posts", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column(
                "reveal_claimed_at", bot.storage.models.UTCDateTime(timezone=True), nullable=True
            )
        )
        batch_op.add_column(
            sa.Column("publish_attempts", sa.Integer(), nullable=False, server_default="0")
        )
        batch_op.add_column(
            sa.Column(
                "publish_retry_at", bot.storage.models.UTCDateTime(timezone=True), nullable=True
            )
        )
        batch_op.add_column(
            sa.Column("publish_by", bot.storage.models.UTCDateTime(timezone=True), nullable=True)
        )
        batch_op.create_index(
            "ix_posts_unpublished_retry_at",
            ["publish_retry_at"],
            unique=False,
            sqlite_where=sa.text(_UNPUBLISHED),
            postgresql_where=sa.text(_UNPUBLISHED),
        )


def downgrade() -> None:
    with op.batch_alter_table("posts", schema=None) as batch_op:
        batch_op.drop_index(
            "ix_posts_unpublished_retry_at",
            sqlite_where=sa.text(_UNPUBLISHED),
            postgresql_where=sa.text(_UNPUBLISHED),
        )
        batch_op.drop_column("publish_by")
        batch_op.drop_column("publish_retry_at")
        batch_op.drop_column("publish_attempts")
        batch_op.drop_column("reveal_claimed_at")
