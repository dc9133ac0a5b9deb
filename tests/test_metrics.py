"""`GET /metrics` after a scripted quiz: each counter moved by what happened,
and no member id in any label."""

from __future__ import annotations

from prometheus_client.parser import text_string_to_metric_families

from bot.chat import DeliveryError, Interaction, OutMessage, Target
from bot.quiz.service import QuizService
from tests.conftest import CHANNEL, OTHER_CHANNEL, Host
from tests.dashboard_helpers import web_client

Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


async def scrape(host: Host) -> Samples:
    async with web_client(host.service, None) as client:
        response = await client.get("/metrics")
        assert response.status == 200
        assert response.headers["Content-Type"].startswith("text/plain")
        text = await response.text()
    samples: Samples = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            samples[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return samples


def value(samples: Samples, name: str, **labels: str) -> float:
    return samples.get((name, tuple(sorted(labels.items()))), 0.0)


async def test_counters_follow_a_scripted_quiz(host: Host) -> None:
    before = await scrape(host)
    assert value(before, "quizmaster_platform_connected", platform="test") == 1.0

    await host.start(CHANNEL, questions=2, seconds=10)
    await host.answer("ada", correct=True)
    await host.answer("bob", correct=False)
    await host.click("ada", "A")  # a repeat click: handled, not stored again
    await host.close_current()
    await host.answer("ada", correct=True)
    # An answer to something unknown is a click that stores nothing.
    await host.service.handle_click(Interaction(CHANNEL, "cy", "qm:a:999999:0"))
    await host.command("schedule", action="daily", time="09:00")
    await host.command("leaderboard", user="viewer", moderator=False)
    await host.command("bogus-word", user="viewer", moderator=False)

    during = await scrape(host)
    assert value(during, "quizmaster_open_questions") == 1.0
    assert value(during, "quizmaster_schedules", kind="daily") == 1.0
    assert value(during, "quizmaster_schedules", kind="leaderboard") == 0.0

    await host.close_current()  # the second deadline: the quiz ends, the scoreboard goes up
    after = await scrape(host)

    assert value(after, "quizmaster_clicks_total", platform="test") == 5
    assert value(after, "quizmaster_answers_stored_total", platform="test") == 3
    assert value(after, "quizmaster_commands_total", platform="test", command="start") == 1
    assert value(after, "quizmaster_commands_total", platform="test", command="schedule") == 1
    assert value(after, "quizmaster_commands_total", platform="test", command="leaderboard") == 1
    assert value(after, "quizmaster_commands_total", platform="test", command="unknown") == 1
    # Two questions and the scoreboard posted; two reveals edited.
    assert value(after, "quizmaster_posts_total", platform="test") == 3
    assert value(after, "quizmaster_edits_total", platform="test") == 2
    assert value(after, "quizmaster_open_questions") == 0.0
    # Both questions closed on their deadline, right on time by the fake clock.
    assert value(after, "quizmaster_timer_lag_seconds_count", job="close") == 2
    assert value(after, "quizmaster_timer_lag_seconds_sum", job="close") == 0.0
    # Each click on a known question was one timed batch (one at a time here),
    # the repeat click included; the unknown question never reached the writer.
    assert value(after, "quizmaster_answer_write_seconds_count") == 4
    assert value(after, "quizmaster_answer_batch_size_sum") == 4
    # No label anywhere names a member.
    for _, labels in after:
        assert all(v not in ("ada", "bob", "cy", "viewer", "mod") for _, v in labels)


async def test_delivery_errors_are_counted_by_kind(host: Host) -> None:
    host.adapter.failing_channels.add(OTHER_CHANNEL.channel)  # refuses: permanent
    await host.command("start", OTHER_CHANNEL, questions=1, seconds=10)

    faults = [
        DeliveryError("rate limited", rate_limited=True),
        DeliveryError("502 from the platform"),
    ]

    def fault(_target: Target, _message: OutMessage) -> Exception | None:
        return faults.pop(0) if faults else None

    host.adapter.send_fault = fault
    await host.command("start", CHANNEL, questions=1, seconds=10)  # first try: 429
    host.clock.advance(60)
    await host.service.tick()  # the retry: a passing failure
    host.clock.advance(60)
    await host.service.tick()  # the next one posts

    samples = await scrape(host)
    assert (
        value(samples, "quizmaster_delivery_errors_total", platform="test", kind="permanent") == 1
    )
    assert value(samples, "quizmaster_delivery_errors_total", platform="test", kind="429") == 1
    assert (
        value(samples, "quizmaster_delivery_errors_total", platform="test", kind="transient") == 1
    )
    assert value(samples, "quizmaster_posts_total", platform="test") == 1


async def test_a_platform_that_drops_shows_as_disconnected(host: Host) -> None:
    host.adapter.connected_now = False
    samples = await scrape(host)
    assert value(samples, "quizmaster_platform_connected", platform="test") == 0.0


async def test_two_services_count_apart(host: Host) -> None:
    other = QuizService(host.service.repository, host.catalog, host.clock)
    await host.start(CHANNEL, questions=1, seconds=10)
    assert (
        other.metrics.registry.get_sample_value(
            "quizmaster_commands_total", {"platform": "test", "command": "start"}
        )
        is None
    )
    assert (
        host.service.metrics.registry.get_sample_value(
            "quizmaster_commands_total", {"platform": "test", "command": "start"}
        )
        == 1.0
    )
