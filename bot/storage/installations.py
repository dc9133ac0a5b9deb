"""Where the bot is installed through an OAuth flow (Slack's "Add to Slack").

The installation and OAuth state tables are slack-sdk's own (its SQLAlchemy
stores read and write them; built here from its table builders so that the
migrations and the schema check see them), and `slack_workspaces` remembers
each workspace's Enterprise Grid organisation, which a timed post (with no
request to read it from) needs to find the workspace's token."""

from __future__ import annotations

import sqlalchemy as sa
from slack_sdk.oauth.installation_store.sqlalchemy import SQLAlchemyInstallationStore
from slack_sdk.oauth.state_store.sqlalchemy import SQLAlchemyOAuthStateStore

from bot.storage.models import Base

_metadata = Base.metadata

SLACK_BOTS = SQLAlchemyInstallationStore.build_bots_table(
    _metadata, SQLAlchemyInstallationStore.default_bots_table_name
)
SLACK_INSTALLATIONS = SQLAlchemyInstallationStore.build_installations_table(
    _metadata, SQLAlchemyInstallationStore.default_installations_table_name
)
SLACK_OAUTH_STATES = SQLAlchemyOAuthStateStore.build_oauth_states_table(
    _metadata, SQLAlchemyOAuthStateStore.default_table_name
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
