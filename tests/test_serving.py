"""The two open ports against connections nobody signed: idle and slowly sent
requests are closed, a full port still answers, unsigned bodies are never read,
/healthz never waits for the write connection, and signed repeats (from any
process on the database) are answered 200 and act once."""

from __future__ import annotations

import asyncio
import contextlib
import resource
import subprocess
import sys
import time
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import aiohttp
import pytest
from aiohttp import web

from bot.app import Runtime
from bot.config import Settings
from bot.health import start_health_server
from bot.serving import EVICTIONS, MAX_CONNECTIONS, Limits, default_connections
from bot.storage.db import Database, open_database
from tests.conftest import POSTGRES_URL, SKIP_POSTGRES
from tests.fakes.fake_slack import slash_payload
from tests.test_slack import ADMIN, CHANNEL, MakeSlack, fake, make_slack

__all__ = ["fake", "make_slack"]  # fixtures used by name

QUICK = Limits(idle=0.5, request=5.0, body=0.5, linger=0.2, connections=8)


async def _always_ok() -> bool:
    return True


def _port(runner: web.AppRunner) -> int:
    address = runner.addresses[0]
    assert isinstance(address, tuple)
    return int(address[1])


@pytest.fixture
async def health() -> AsyncIterator[int]:
    runner = await start_health_server({}, _always_ok, 0, limits=QUICK)
    yield _port(runner)
    await runner.cleanup()


async def _closed_within(reader: asyncio.StreamReader, seconds: float) -> bool:
    """True if the server closes the connection within `seconds`."""
    try:
        async with asyncio.timeout(seconds):
            while await reader.read(4096):
                pass
    except TimeoutError:
        return False
    except ConnectionError:
        pass
    return True


async def test_idle_and_slowly_sent_headers_are_cut_off_at_the_idle_deadline(
    health: int,
) -> None:
    idle = await asyncio.open_connection("127.0.0.1", health)
    slow = await asyncio.open_connection("127.0.0.1", health)
    slow[1].write(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
    started = time.monotonic()

    async def trickle() -> None:
        for n in range(40):  # one header line every 0.1 s: never a complete request
            slow[1].write(f"X-{n}: y\r\n".encode())
            await asyncio.sleep(0.1)

    trickling = asyncio.create_task(trickle())
    assert await _closed_within(idle[0], 3)
    assert await _closed_within(slow[0], 3)
    assert time.monotonic() - started < 2.5  # aiohttp's default would wait an hour
    trickling.cancel()
    for _, writer in (idle, slow):
        writer.close()


async def test_a_full_port_closes_its_oldest_idle_connections_and_still_answers(
    health: int,
) -> None:
    stalled = [await asyncio.open_connection("127.0.0.1", health) for _ in range(20)]
    await asyncio.sleep(0.1)
    async with (
        aiohttp.ClientSession() as session,
        session.get(f"http://127.0.0.1:{health}/healthz") as response,
    ):
        assert response.status == 200
        assert response.headers["Server"] == "quizmaster"  # no library, no version
    closed = [await _closed_within(reader, 0.2) for reader, _ in stalled]
    assert sum(closed) >= 20 - QUICK.connections + 1
    assert closed[:10] == [True] * 10  # the oldest go first
    for _, writer in stalled:
        writer.close()


def _cap_under(soft: int, hard: int | None = None) -> tuple[int, int]:
    """The default cap a process with those descriptor limits gets, and its
    soft limit afterwards."""
    code = (
        "import resource; from bot.serving import default_connections; "
        f"resource.setrlimit(resource.RLIMIT_NOFILE, ({soft}, {hard or soft})); "
        "print(default_connections(), resource.getrlimit(resource.RLIMIT_NOFILE)[0])"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    cap, after = done.stdout.split()
    return int(cap), int(after)


def test_each_port_holds_as_many_connections_as_the_descriptors_allow() -> None:
    # Under the cap a stalled connection only waits for its deadline; over it,
    # every new one evicts another, whose sender opens it again: a churn the
    # event loop pays for (500 stalled made genuine clicks 12-32x slower at 256).
    assert _cap_under(1024) == ((1024 - 96) // 2, 1024)
    assert _cap_under(20_000) == (MAX_CONNECTIONS, 20_000)
    assert MAX_CONNECTIONS == 2048
    assert _cap_under(256) == (80, 256)  # and still leaves descriptors for the rest
    # A soft limit under a higher hard one (systemd starts services at 1,024 of
    # 524,288) is raised as far as both ports can use.
    assert _cap_under(1024, 8192) == (MAX_CONNECTIONS, 2 * MAX_CONNECTIONS + 96)
    assert _cap_under(1024, 2000) == ((2000 - 96) // 2, 2000)


async def test_five_hundred_stalled_connections_all_stay_until_their_deadline() -> None:
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if default_connections() < 520 or soft < 1400:
        pytest.skip(f"a descriptor limit of {soft} gives too few connections for this test")
    limits = Limits(idle=20.0, request=30.0, body=1.0, linger=0.2)
    runner = await start_health_server({}, _always_ok, 0, limits=limits)
    port = _port(runner)
    try:
        stalled = [await asyncio.open_connection("127.0.0.1", port) for _ in range(500)]
        for _, writer in stalled:
            writer.write(b"GET /healthz HTTP/1.1\r\n")
        async with (
            aiohttp.ClientSession() as session,
            session.get(f"http://127.0.0.1:{port}/healthz") as response,
        ):
            assert response.status == 200
        assert runner.evicted == 0
        assert not any([await _closed_within(reader, 0.01) for reader, _ in stalled])
        for _, writer in stalled:
            writer.close()
    finally:
        await runner.cleanup()


def test_the_health_port_is_private_unless_the_operator_says_otherwise(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert Settings(_env_file=None).health_host == "127.0.0.1"  # type: ignore[call-arg]
    monkeypatch.setenv("QUIZ_HEALTH_HOST", "0.0.0.0")
    assert Settings(_env_file=None).health_host == "0.0.0.0"  # type: ignore[call-arg]
    dockerfile = (Path(__file__).resolve().parent.parent / "Dockerfile").read_text()
    assert "ENV QUIZ_HEALTH_HOST=0.0.0.0" in dockerfile


async def test_the_health_server_listens_on_loopback_by_default() -> None:
    runner = await start_health_server({}, _always_ok, 0)
    try:
        address = runner.addresses[0]
        assert isinstance(address, tuple) and address[0] == "127.0.0.1"
    finally:
        await runner.cleanup()


async def test_healthz_answers_while_the_write_connection_is_busy(tmp_path: Path) -> None:
    settings = Settings(_env_file=None, data_dir=tmp_path, health_port=0)  # type: ignore[call-arg]
    async with Runtime.build(settings) as runtime:
        runner = await start_health_server({}, runtime.database_ok, 0)
        try:
            # SQLite's one write connection, taken (as by a long batch of answers).
            url = f"http://127.0.0.1:{_port(runner)}/healthz"
            async with (
                runtime.database.writer.connect(),
                aiohttp.ClientSession() as session,
                asyncio.timeout(5),
                session.get(url) as response,
            ):
                assert response.status == 200
                assert (await response.json())["database"] == "ok"
        finally:
            await runner.cleanup()


# -- the Slack port --------------------------------------------------------------------


async def _request_head(port: int, headers: dict[str, str], length: int) -> Any:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    lines = [
        "POST /slack/events HTTP/1.1",
        "Host: x",
        "Content-Type: application/x-www-form-urlencoded",
        f"Content-Length: {length}",
        *(f"{name}: {value}" for name, value in headers.items()),
    ]
    writer.write(("\r\n".join(lines) + "\r\n\r\n").encode())
    return reader, writer


async def test_an_unsigned_body_is_refused_before_it_is_sent(make_slack: MakeSlack) -> None:
    slack = await make_slack(limits=QUICK)
    port = slack.platform.port
    assert port is not None
    reader, writer = await _request_head(port, {}, 60_000)  # and then nothing
    async with asyncio.timeout(0.4):  # within the body deadline: nothing was waited for
        status = await reader.readline()
    assert status.startswith(b"HTTP/1.1 401")
    writer.close()


async def test_a_signed_looking_body_sent_slowly_is_cut_off(make_slack: MakeSlack) -> None:
    slack = await make_slack(limits=QUICK)
    port = slack.platform.port
    assert port is not None
    headers = {
        "X-Slack-Request-Timestamp": str(int(time.time())),
        "X-Slack-Signature": "v0=" + "a" * 64,
    }
    reader, writer = await _request_head(port, headers, 60_000)
    writer.write(b"payload=")  # and the rest never comes
    async with asyncio.timeout(3):
        status = await reader.readline()
    assert status.startswith(b"HTTP/1.1 408")
    writer.close()
    # Slack itself still gets in.
    assert (await slack.command("config show")).private


async def test_a_slack_retry_is_answered_200_and_does_nothing(make_slack: MakeSlack) -> None:
    slack = await make_slack()
    sender = slack.sender
    assert sender is not None
    key = uuid.uuid4().hex
    payload = slash_payload(
        "start 1 30", user=ADMIN, channel=CHANNEL, response_url=slack.fake.response_url(key)
    )
    status, _ = await sender.slash(payload, retry=1)  # freshly signed, but a resend
    assert status == 200
    await asyncio.sleep(0.5)
    assert slack.fake.questions(CHANNEL) == []
    assert slack.fake.responses_to(key) == []


@pytest.fixture
async def two_engines(_templates: Any) -> AsyncIterator[tuple[Database, Database]]:
    """Two engines on one PostgreSQL schema, as two bot processes would have
    (set up before, and closed after, the platforms that use them)."""
    if not POSTGRES_URL:
        pytest.skip(SKIP_POSTGRES)
    schema = await _templates.postgres_schema()
    made = (
        open_database(POSTGRES_URL, search_path=schema),
        open_database(POSTGRES_URL, search_path=schema),
    )
    yield made
    for database in made:
        await database.dispose()


async def test_a_request_replayed_to_a_second_process_on_postgresql_acts_once(
    two_engines: tuple[Database, Database], make_slack: MakeSlack
) -> None:
    first = await make_slack(database=two_engines[0])
    second = await make_slack(database=two_engines[1])
    assert first.sender is not None and second.sender is not None
    for attempt in range(3):  # both at once, then one after the other
        key = uuid.uuid4().hex
        body = urlencode(
            slash_payload(
                "leaderboard",
                user=ADMIN,
                channel=CHANNEL,
                response_url=first.fake.response_url(key),
            )
        ).encode()
        headers = first.sender.signed_headers(body)
        if attempt == 0:
            statuses = await asyncio.gather(
                first.sender.raw(body, headers), second.sender.raw(body, headers)
            )
        else:
            statuses = [
                await first.sender.raw(body, headers),
                await second.sender.raw(body, headers),
            ]
        assert [status for status, _ in statuses] == [200, 200]
        await first.fake.wait_for(lambda key=key: len(first.fake.responses_to(key)) >= 1)
        await asyncio.sleep(0.3)
        assert len(first.fake.responses_to(key)) == 1


async def test_a_full_port_stops_accepting_and_replaces_strangers_at_a_bounded_rate() -> None:
    # Attackers that reconnect the moment they are cut: were every newcomer
    # accepted, each would evict another and the loop would do nothing else.
    runner = await start_health_server({}, _always_ok, 0, limits=QUICK)
    port = _port(runner)
    stop = asyncio.Event()

    async def attacker() -> None:
        while not stop.is_set():
            try:
                reader, writer = await asyncio.open_connection("127.0.0.1", port)
            except OSError:
                await asyncio.sleep(0.01)
                continue
            writer.write(b"GET /healthz HTTP/1.1\\r\\n")
            with contextlib.suppress(OSError):
                await _closed_within(reader, 0.3)
            writer.close()

    async with aiohttp.ClientSession() as session:
        url = f"http://127.0.0.1:{port}/healthz"
        async with session.get(url) as response:  # a client already served
            assert response.status == 200
        attackers = [asyncio.create_task(attacker()) for _ in range(60)]
        await asyncio.sleep(0.3)
        before, started = runner.evicted, time.monotonic()
        for _ in range(10):
            async with asyncio.timeout(2), session.get(url) as response:
                assert response.status == 200  # its keep-alive connection still answers
            await asyncio.sleep(0.05)
        rate = (runner.evicted - before) / (time.monotonic() - started)
        stop.set()
        await asyncio.gather(*attackers)
    await runner.cleanup()
    assert rate <= EVICTIONS * 1.5, rate
