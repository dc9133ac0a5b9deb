"""scores count an answer when its question closes: the read models are
recounted from the answers by that rule

Until this revision an answer counted on the boards and in stats as soon as it
was stored; now the transaction that closes a question counts its answers. A
database at 0006 counted the answers to questions still open, which their close
would count again, so every read model is rebuilt here. (0006 used to do this
backfill itself; it now only makes the tables, so an upgrade from 0005 recounts
once.)

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-03 13:30:00
"""

from __future__ import annotations

from alembic import op

from bot.storage.recount import rebuild

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # An upgraded database shows the same leaderboards, stats and streaks.
    rebuild(op.get_bind())


def downgrade() -> None:
    # 0006's write path counted open questions' answers too: recount its way
    # is not kept, so a downgrade leaves the rows as they are; `quizmaster db
    # rebuild` on the older code would recount them.
    pass
