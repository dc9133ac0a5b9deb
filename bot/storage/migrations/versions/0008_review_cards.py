"""study loop: review cards per member and question, the answers taken into
them, `/quiz review` sessions, and a marker on posts whose answers are applied

Posts closed before this upgrade are marked applied: cards start from the
answers given after it.

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-03 13:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

import bot.storage.models

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None

_PENDING = "cards_applied_at IS NULL AND closed_at IS NOT NULL"


def _when(name: str, *, nullable: bool = True) -> sa.Column[object]:
    return sa.Column(name, bot.storage.models.UTCDateTime(timezone=True), nullable=nullable)


def upgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        # 0007's recount, in the same transaction, can leave a streamed read of
        # posts open, and PostgreSQL refuses to alter a table a cursor still reads.
        op.execute("CLOSE ALL")
    with op.batch_alter_table("posts", schema=None) as batch_op:
        batch_op.add_column(_when("cards_applied_at"))
        batch_op.create_index(
            "ix_posts_cards_pending",
            ["closed_at"],
            unique=False,
            sqlite_where=sa.text(_PENDING),
            postgresql_where=sa.text(_PENDING),
        )
    op.execute("UPDATE posts SET cards_applied_at = closed_at WHERE closed_at IS NOT NULL")
    op.create_table(
        "review_cards",
        sa.Column("platform", sa.String(length=16), primary_key=True),
        sa.Column("user_id", sa.String(length=64), primary_key=True),
        sa.Column("question_id", sa.String(length=64), primary_key=True),
        _when("due", nullable=False),
        sa.Column("state", sa.Integer(), nullable=False),
        sa.Column("step", sa.Integer(), nullable=True),
        sa.Column("stability", sa.Float(), nullable=True),
        sa.Column("difficulty", sa.Float(), nullable=True),
        _when("last_review"),
        sa.Column("reviews", sa.Integer(), nullable=False),
        sa.Column("misses", sa.Integer(), nullable=False),
        sqlite_with_rowid=False,
    )
    op.create_index("ix_review_cards_due", "review_cards", ["platform", "user_id", "due"])
    op.create_table(
        "card_reviews",
        sa.Column(
            "answer_id",
            sa.Integer(),
            sa.ForeignKey("answers.id", ondelete="CASCADE"),
            primary_key=True,
        ),
    )
    op.create_table(
        "review_sessions",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("platform", sa.String(length=16), nullable=False),
        sa.Column("community", sa.String(length=64), nullable=False),
        sa.Column("channel", sa.String(length=64), nullable=False),
        sa.Column("user_id", sa.String(length=64), nullable=False),
        sa.Column("step", sa.Integer(), nullable=False),
        sa.Column("remaining", sa.Integer(), nullable=False),
        sa.Column("question_id", sa.String(length=64), nullable=True),
        sa.Column("option_order", sa.JSON(), nullable=False),
        sa.Column("correct_slot", sa.Integer(), nullable=False),
        _when("shown_at", nullable=False),
        sqlite_autoincrement=True,
    )
    op.create_index("ix_review_sessions_user", "review_sessions", ["platform", "user_id"])


def downgrade() -> None:
    op.drop_index("ix_review_sessions_user", table_name="review_sessions")
    op.drop_table("review_sessions")
    op.drop_table("card_reviews")
    op.drop_index("ix_review_cards_due", table_name="review_cards")
    op.drop_table("review_cards")
    with op.batch_alter_table("posts", schema=None) as batch_op:
        batch_op.drop_index(
            "ix_posts_cards_pending",
            sqlite_where=sa.text(_PENDING),
            postgresql_where=sa.text(_PENDING),
        )
        batch_op.drop_column("cards_applied_at")
