"""channels.mentions and channels.delivery_problem: per-channel settings for adapters

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-02 13:30:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("channels", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("mentions", sa.Boolean(), nullable=False, server_default=sa.true())
        )
        batch_op.add_column(sa.Column("delivery_problem", sa.String(length=300), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("channels", schema=None) as batch_op:
        batch_op.drop_column("delivery_problem")
        batch_op.drop_column("mentions")
