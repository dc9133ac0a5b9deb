"""submissions: questions members propose, their review, and the community banks

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-03 13:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

import bot.storage.models

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "submissions",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("platform", sa.String(length=16), nullable=False),
        sa.Column("community", sa.String(length=64), nullable=False),
        sa.Column("channel", sa.String(length=64), nullable=False),
        sa.Column("author_id", sa.String(length=64), nullable=False),
        sa.Column("author_name", sa.String(length=100), nullable=True),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("question", sa.JSON(), nullable=False),
        sa.Column("reason", sa.String(length=500), nullable=True),
        sa.Column("reviewed_by", sa.String(length=64), nullable=True),
        sa.Column("created_at", bot.storage.models.UTCDateTime(timezone=True), nullable=False),
        sa.Column("reviewed_at", bot.storage.models.UTCDateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index(
        "ix_submissions_community_status",
        "submissions",
        ["platform", "community", "status", "id"],
        unique=False,
    )
    op.create_index(
        "ix_submissions_author",
        "submissions",
        ["platform", "community", "author_id", "status"],
        unique=False,
    )


def downgrade() -> None:
    op.drop_index("ix_submissions_author", table_name="submissions")
    op.drop_index("ix_submissions_community_status", table_name="submissions")
    op.drop_table("submissions")
