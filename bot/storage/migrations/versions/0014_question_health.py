"""question health: item analysis per question and community (filled here
from the answers of closed posts), member reports, questions withdrawn from a
community's draw, and the channel's daily pick

Revision ID: 0014
Revises: 0013
Create Date: 2026-12-04 19:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

import bot.storage.models
from bot.storage.item_analysis import backfill_analysis

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None

_WHEN = bot.storage.models.UTCDateTime(timezone=True)


def upgrade() -> None:
    with op.batch_alter_table("channels", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("daily_pick", sa.String(length=16), nullable=False, server_default="shuffle")
        )
    with op.batch_alter_table("posts", schema=None) as batch_op:
        batch_op.add_column(sa.Column("review_share", sa.Float(), nullable=True))
        batch_op.add_column(sa.Column("review_of", _WHEN, nullable=True))
    with op.batch_alter_table("review_sessions", schema=None) as batch_op:
        batch_op.add_column(sa.Column("last_question_id", sa.String(length=64), nullable=True))
    counts = [
        *(f"option_{n}" for n in range(5)),
        "upper_answered",
        "upper_correct",
        *(f"upper_{n}" for n in range(5)),
        "lower_answered",
        "lower_correct",
        *(f"lower_{n}" for n in range(5)),
    ]
    op.create_table(
        "question_analysis",
        sa.Column("platform", sa.String(length=16), nullable=False),
        sa.Column("community", sa.String(length=64), nullable=False),
        sa.Column("question_id", sa.String(length=64), nullable=False),
        sa.Column("answered", sa.Integer(), nullable=False),
        sa.Column("correct", sa.Integer(), nullable=False),
        *[sa.Column(name, sa.Integer(), nullable=False) for name in counts],
        sa.Column("options", sa.Integer(), nullable=False),
        sa.Column("answer", sa.Integer(), nullable=False),
        sa.Column("severity", sa.Integer(), nullable=False),
        sa.Column("flags", sa.String(length=120), nullable=False),
        sa.PrimaryKeyConstraint("platform", "community", "question_id"),
        sqlite_with_rowid=False,
    )
    op.create_index(
        "ix_question_analysis_severity",
        "question_analysis",
        ["platform", "community", "severity"],
    )
    op.create_table(
        "question_reports",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("platform", sa.String(length=16), nullable=False),
        sa.Column("community", sa.String(length=64), nullable=False),
        sa.Column("channel", sa.String(length=64), nullable=False),
        sa.Column("question_id", sa.String(length=64), nullable=False),
        sa.Column("user_id", sa.String(length=64), nullable=False),
        sa.Column("reason", sa.String(length=16), nullable=False),
        sa.Column("text", sa.String(length=500), nullable=True),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("created_at", _WHEN, nullable=False),
        sa.Column("resolved_by", sa.String(length=64), nullable=True),
        sa.Column("resolved_at", _WHEN, nullable=True),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index(
        "ix_question_reports_open",
        "question_reports",
        ["platform", "community", "status", "id"],
    )
    op.create_table(
        "withdrawn_questions",
        sa.Column("platform", sa.String(length=16), nullable=False),
        sa.Column("community", sa.String(length=64), nullable=False),
        sa.Column("question_id", sa.String(length=64), nullable=False),
        sa.Column("withdrawn_by", sa.String(length=64), nullable=False),
        sa.Column("withdrawn_at", _WHEN, nullable=False),
        sa.PrimaryKeyConstraint("platform", "community", "question_id"),
        sqlite_with_rowid=False,
    )
    backfill_analysis(op.get_bind())


def downgrade() -> None:
    op.drop_table("withdrawn_questions")
    op.drop_index("ix_question_reports_open", table_name="question_reports")
    op.drop_table("question_reports")
    op.drop_index("ix_question_analysis_severity", table_name="question_analysis")
    op.drop_table("question_analysis")
    with op.batch_alter_table("review_sessions", schema=None) as batch_op:
        batch_op.drop_column("last_question_id")
    with op.batch_alter_table("posts", schema=None) as batch_op:
        batch_op.drop_column("review_of")
        batch_op.drop_column("review_share")
    with op.batch_alter_table("channels", schema=None) as batch_op:
        batch_op.drop_column("daily_pick")
