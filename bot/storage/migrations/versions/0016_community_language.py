"""community language: a communities table with the language of channel posts

Revision ID: 0016
Revises: 0015
Create Date: 2026-12-04 21:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0016"
down_revision = "0015"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "communities",
        sa.Column("platform", sa.String(length=16), nullable=False),
        sa.Column("community", sa.String(length=64), nullable=False),
        sa.Column("language", sa.String(length=16), nullable=False, server_default="en"),
        sa.PrimaryKeyConstraint("platform", "community"),
    )


def downgrade() -> None:
    op.drop_table("communities")
