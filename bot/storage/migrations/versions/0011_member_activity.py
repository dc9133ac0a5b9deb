"""member activity: a member's closed answers per community and UTC day, and per
community and question, for the dashboard's member page; filled here from the
answers of closed questions

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-03 16:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from bot.storage.member_activity import backfill

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None


def _member() -> list[sa.Column[str]]:
    return [
        sa.Column("platform", sa.String(length=16), primary_key=True),
        sa.Column("user_id", sa.String(length=64), primary_key=True),
        sa.Column("community", sa.String(length=64), primary_key=True),
    ]


def upgrade() -> None:
    op.create_table(
        "member_days",
        *_member(),
        sa.Column("day", sa.Date(), primary_key=True),
        sa.Column("points", sa.Integer(), nullable=False),
        sa.Column("answered", sa.Integer(), nullable=False),
        sa.Column("correct", sa.Integer(), nullable=False),
        sqlite_with_rowid=False,
    )
    op.create_table(
        "community_member_questions",
        *_member(),
        sa.Column("question_id", sa.String(length=64), primary_key=True),
        sa.Column("answered", sa.Integer(), nullable=False),
        sa.Column("correct", sa.Integer(), nullable=False),
        sqlite_with_rowid=False,
    )
    backfill(op.get_bind())


def downgrade() -> None:
    op.drop_table("community_member_questions")
    op.drop_table("member_days")
