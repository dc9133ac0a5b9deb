"""Typed settings, read from the environment and an optional `.env` file."""

from __future__ import annotations

import math
from collections import Counter
from importlib import resources
from pathlib import Path
from typing import Annotated, Any

import platformdirs
from pydantic import Field, SecretStr, ValidationError, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from bot.adapters.discord.shards import AUTO, ShardPlan, parse_shard_count, parse_shard_ids

LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
# A dashboard link lets anyone try secrets offline, so the secret must resist
# guessing: this many bits, estimated from how its characters are spread.
MIN_SECRET_BITS = 72
MAKE_A_SECRET = 'python3 -c "import secrets; print(secrets.token_urlsafe(32))"'


def estimated_bits(secret: str) -> float:
    """A generous estimate of a secret's entropy: its length times the Shannon
    entropy of its characters (16 spaces or "aaaa…" are 0; a random 43-character
    token about 230)."""
    counts = Counter(secret)
    spread = -sum(n / len(secret) * math.log2(n / len(secret)) for n in counts.values())
    return spread * len(secret)


def installed_banks_dir() -> Path:
    """Where the shipped banks live: inside the installed package, else the source tree."""
    packaged = Path(str(resources.files("bot"))) / "banks"
    if packaged.is_dir():
        return packaged
    return Path(__file__).resolve().parent.parent / "questions"


LEGACY_DATA_DIR = Path("data")


def default_data_dir() -> Path:
    """The user's data folder, so stats are the same from any working folder; a
    database already in ./data (the old default) is still used, and named at start."""
    if (LEGACY_DATA_DIR / "quizmaster.db").is_file():
        return LEGACY_DATA_DIR
    return platformdirs.user_data_path("quizmaster", appauthor=False)


def default_questions_dir() -> Path:
    local = Path("questions")
    return local if local.is_dir() else installed_banks_dir()


class Settings(BaseSettings):
    """Every setting the bot reads. Environment names are given by `validation_alias`."""

    # An empty variable is unset (compose files pass `${TOKEN:-}` for a platform not used).
    model_config = SettingsConfigDict(
        env_file=".env", extra="ignore", populate_by_name=True, env_ignore_empty=True
    )

    database_url: str | None = Field(
        default=None,
        validation_alias="QUIZ_DATABASE_URL",
        description="SQLAlchemy URL; default SQLite in QUIZ_DATA_DIR",
    )
    data_dir: Path = Field(default_factory=default_data_dir, validation_alias="QUIZ_DATA_DIR")
    questions_dir: Path = Field(
        default_factory=default_questions_dir, validation_alias="QUIZ_QUESTIONS_DIR"
    )
    log_level: str = Field(default="INFO", validation_alias="QUIZ_LOG_LEVEL")
    health_port: int = Field(default=8080, ge=0, le=65535, validation_alias="QUIZ_HEALTH_PORT")
    # Health, metrics and dashboard: private unless the operator opens it.
    health_host: str = Field(default="127.0.0.1", min_length=1, validation_alias="QUIZ_HEALTH_HOST")
    # The dashboard is on only with a secret (it signs the links); never logged.
    web_secret: SecretStr | None = Field(default=None, validation_alias="QUIZ_WEB_SECRET")
    public_url: str | None = Field(default=None, validation_alias="QUIZ_PUBLIC_URL")

    discord_token: SecretStr | None = Field(default=None, validation_alias="DISCORD_TOKEN")
    slack_bot_token: SecretStr | None = Field(default=None, validation_alias="SLACK_BOT_TOKEN")
    slack_app_token: SecretStr | None = Field(default=None, validation_alias="SLACK_APP_TOKEN")
    slack_signing_secret: SecretStr | None = Field(
        default=None, validation_alias="SLACK_SIGNING_SECRET"
    )
    # Many workspaces: the app's OAuth credentials instead of one bot token.
    slack_client_id: str | None = Field(default=None, validation_alias="SLACK_CLIENT_ID")
    slack_client_secret: SecretStr | None = Field(
        default=None, validation_alias="SLACK_CLIENT_SECRET"
    )

    discord_guild_ids: Annotated[list[int], NoDecode] = Field(
        default_factory=list, validation_alias="QUIZ_DISCORD_GUILD_IDS"
    )
    # A number, or `auto` for the gateway's recommendation; the shards this
    # process runs (`0-3`, `4,5`; empty: all of them).
    discord_shard_count: str = Field(default="auto", validation_alias="QUIZ_DISCORD_SHARD_COUNT")
    discord_shard_ids: str = Field(default="", validation_alias="QUIZ_DISCORD_SHARD_IDS")
    discord_api_url: str | None = Field(default=None, validation_alias="QUIZ_DISCORD_API_URL")
    discord_gateway_url: str | None = Field(
        default=None, validation_alias="QUIZ_DISCORD_GATEWAY_URL"
    )
    slack_host: str = Field(default="0.0.0.0", validation_alias="QUIZ_SLACK_HOST")
    slack_port: int = Field(default=3000, ge=0, le=65535, validation_alias="QUIZ_SLACK_PORT")
    slack_moderators: Annotated[list[str], NoDecode] = Field(
        default_factory=list, validation_alias="QUIZ_SLACK_MODERATORS"
    )
    slack_api_url: str | None = Field(default=None, validation_alias="QUIZ_SLACK_API_URL")

    @field_validator("discord_guild_ids", "slack_moderators", mode="before")
    @classmethod
    def _comma_list(cls, value: Any) -> Any:
        if isinstance(value, str):
            return [item.strip() for item in value.split(",") if item.strip()]
        return value

    @field_validator("discord_shard_count")
    @classmethod
    def _shard_count(cls, value: str) -> str:
        parse_shard_count(value)
        return value.strip().lower() or AUTO

    @field_validator("discord_shard_ids")
    @classmethod
    def _shard_ids(cls, value: str) -> str:
        parse_shard_ids(value)
        return value

    @property
    def discord_shards(self) -> ShardPlan:
        return ShardPlan(
            parse_shard_count(self.discord_shard_count), parse_shard_ids(self.discord_shard_ids)
        )

    @field_validator("public_url")
    @classmethod
    def _public_url(cls, value: str | None) -> str | None:
        if not value:
            return None
        if not value.startswith(("http://", "https://")):
            raise ValueError("must be a full URL such as https://quiz.example.org")
        return value.rstrip("/")

    @field_validator("web_secret")
    @classmethod
    def _long_secret(cls, value: SecretStr | None) -> SecretStr | None:
        if value is None or not value.get_secret_value():
            return None
        secret = value.get_secret_value()
        if len(secret) < 16:
            raise ValueError(
                f"must be at least 16 characters (it signs dashboard links); make one with "
                f"{MAKE_A_SECRET}"
            )
        if estimated_bits(secret) < MIN_SECRET_BITS:
            raise ValueError(
                f"is too easy to guess (it signs dashboard links, and any link lets someone "
                f"try secrets offline); make one with {MAKE_A_SECRET}"
            )
        return value

    @property
    def resolved_public_url(self) -> str:
        """Where people reach the dashboard: QUIZ_PUBLIC_URL, else this machine's port."""
        return self.public_url or f"http://localhost:{self.health_port}"

    @field_validator("discord_api_url", "discord_gateway_url", "slack_api_url")
    @classmethod
    def _web_url(cls, value: str | None) -> str | None:
        if not value:
            return None
        if not value.startswith(("http://", "https://", "ws://", "wss://")):
            raise ValueError("must be a full URL such as http://127.0.0.1:8080/api/v10")
        return value

    @field_validator("slack_api_url")
    @classmethod
    def _trailing_slash(cls, value: str | None) -> str | None:
        # slack-sdk joins method names onto the base as plain strings.
        return value if value is None or value.endswith("/") else value + "/"

    @field_validator("log_level")
    @classmethod
    def _known_level(cls, value: str) -> str:
        upper = value.upper()
        if upper not in LOG_LEVELS:
            raise ValueError(f"must be one of {', '.join(LOG_LEVELS)}")
        return upper

    @field_validator("database_url")
    @classmethod
    def _async_driver(cls, value: str | None) -> str | None:
        if not value:
            return None
        # Accept the plain URLs people copy from hosting dashboards.
        for plain, driver in (
            ("postgres://", "postgresql+asyncpg://"),
            ("postgresql://", "postgresql+asyncpg://"),
            ("sqlite://", "sqlite+aiosqlite://"),
        ):
            if value.startswith(plain):
                return driver + value[len(plain) :]
        if not value.startswith(("postgresql+asyncpg://", "sqlite+aiosqlite://")):
            raise ValueError("must be a sqlite:// or postgresql:// URL")
        return value

    def database_place(self) -> str:
        """Where the data lives, for the start line: the SQLite file, or the
        server and database name (never the password)."""
        if not self.database_url:
            return str((self.data_dir / "quizmaster.db").resolve())
        from sqlalchemy.engine import make_url

        url = make_url(self.database_url)
        if url.get_backend_name() == "sqlite":
            return str(Path(url.database or "").resolve())
        return f"PostgreSQL {url.host or 'localhost'}:{url.port or 5432}/{url.database or ''}"

    @property
    def resolved_database_url(self) -> str:
        if self.database_url:
            return self.database_url
        return f"sqlite+aiosqlite:///{(self.data_dir / 'quizmaster.db').as_posix()}"

    @property
    def slack_oauth(self) -> bool:
        """Installed in many workspaces through OAuth (no SLACK_BOT_TOKEN)."""
        return self.slack_bot_token is None and bool(
            self.slack_client_id or self.slack_client_secret
        )

    @property
    def slack_configured(self) -> bool:
        return self.slack_bot_token is not None or self.slack_oauth

    def slack_problem(self) -> str | None:
        """Why the Slack settings cannot start an adapter, or None when they can (or are unset)."""
        if self.slack_bot_token and (self.slack_client_id or self.slack_client_secret):
            return (
                "set either SLACK_BOT_TOKEN (one workspace) or SLACK_CLIENT_ID and "
                "SLACK_CLIENT_SECRET (installed in many workspaces), not both"
            )
        if self.slack_oauth:
            if not (self.slack_client_id and self.slack_client_secret):
                return (
                    "installing in many workspaces needs both SLACK_CLIENT_ID and "
                    "SLACK_CLIENT_SECRET"
                )
            if self.slack_app_token or not self.slack_signing_secret:
                return (
                    "installing in many workspaces runs in HTTP mode: set SLACK_SIGNING_SECRET "
                    "(and not SLACK_APP_TOKEN)"
                )
            return None
        if self.slack_bot_token and not (self.slack_app_token or self.slack_signing_secret):
            return (
                "SLACK_BOT_TOKEN is set but neither SLACK_APP_TOKEN (Socket Mode) "
                "nor SLACK_SIGNING_SECRET (HTTP mode) is"
            )
        return None


# Shown when no platform is configured; kept next to the fields it describes.
SETTINGS_HELP: tuple[tuple[str, str], ...] = (
    ("DISCORD_TOKEN", "Discord bot token: starts the Discord adapter"),
    ("SLACK_BOT_TOKEN", "Slack bot token (xoxb-…): starts the Slack adapter"),
    ("SLACK_APP_TOKEN", "Slack app-level token (xapp-…): Socket Mode"),
    ("SLACK_SIGNING_SECRET", "Slack signing secret: HTTP mode"),
    ("SLACK_CLIENT_ID", "Slack app client id: install in many workspaces (with the secret)"),
    ("SLACK_CLIENT_SECRET", "Slack app client secret: /slack/install serves Add to Slack"),
    ("QUIZ_DISCORD_GUILD_IDS", "comma list of guild ids: sync /quiz there at once"),
    ("QUIZ_DISCORD_SHARD_COUNT", "Discord shards of the whole bot, or auto (the default)"),
    ("QUIZ_DISCORD_SHARD_IDS", "the shards this process runs, e.g. 0-3 or 4,5 (default all)"),
    ("QUIZ_DISCORD_API_URL", "Discord REST base (a proxy), e.g. http://127.0.0.1:8080/api/v10"),
    ("QUIZ_DISCORD_GATEWAY_URL", "Discord gateway base (a proxy), e.g. ws://127.0.0.1:8081/"),
    ("QUIZ_SLACK_HOST", "HTTP mode: address to listen on (default 0.0.0.0)"),
    ("QUIZ_SLACK_PORT", "HTTP mode: port of /slack/events (default 3000)"),
    ("QUIZ_SLACK_MODERATORS", "comma list of Slack user ids who may moderate everywhere"),
    ("QUIZ_SLACK_API_URL", "Slack Web API base, e.g. http://127.0.0.1:9000/api/"),
    ("QUIZ_DATABASE_URL", "database URL (default: SQLite in QUIZ_DATA_DIR)"),
    ("QUIZ_DATA_DIR", "folder for the SQLite database (default: your user data folder)"),
    ("QUIZ_QUESTIONS_DIR", "folder of question banks (default ./questions or the shipped banks)"),
    ("QUIZ_LOG_LEVEL", "DEBUG, INFO, WARNING, ERROR (default INFO)"),
    ("QUIZ_HEALTH_PORT", "port of GET /healthz (default 8080, 0 turns it off)"),
    ("QUIZ_HEALTH_HOST", "address of the health/dashboard port (default 127.0.0.1)"),
    ("QUIZ_WEB_SECRET", "secret that signs dashboard links (16+ characters): turns it on"),
    ("QUIZ_PUBLIC_URL", "the dashboard's address for links (default http://localhost:PORT)"),
)


def describe_errors(error: ValidationError) -> list[str]:
    """One readable line per bad setting, naming its environment variable, never its value."""
    lines = []
    for problem in error.errors():
        name = str(problem["loc"][0]) if problem["loc"] else "settings"
        lines.append(f"{name}: {problem['msg']}")
    return lines


def load_settings() -> Settings:
    return Settings()
