"""installations: slack-sdk's installation, bot and OAuth state tables for
installing in many Slack workspaces, and each workspace's organisation

Revision ID: 0015
Revises: 0014
Create Date: 2026-12-04 19:00:00
"""

from __future__ import annotations

from alembic import op

from bot.storage.installations import INSTALLATION_TABLES

revision = "0015"
down_revision = "0014"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # The tables as slack-sdk (pinned in the lock files) builds them, with
    # their indexes: its stores read and write exactly these columns.
    bind = op.get_bind()
    for table in INSTALLATION_TABLES:
        table.create(bind)


def downgrade() -> None:
    bind = op.get_bind()
    for table in reversed(INSTALLATION_TABLES):
        table.drop(bind)
