"""seen requests: signed Slack requests already acted on, for five minutes, so
a replay or a retry reaching any process on the database acts once; forgotten
members: a hash of each member who used forget-me in the last day, so the
dashboard links issued to them before are refused

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-04 18:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from bot.storage.models import UTCDateTime

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "seen_requests",
        sa.Column("signature", sa.String(length=80), primary_key=True),
        sa.Column("expires_at", sa.Float(), nullable=False),
        sqlite_with_rowid=False,
    )
    op.create_index("ix_seen_requests_expires_at", "seen_requests", ["expires_at"])
    op.create_table(
        "forgotten_members",
        sa.Column("member_hash", sa.String(length=64), primary_key=True),
        sa.Column("forgotten_at", UTCDateTime(timezone=True), nullable=False),
        sqlite_with_rowid=False,
    )
    op.create_index("ix_forgotten_members_forgotten_at", "forgotten_members", ["forgotten_at"])


def downgrade() -> None:
    op.drop_index("ix_forgotten_members_forgotten_at", table_name="forgotten_members")
    op.drop_table("forgotten_members")
    op.drop_index("ix_seen_requests_expires_at", table_name="seen_requests")
    op.drop_table("seen_requests")
