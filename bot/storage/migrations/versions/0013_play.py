"""play: hints taken (and answers.hinted), the channel's mode and reading time,
team quizzes (quizzes.teams, their results, and each member's team)

Revision ID: 0013
Revises: 0012
Create Date: 2026-12-04 18:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Plain ADD COLUMN, never a batch copy: on SQLite a batch would recreate
    # the table, and dropping the old one (foreign keys on) cascades into
    # every post and answer that references it.
    op.add_column(
        "channels",
        sa.Column("mode", sa.String(length=16), nullable=False, server_default="compete"),
    )
    op.add_column(
        "channels",
        sa.Column("reading_time", sa.Boolean(), nullable=False, server_default=sa.false()),
    )
    op.add_column("quizzes", sa.Column("teams", sa.Integer(), nullable=True))
    op.add_column("quizzes", sa.Column("team_results", sa.JSON(), nullable=True))
    op.add_column(
        "answers", sa.Column("hinted", sa.Boolean(), nullable=False, server_default=sa.false())
    )
    op.create_table(
        "hints_taken",
        sa.Column("post_id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.String(length=64), nullable=False),
        sa.Column("taken_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["post_id"], ["posts.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("post_id", "user_id"),
    )
    op.create_table(
        "quiz_team_members",
        sa.Column("quiz_id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.String(length=64), nullable=False),
        sa.Column("team", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(["quiz_id"], ["quizzes.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("quiz_id", "user_id"),
    )


def downgrade() -> None:
    op.drop_table("quiz_team_members")
    op.drop_table("hints_taken")
    # DROP COLUMN in place (SQLite 3.35+), for the same reason as above.
    op.drop_column("answers", "hinted")
    op.drop_column("quizzes", "team_results")
    op.drop_column("quizzes", "teams")
    op.drop_column("channels", "reading_time")
    op.drop_column("channels", "mode")
