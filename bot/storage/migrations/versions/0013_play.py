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
    with op.batch_alter_table("channels", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("mode", sa.String(length=16), nullable=False, server_default="compete")
        )
        batch_op.add_column(
            sa.Column("reading_time", sa.Boolean(), nullable=False, server_default=sa.false())
        )
    with op.batch_alter_table("quizzes", schema=None) as batch_op:
        batch_op.add_column(sa.Column("teams", sa.Integer(), nullable=True))
        batch_op.add_column(sa.Column("team_results", sa.JSON(), nullable=True))
    with op.batch_alter_table("answers", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("hinted", sa.Boolean(), nullable=False, server_default=sa.false())
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
    with op.batch_alter_table("answers", schema=None) as batch_op:
        batch_op.drop_column("hinted")
    with op.batch_alter_table("quizzes", schema=None) as batch_op:
        batch_op.drop_column("team_results")
        batch_op.drop_column("teams")
    with op.batch_alter_table("channels", schema=None) as batch_op:
        batch_op.drop_column("reading_time")
        batch_op.drop_column("mode")
