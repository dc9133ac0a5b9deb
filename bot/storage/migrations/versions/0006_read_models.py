"""read models: score totals per channel and community and period, per-question
counts per member, and daily streaks (filled by 0007)

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-03 10:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

import bot.storage.models

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None

_ROWID = {"sqlite_with_rowid": False}


def _score_columns() -> list[sa.Column[object]]:
    """What `channel_scores` and `community_scores` share (ScoreColumns)."""
    columns: list[sa.Column[object]] = [
        sa.Column("user_id", sa.String(length=64), primary_key=True)
    ]
    for prefix in ("", "week_", "month_", "prev_week_"):
        if prefix:
            week = prefix.removesuffix("_")
            columns.append(sa.Column(week, sa.String(length=8), nullable=week == "prev_week"))
        columns += [
            sa.Column(f"{prefix}points", sa.Integer(), nullable=False),
            sa.Column(f"{prefix}correct", sa.Integer(), nullable=False),
            sa.Column(f"{prefix}answered", sa.Integer(), nullable=False),
            sa.Column(
                f"{prefix}last_correct_at",
                bot.storage.models.UTCDateTime(timezone=True),
                nullable=True,
            ),
        ]
    return columns


def upgrade() -> None:
    op.create_table(
        "channel_scores",
        sa.Column(
            "channel_id",
            sa.Integer(),
            sa.ForeignKey("channels.id", ondelete="CASCADE"),
            primary_key=True,
        ),
        *_score_columns(),
        **_ROWID,
    )
    op.create_index("ix_channel_scores_user", "channel_scores", ["user_id"])
    op.create_table(
        "community_scores",
        sa.Column("platform", sa.String(length=16), primary_key=True),
        sa.Column("community", sa.String(length=64), primary_key=True),
        *_score_columns(),
        **_ROWID,
    )
    op.create_index("ix_community_scores_user", "community_scores", ["user_id"])
    op.create_table(
        "member_questions",
        sa.Column("platform", sa.String(length=16), primary_key=True),
        sa.Column("user_id", sa.String(length=64), primary_key=True),
        sa.Column("question_id", sa.String(length=64), primary_key=True),
        sa.Column("answered", sa.Integer(), nullable=False),
        sa.Column("correct", sa.Integer(), nullable=False),
        sa.Column("points", sa.Integer(), nullable=False),
        **_ROWID,
    )
    op.create_table(
        "daily_streaks",
        sa.Column(
            "channel_id",
            sa.Integer(),
            sa.ForeignKey("channels.id", ondelete="CASCADE"),
            primary_key=True,
        ),
        sa.Column("user_id", sa.String(length=64), primary_key=True),
        sa.Column("current", sa.Integer(), nullable=False),
        sa.Column("best", sa.Integer(), nullable=False),
        **_ROWID,
    )
    op.create_index("ix_daily_streaks_user", "daily_streaks", ["user_id"])
    # The backfill is 0007's: it counts by the rule of when answers count.


def downgrade() -> None:
    op.drop_index("ix_daily_streaks_user", table_name="daily_streaks")
    op.drop_table("daily_streaks")
    op.drop_table("member_questions")
    op.drop_index("ix_community_scores_user", table_name="community_scores")
    op.drop_table("community_scores")
    op.drop_index("ix_channel_scores_user", table_name="channel_scores")
    op.drop_table("channel_scores")
