"""schedules table, channels.daily_window_hours and channels.grace_minutes

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-02 15:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

import bot.storage.models

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("channels", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("daily_window_hours", sa.Integer(), nullable=False, server_default="24")
        )
        batch_op.add_column(
            sa.Column("grace_minutes", sa.Integer(), nullable=False, server_default="120")
        )
    op.create_table(
        "schedules",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("channel_id", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("at_time", sa.String(length=5), nullable=False),
        sa.Column("zone", sa.String(length=64), nullable=False),
        sa.Column("days", sa.JSON(), nullable=False),
        sa.Column("bank", sa.String(length=64), nullable=True),
        sa.Column("tag", sa.String(length=40), nullable=True),
        sa.Column("next_fire", bot.storage.models.UTCDateTime(timezone=True), nullable=False),
        sa.Column("created_by", sa.String(length=64), nullable=False),
        sa.Column("updated_at", bot.storage.models.UTCDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["channel_id"], ["channels.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("channel_id", "kind", name="uq_schedules_channel_kind"),
    )
    with op.batch_alter_table("schedules", schema=None) as batch_op:
        batch_op.create_index("ix_schedules_next_fire", ["next_fire"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("schedules", schema=None) as batch_op:
        batch_op.drop_index("ix_schedules_next_fire")
    op.drop_table("schedules")
    with op.batch_alter_table("channels", schema=None) as batch_op:
        batch_op.drop_column("grace_minutes")
        batch_op.drop_column("daily_window_hours")
