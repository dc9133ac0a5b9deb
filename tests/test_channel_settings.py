"""Channel settings (`/quiz config`), moderator checks, mentions off, and what
happens when a platform refuses to post in a channel."""

from __future__ import annotations

import pytest

from bot.chat import Command, Target
from bot.config import Settings
from bot.quiz.service import QuizService
from bot.quiz.surface.grammar import UsageError, parse
from tests.conftest import CHANNEL, OTHER_CHANNEL, Host
from tests.fakes.recording import RecordingAdapter


async def test_config_show_lists_the_defaults(host: Host) -> None:
    reply = await host.command("config")
    assert "Moderator role/group: none (admins only)" in reply.text
    assert "Mentions in channel posts: on" in reply.text
    assert "Time zone: UTC" in reply.text


async def test_config_set_saves_per_channel(host: Host) -> None:
    reply = await host.command("config", key="timezone", value="Europe/Berlin")
    assert "Time zone: Europe/Berlin" in reply.text
    assert "Time zone: Europe/Berlin" in (await host.command("config")).text
    assert "Time zone: UTC" in (await host.command("config", OTHER_CHANNEL)).text


async def test_config_refuses_bad_values_and_keeps_the_old_ones(host: Host) -> None:
    unknown_zone = await host.command("config", key="timezone", value="Mars/Olympus")
    assert "not a time zone I know" in unknown_zone.text
    bad_switch = await host.command("config", key="mentions", value="sometimes")
    assert "mentions must be `on` or `off`" in bad_switch.text
    unknown_key = await host.command("config", key="colour", value="blue")
    assert "There is no setting `colour`" in unknown_key.text
    no_value = await host.command("config", key="mentions")
    assert "needs a value" in no_value.text
    shown = (await host.command("config")).text
    assert "Time zone: UTC" in shown
    assert "Mentions in channel posts: on" in shown


async def test_members_cannot_change_settings(host: Host) -> None:
    reply = await host.command(
        "config", user="member", moderator=False, key="mentions", value="off"
    )
    assert reply.text.startswith("Only moderators can change channel settings")
    assert "Mentions in channel posts: on" in (await host.command("config")).text


async def test_the_moderator_role_is_passed_to_the_platform_check(host: Host) -> None:
    await host.command("config", key="moderator-role", value="@Quiz Hosts")
    asked: list[str | None] = []

    async def holds(role: str | None) -> bool:
        asked.append(role)
        return role == "Quiz Hosts"

    reply = await host.service.handle_command(
        Command("start", CHANNEL, "helper", args={"questions": "1"}, moderator_check=holds)
    )
    assert reply.text.startswith("Starting a quiz")
    assert asked == ["Quiz Hosts"]

    async def lacks(role: str | None) -> bool:
        return False

    refused = await host.service.handle_command(
        Command("stop", CHANNEL, "x", moderator_check=lacks)
    )
    assert "members of `Quiz Hosts`" in refused.text
    assert len(host.adapter.questions(CHANNEL)) == 1


async def test_the_moderator_role_can_be_cleared(host: Host) -> None:
    await host.command("config", key="moderator-role", value="Hosts")
    reply = await host.command("config", key="moderator-role", value="none")
    assert "Moderator role/group: none (admins only)" in reply.text


async def test_mentions_off_names_members_without_pinging(host: Host) -> None:
    await host.command("config", key="mentions", value="off")
    await host.start(questions=1, seconds=30)
    await host.answer("u1", correct=True)
    await host.close_current()
    reveal = host.current().latest.text
    assert "First correct: Member u1" in reveal
    scoreboard = host.adapter.in_channel(CHANNEL)[-1].message.text
    assert "Member u1" in scoreboard
    assert "<@" not in reveal + scoreboard
    board = await host.command("leaderboard", user="viewer", moderator=False, period="all")
    assert board.public
    assert "Member u1" in board.text and "<@" not in board.text


async def test_mentions_on_by_default(host: Host) -> None:
    await host.start(questions=1, seconds=30)
    await host.answer("u1", correct=True)
    await host.close_current()
    assert "First correct: <@u1>" in host.current().latest.text


async def test_a_refused_post_tells_the_moderator_and_is_remembered(host: Host) -> None:
    host.adapter.failing_channels.add(CHANNEL.channel)
    reply = await host.command("start", questions=2)
    assert reply.text.startswith("I can't post in this channel (cannot post in chan-1)")
    shown = (await host.command("config")).text
    assert "My last post here failed: cannot post in chan-1" in shown
    # Other channels carry on.
    await host.start(OTHER_CHANNEL, questions=1)
    assert len(host.adapter.questions(OTHER_CHANNEL)) == 1

    host.adapter.failing_channels.clear()
    await host.start(questions=1)
    assert "failed" not in (await host.command("config")).text


async def test_timers_wait_for_a_platform_that_is_not_connected(
    host: Host, service: QuizService, adapter: RecordingAdapter
) -> None:
    await host.start(questions=2, seconds=30)
    host.adapter.connected_now = False
    await host.close_current()
    assert host.current().edits == []  # not closed while the platform is away
    host.adapter.connected_now = True
    await service.tick()
    assert "(closed)" in host.adapter.questions(CHANNEL)[0].latest.text
    assert len(host.adapter.questions(CHANNEL)) == 2


def test_config_text_commands_parse() -> None:
    assert parse("config").args == {}
    assert parse("config show").args == {}
    assert parse("config set mentions off").args == {"key": "mentions", "value": "off"}
    assert parse("config set moderator-group quiz hosts").args == {
        "key": "moderator-group",
        "value": "quiz hosts",
    }
    with pytest.raises(UsageError):
        parse("config delete mentions")


def test_comma_list_settings_and_the_slack_api_base() -> None:
    settings = Settings(
        QUIZ_DISCORD_GUILD_IDS="123, 456",
        QUIZ_SLACK_MODERATORS="U1,U2",
        QUIZ_SLACK_API_URL="http://127.0.0.1:9000/api",
    )
    assert settings.discord_guild_ids == [123, 456]
    assert settings.slack_moderators == ["U1", "U2"]
    assert settings.slack_api_url == "http://127.0.0.1:9000/api/"


async def test_settings_stay_right_in_more_channels_than_are_kept_in_memory(host: Host) -> None:
    host.service.channels.cache.size = 3
    zones = ["Europe/Berlin", "Asia/Tokyo", "America/Chicago", "Europe/Paris", "Asia/Kolkata"]
    targets = [Target("test", "guild-1", f"chan-{n}") for n in range(len(zones))]
    for target, zone in zip(targets, zones, strict=True):
        await host.command("config", target, key="timezone", value=zone)
    for target, zone in zip(targets, zones, strict=True):
        assert f"Time zone: {zone}" in (await host.command("config", target)).text
    # A channel dropped from memory and changed again keeps its newest setting.
    await host.command("config", targets[0], key="mentions", value="off")
    for target in targets[1:]:
        await host.command("config", target)
    shown = (await host.command("config", targets[0])).text
    assert "Mentions in channel posts: off" in shown and "Time zone: Europe/Berlin" in shown
    assert len(host.service.channels.cache) == 3
