"""post owner: the process that made each post, so the processes sharing a
database do not all race to close and reveal every post

Revision ID: 0017
Revises: 0016
Create Date: 2026-12-04 21:10:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0017"
down_revision = "0016"
branch_labels = None
depends_on = None


def upgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        # An earlier revision's backfill, in the same transaction, can leave a
        # streamed read of posts open; PostgreSQL will not alter the table then.
        op.execute("CLOSE ALL")
    # Nullable: posts made before it belong to nobody, so any process takes them.
    with op.batch_alter_table("posts") as batch:
        batch.add_column(sa.Column("owner", sa.String(40), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("posts") as batch:
        batch.drop_column("owner")
