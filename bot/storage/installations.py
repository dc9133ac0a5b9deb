"""Where the bot is installed through an OAuth flow (Slack's "Add to Slack").

The installation, bot and OAuth state tables are the ones slack-sdk's
SQLAlchemy stores read and write (the Slack adapter gives the stores our
engine). They are written out here, with no slack-sdk import, so storage never
loads a platform library; tests/test_slack_oauth.py holds them equal to the
tables slack-sdk builds. `slack_workspaces` is ours: each workspace's Enterprise
Grid organisation, which a timed post (no request to read it from) needs to
find the workspace's token."""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa

from bot.storage.models import Base

_metadata = Base.metadata
_ID, _NAME = sa.String(32), sa.String(200)


def _bot_columns() -> list[sa.Column[Any]]:
    """The columns a bot row and an installation row share: who installed
    where, and the bot's token."""
    return [
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("client_id", _ID, nullable=False),
        sa.Column("app_id", _ID, nullable=False),
        sa.Column("enterprise_id", _ID),
        sa.Column("enterprise_name", _NAME),
        sa.Column("team_id", _ID),
        sa.Column("team_name", _NAME),
        sa.Column("bot_token", _NAME),
        sa.Column("bot_id", _ID),
        sa.Column("bot_user_id", _ID),
        sa.Column("bot_scopes", sa.String(1000)),
        sa.Column("bot_refresh_token", _NAME),
        sa.Column("bot_token_expires_at", sa.DateTime),
        sa.Column("is_enterprise_install", sa.Boolean, nullable=False),
        sa.Column("installed_at", sa.DateTime, nullable=False),
    ]


SLACK_BOTS = sa.Table(
    "slack_bots",
    _metadata,
    *_bot_columns(),
    sa.Index("slack_bots_idx", "client_id", "enterprise_id", "team_id", "installed_at"),
)
SLACK_INSTALLATIONS = sa.Table(
    "slack_installations",
    _metadata,
    *_bot_columns(),
    sa.Column("enterprise_url", _NAME),
    sa.Column("user_id", _ID, nullable=False),
    sa.Column("user_token", _NAME),
    sa.Column("user_scopes", sa.String(1000)),
    sa.Column("user_refresh_token", _NAME),
    sa.Column("user_token_expires_at", sa.DateTime),
    sa.Column("incoming_webhook_url", _NAME),
    sa.Column("incoming_webhook_channel", _NAME),
    sa.Column("incoming_webhook_channel_id", _NAME),
    sa.Column("incoming_webhook_configuration_url", _NAME),
    sa.Column("token_type", _ID),
    sa.Index(
        "slack_installations_idx",
        "client_id",
        "enterprise_id",
        "team_id",
        "user_id",
        "installed_at",
    ),
)
SLACK_OAUTH_STATES = sa.Table(
    "slack_oauth_states",
    _metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("state", _NAME, nullable=False),
    sa.Column("expire_at", sa.DateTime, nullable=False),
)

SLACK_WORKSPACES = sa.Table(
    "slack_workspaces",
    _metadata,
    sa.Column("team_id", sa.String(32), primary_key=True),
    sa.Column("enterprise_id", sa.String(32), nullable=True),
    sa.Column("enterprise_install", sa.Boolean, nullable=False),
    sa.Column("installed", sa.Boolean, nullable=False),
    sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
)

INSTALLATION_TABLES = (SLACK_BOTS, SLACK_INSTALLATIONS, SLACK_OAUTH_STATES, SLACK_WORKSPACES)
