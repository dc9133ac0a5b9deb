"""The dashboard's signed links: who a token lets in, and for how long."""

from __future__ import annotations

import base64
import json
from datetime import timedelta
from pathlib import Path

import pytest
from pydantic import ValidationError

from bot.app import Runtime
from bot.chat import Target
from bot.config import Settings, describe_errors
from bot.web.links import DashboardLinks
from bot.web.tokens import Signer
from tests.fakes.clock import FakeClock

SECRET = "correct horse battery staple"


@pytest.fixture
def signer(clock: FakeClock) -> Signer:
    return Signer(SECRET, clock)


def test_a_token_opens_its_own_community_for_24_hours(signer: Signer, clock: FakeClock) -> None:
    token = signer.sign("discord", "guild-1")
    grant = signer.verify(token, "discord", "guild-1")
    assert grant is not None and grant.member is None
    assert grant.expires == clock.now() + timedelta(hours=24)

    clock.advance(24 * 3600 - 1)
    assert signer.verify(token, "discord", "guild-1") is not None
    clock.advance(1)
    assert signer.verify(token, "discord", "guild-1") is None


def test_a_member_token_names_the_member(signer: Signer) -> None:
    grant = signer.verify(signer.sign("slack", "T1", "U42"), "slack", "T1")
    assert grant is not None and grant.member == "U42"


def test_another_community_or_platform_is_refused(signer: Signer) -> None:
    token = signer.sign("discord", "guild-1")
    assert signer.verify(token, "discord", "guild-2") is None
    assert signer.verify(token, "slack", "guild-1") is None


def test_tampering_is_refused(signer: Signer) -> None:
    token = signer.sign("discord", "guild-1", "member-1")
    body, signature = token.split(".")
    # The payload rewritten to another community, the signature kept.
    payload = json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
    payload["c"] = "guild-2"
    forged = base64.urlsafe_b64encode(json.dumps(payload).encode()).rstrip(b"=").decode()
    assert signer.verify(f"{forged}.{signature}", "discord", "guild-2") is None
    # A longer life, the signature kept.
    payload = {**json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))}
    payload["e"] += 10**6
    longer = base64.urlsafe_b64encode(json.dumps(payload).encode()).rstrip(b"=").decode()
    assert signer.verify(f"{longer}.{signature}", "discord", "guild-1") is None
    # One character of the signature changed.
    flipped = signature[:-1] + ("A" if signature[-1] != "A" else "B")
    assert signer.verify(f"{body}.{flipped}", "discord", "guild-1") is None


@pytest.mark.parametrize(
    "token", [None, "", "no-dot", "a.b.c", ".", "x" * 5000, "!!!.???", "e30.AAAA"]
)
def test_garbage_is_refused_without_an_error(signer: Signer, token: str | None) -> None:
    assert signer.verify(token, "discord", "guild-1") is None


def test_a_token_signed_with_another_secret_is_refused(signer: Signer, clock: FakeClock) -> None:
    other = Signer("another secret entirely, also long", clock)
    assert signer.verify(other.sign("discord", "guild-1"), "discord", "guild-1") is None


def test_links_use_the_public_url_and_quote_the_ids(signer: Signer) -> None:
    links = DashboardLinks(signer, "https://quiz.example.org/")
    target = Target("slack", "T 1/x", "C1")
    url = links.community(target)
    assert url.startswith("https://quiz.example.org/dashboard/slack/T%201%2Fx?t=")
    assert links.member(target, "U1").startswith(
        "https://quiz.example.org/dashboard/slack/T%201%2Fx/me?t="
    )
    assert links.hours == 24


async def test_the_secret_setting_turns_the_dashboard_on_and_is_never_shown(
    tmp_path: Path,
) -> None:
    secret = "s3cret-value-for-the-dashboard"
    settings = Settings(  # type: ignore[call-arg]
        _env_file=None, QUIZ_WEB_SECRET=secret, QUIZ_DATA_DIR=str(tmp_path), QUIZ_HEALTH_PORT="9090"
    )
    assert secret not in repr(settings) and secret not in str(settings.model_dump())
    runtime = Runtime.build(settings)
    assert runtime.links is not None
    assert runtime.links.community(Target("slack", "T1", "C1")).startswith(
        "http://localhost:9090/dashboard/slack/T1?t="
    )
    assert runtime.service.commands.links is runtime.links
    await runtime.database.dispose()
    public = Settings(  # type: ignore[call-arg]
        _env_file=None,
        QUIZ_WEB_SECRET=secret,
        QUIZ_PUBLIC_URL="https://quiz.example.org/",
        QUIZ_DATA_DIR=str(tmp_path),
    )
    behind_proxy = Runtime.build(public)
    assert behind_proxy.links is not None
    assert behind_proxy.links.public_url == "https://quiz.example.org"
    await behind_proxy.database.dispose()
    off = Runtime.build(Settings(_env_file=None, QUIZ_DATA_DIR=str(tmp_path)))  # type: ignore[call-arg]
    assert off.links is None and off.service.commands.links is None
    await off.database.dispose()


def test_a_short_secret_or_a_bad_public_url_stops_start_up_naming_the_setting() -> None:
    with pytest.raises(ValidationError) as caught:
        Settings(_env_file=None, QUIZ_WEB_SECRET="short-one", QUIZ_PUBLIC_URL="quiz.example.org")  # type: ignore[call-arg]
    lines = describe_errors(caught.value)
    assert any(line.startswith("QUIZ_WEB_SECRET: ") and "16 characters" in line for line in lines)
    assert any(line.startswith("QUIZ_PUBLIC_URL: ") for line in lines)
    assert not any("short-one" in line for line in lines)


def test_a_token_claiming_a_long_life_is_refused_whatever_it_says(
    signer: Signer, clock: FakeClock
) -> None:
    # Signed with the right secret (as by someone who guessed it, or an older
    # release), but saying it lasts until 2100 or past any date.
    for expires in (4_102_444_800, 10**20, int(clock.now().timestamp()) + 24 * 3600 + 60):
        body = base64.urlsafe_b64encode(
            json.dumps({"c": "guild-1", "e": expires, "p": "discord"}).encode()
        )
        text = body.rstrip(b"=").decode()
        token = f"{text}.{signer._signature(text)}"
        assert signer.verify(token, "discord", "guild-1") is None


@pytest.mark.parametrize(
    "weak", [" " * 16, "a" * 16, "abababababababab", "0123456789012345", "password12345678"]
)
def test_a_guessable_secret_stops_start_up_saying_how_to_make_one(weak: str) -> None:
    with pytest.raises(ValidationError) as caught:
        Settings(_env_file=None, QUIZ_WEB_SECRET=weak)  # type: ignore[call-arg]
    (line,) = describe_errors(caught.value)
    assert line.startswith("QUIZ_WEB_SECRET: ") and "secrets.token_urlsafe" in line
    assert weak not in line


def test_a_generated_secret_is_accepted() -> None:
    import secrets

    for _ in range(20):
        made = secrets.token_urlsafe(32)
        settings = Settings(_env_file=None, QUIZ_WEB_SECRET=made)  # type: ignore[call-arg]
        assert settings.web_secret is not None
