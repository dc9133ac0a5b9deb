"""initial schema

Revision ID: 0001
Revises: (none)
Create Date: 2026-12-02 12:01:33.851689
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

import bot.storage.models

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "channels",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("platform", sa.String(length=16), nullable=False),
        sa.Column("community", sa.String(length=64), nullable=False),
        sa.Column("channel", sa.String(length=64), nullable=False),
        sa.Column("timezone", sa.String(length=64), server_default="UTC", nullable=False),
        sa.Column("moderator_role", sa.String(length=100), nullable=True),
        sa.Column("created_at", bot.storage.models.UTCDateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("platform", "channel", name="uq_channels_platform_channel"),
    )
    with op.batch_alter_table("channels", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_channels_community"), ["community"], unique=False)

    op.create_table(
        "deck_seen",
        sa.Column("channel_id", sa.Integer(), nullable=False),
        sa.Column("question_id", sa.String(length=64), nullable=False),
        sa.ForeignKeyConstraint(["channel_id"], ["channels.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("channel_id", "question_id"),
    )
    op.create_table(
        "quizzes",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("channel_id", sa.Integer(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("question_ids", sa.JSON(), nullable=False),
        sa.Column("posted", sa.Integer(), nullable=False),
        sa.Column("seconds", sa.Integer(), nullable=False),
        sa.Column("bank", sa.String(length=64), nullable=True),
        sa.Column("tag", sa.String(length=40), nullable=True),
        sa.Column("expected_players", sa.Integer(), nullable=True),
        sa.Column("started_by", sa.String(length=64), nullable=False),
        sa.Column("started_at", bot.storage.models.UTCDateTime(timezone=True), nullable=False),
        sa.Column("ended_at", bot.storage.models.UTCDateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(["channel_id"], ["channels.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("quizzes", schema=None) as batch_op:
        batch_op.create_index(
            "uq_quizzes_one_running",
            ["channel_id"],
            unique=True,
            sqlite_where=sa.text("status = 'running'"),
            postgresql_where=sa.text("status = 'running'"),
        )

    op.create_table(
        "posts",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("channel_id", sa.Integer(), nullable=False),
        sa.Column("quiz_id", sa.Integer(), nullable=True),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("sequence", sa.Integer(), nullable=True),
        sa.Column("question_id", sa.String(length=64), nullable=False),
        sa.Column("option_order", sa.JSON(), nullable=False),
        sa.Column("correct_slot", sa.Integer(), nullable=False),
        sa.Column("seconds", sa.Integer(), nullable=False),
        sa.Column("posted_at", bot.storage.models.UTCDateTime(timezone=True), nullable=False),
        sa.Column("closes_at", bot.storage.models.UTCDateTime(timezone=True), nullable=False),
        sa.Column("closed_at", bot.storage.models.UTCDateTime(timezone=True), nullable=True),
        sa.Column("message_id", sa.String(length=64), nullable=True),
        sa.ForeignKeyConstraint(["channel_id"], ["channels.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["quiz_id"], ["quizzes.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("posts", schema=None) as batch_op:
        batch_op.create_index(
            "ix_posts_channel_kind", ["channel_id", "kind", "posted_at"], unique=False
        )
        batch_op.create_index(
            "ix_posts_open_closes_at",
            ["closes_at"],
            unique=False,
            sqlite_where=sa.text("closed_at IS NULL"),
            postgresql_where=sa.text("closed_at IS NULL"),
        )
        batch_op.create_index("ix_posts_quiz", ["quiz_id"], unique=False)

    op.create_table(
        "answers",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("post_id", sa.Integer(), nullable=False),
        sa.Column("channel_id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.String(length=64), nullable=False),
        sa.Column("slot", sa.Integer(), nullable=False),
        sa.Column("correct", sa.Boolean(), nullable=False),
        sa.Column("points", sa.Integer(), nullable=False),
        sa.Column("answered_at", bot.storage.models.UTCDateTime(timezone=True), nullable=False),
        sa.Column("latency_ms", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(["channel_id"], ["channels.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["post_id"], ["posts.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("post_id", "user_id", name="uq_answers_post_user"),
    )
    with op.batch_alter_table("answers", schema=None) as batch_op:
        batch_op.create_index(
            "ix_answers_channel_time", ["channel_id", "answered_at"], unique=False
        )
        batch_op.create_index("ix_answers_user", ["user_id"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("answers", schema=None) as batch_op:
        batch_op.drop_index("ix_answers_user")
        batch_op.drop_index("ix_answers_channel_time")

    op.drop_table("answers")
    with op.batch_alter_table("posts", schema=None) as batch_op:
        batch_op.drop_index("ix_posts_quiz")
        batch_op.drop_index(
            "ix_posts_open_closes_at",
            sqlite_where=sa.text("closed_at IS NULL"),
            postgresql_where=sa.text("closed_at IS NULL"),
        )
        batch_op.drop_index("ix_posts_channel_kind")

    op.drop_table("posts")
    with op.batch_alter_table("quizzes", schema=None) as batch_op:
        batch_op.drop_index(
            "uq_quizzes_one_running",
            sqlite_where=sa.text("status = 'running'"),
            postgresql_where=sa.text("status = 'running'"),
        )

    op.drop_table("quizzes")
    op.drop_table("deck_seen")
    with op.batch_alter_table("channels", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_channels_community"))

    op.drop_table("channels")
