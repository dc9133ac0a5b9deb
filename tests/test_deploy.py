"""deploy/compose.yaml, checked without a container runtime: its shape (the
shard ranges cover every shard once, every setting is one the bot reads, the
healthchecks read the bot's port, nginx spreads Slack over every replica), and
each bot service's own settings run as `quizmaster run` processes against the
fake Discord and the test PostgreSQL server."""

from __future__ import annotations

import asyncio
import re
import signal
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from bot.adapters.discord.shards import parse_shard_ids
from bot.config import Settings
from tests.conftest import ROOT
from tests.fakes.fake_discord import FakeDiscord
from tests.processes import bot_environment, free_port, start_run, wait_until_connected
from tests.test_several_processes import cluster_database  # noqa: F401  (a fixture)

COMPOSE = ROOT / "deploy" / "compose.yaml"
NGINX = ROOT / "deploy" / "nginx.conf"
_VARIABLE = re.compile(r"\$\{(\w+)(?::[-?][^}]*)?\}")


def compose() -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load(COMPOSE.read_text())
    return loaded


def bots() -> dict[str, dict[str, Any]]:
    return {name: service for name, service in compose()["services"].items() if "bot" in name}


def known_settings() -> set[str]:
    return {
        str(field.validation_alias)
        for field in Settings.model_fields.values()
        if field.validation_alias
    }


def test_the_replicas_share_every_shard_once_and_only_read_settings_the_bot_knows() -> None:
    services = bots()
    assert len(services) == 3
    counts = {service["environment"]["QUIZ_DISCORD_SHARD_COUNT"] for service in services.values()}
    [count] = counts
    held = [
        shard
        for service in services.values()
        for shard in parse_shard_ids(service["environment"]["QUIZ_DISCORD_SHARD_IDS"]) or []
    ]
    assert sorted(held) == list(range(int(count)))
    for name, service in services.items():
        unknown = set(service["environment"]) - known_settings()
        assert not unknown, (name, unknown)
        assert service["depends_on"]["postgres"]["condition"] == "service_healthy"
        assert service["environment"]["QUIZ_DATABASE_URL"].startswith("postgresql://")
        # The healthcheck asks the port the bot serves /healthz on.
        assert "QUIZ_HEALTH_PORT" in " ".join(service["healthcheck"]["test"])


def test_nginx_spreads_slack_over_every_replica_with_the_bots_body_limit() -> None:
    config = NGINX.read_text()
    upstreams = re.findall(r"server (bot-\d+):(\d+)", config)
    slack_ports = {service["environment"]["QUIZ_SLACK_PORT"] for service in bots().values()}
    assert sorted(name for name, _ in upstreams) == sorted(bots())
    assert {port for _, port in upstreams} == slack_ports
    assert "location /slack/" in config
    assert "client_max_body_size 64k" in config
    proxy = compose()["services"]["proxy"]
    assert "./nginx.conf:/etc/nginx/nginx.conf:ro" in proxy["volumes"]


def test_the_example_env_names_every_variable_the_compose_file_needs() -> None:
    needed = set(_VARIABLE.findall(COMPOSE.read_text()))
    example = ROOT / "deploy" / "example.env"
    given = {
        line.split("=", 1)[0]
        for line in example.read_text().splitlines()
        if line and not line.startswith("#")
    }
    assert needed == given


@pytest.fixture
async def fake() -> AsyncIterator[FakeDiscord]:
    made = FakeDiscord()
    await made.start()
    yield made
    await made.close()


def as_run_here(service: dict[str, Any], database: str, fake: FakeDiscord) -> dict[str, str]:
    """The service's settings, with the addresses only a container network has
    (postgres, Discord) pointed at this machine's test server and fake."""
    settings = {key: _VARIABLE.sub("", str(value)) for key, value in service["environment"].items()}
    settings.update(
        QUIZ_DATABASE_URL=database,
        DISCORD_TOKEN=fake.token,
        QUIZ_DISCORD_API_URL=fake.api_url,
        QUIZ_DISCORD_GATEWAY_URL=fake.gateway_url,
        QUIZ_HEALTH_PORT=str(free_port()),
        QUIZ_SLACK_HOST="127.0.0.1",
    )
    return {key: value for key, value in settings.items() if value}


async def test_each_bot_service_runs_with_its_own_settings_and_holds_its_shards(
    fake: FakeDiscord,
    tmp_path: Path,
    cluster_database: str,  # noqa: F811
) -> None:
    processes: dict[str, asyncio.subprocess.Process] = {}
    try:
        for name, service in sorted(bots().items()):
            settings = as_run_here(service, cluster_database, fake)
            folder = tmp_path / name
            folder.mkdir()
            process = await start_run(folder, bot_environment(folder, **settings))
            processes[name] = process
            health = await wait_until_connected(
                int(settings["QUIZ_HEALTH_PORT"]), "discord", process, 60
            )
            shards = parse_shard_ids(settings["QUIZ_DISCORD_SHARD_IDS"]) or []
            assert health["parts"]["discord"] == {f"shard {s}": "connected" for s in shards}
        identified = sorted(tuple(i["shard"]) for i in fake.identifies)
        assert identified == [(shard, 6) for shard in range(6)]
        assert len(fake.calls_to("PUT", r"/applications/\d+/commands")) == 1
    finally:
        for process in processes.values():
            if process.returncode is None:
                process.send_signal(signal.SIGTERM)
            _, err = await asyncio.wait_for(process.communicate(), 30)
            assert "Traceback" not in err.decode()
