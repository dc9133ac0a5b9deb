"""Scheduled daily questions, streaks and weekly leaderboard posts, driven
through the service with an injected clock: days, daylight saving, downtime,
two processes, many channels and bad input. No test here sleeps."""

from __future__ import annotations

import asyncio
import random
import re
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from bot.chat import Target
from bot.quiz.scheduler import CONCURRENT_POSTS, DAILY
from bot.quiz.service import QuizService
from bot.quiz.surface.grammar import UsageError, parse
from bot.storage.db import check_read_models
from tests.conftest import CHANNEL, OTHER_CHANNEL, Host, restart, run_until

BERLIN = ZoneInfo("Europe/Berlin")
NEW_YORK = ZoneInfo("America/New_York")


def at(text: str) -> datetime:
    """A UTC moment written as "2026-03-02 09:00"."""
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


async def schedule(host: Host, target: Target = CHANNEL, **args: str) -> str:
    return (await host.command("schedule", target, options=args)).text


async def answer_daily(host: Host, user: str, *, correct: bool, target: Target = CHANNEL) -> str:
    letter = host.correct_letter(target) if correct else host.wrong_letter(target)
    return (await host.click(user, letter, target)).text


def shows(reply: str, line: str) -> bool:
    """Whether a private reply has this line (a review nudge may follow the streak)."""
    return line in reply.splitlines()


# -- commands -------------------------------------------------------------------------


async def test_a_moderator_schedules_a_daily_question_and_everyone_can_see_it(host: Host) -> None:
    saved = await schedule(
        host, action="daily", time="9:30", timezone="Europe/Berlin", days="mon-fri"
    )
    # The clock stands at Monday 2026-03-02 09:00 UTC = 10:00 in Berlin: 09:30 has passed.
    assert saved.startswith("Daily question scheduled: daily 09:30 Europe/Berlin mon-fri")
    assert "(next: Tue 03 Mar 09:30 CET)" in saved

    await schedule(host, action="leaderboard", day="monday", time="08:00")
    shown = (await host.command("schedule", user="member", moderator=False)).text
    assert "• daily 09:30 Europe/Berlin mon-fri (next: Tue 03 Mar 09:30 CET)" in shown
    assert "• leaderboard mon 08:00 UTC (next: Mon 09 Mar 08:00 UTC)" in shown
    assert "24 h at most" in shown
    other = (await host.command("schedule", OTHER_CHANNEL, action="show")).text
    assert "Nothing is scheduled here" in other


async def test_the_channel_time_zone_is_the_default(host: Host) -> None:
    await host.command("config", key="timezone", value="America/New_York")
    saved = await schedule(host, action="daily", time="08:00")
    assert "daily 08:00 America/New_York every day (next: Mon 02 Mar 08:00 EST)" in saved


async def test_members_cannot_change_schedules(host: Host) -> None:
    refused = await host.command(
        "schedule", user="member", moderator=False, options={"action": "daily", "time": "09:00"}
    )
    assert refused.text.startswith("Only moderators can change the schedule")
    off = await host.command("schedule", user="member", moderator=False, options={"action": "off"})
    assert off.text.startswith("Only moderators")
    assert "Nothing is scheduled here" in (await host.command("schedule")).text


@pytest.mark.parametrize(
    ("args", "problem"),
    [
        ({"action": "daily", "time": "25:00"}, "25:00 is not a time of day"),
        ({"action": "daily", "time": "9am"}, "9am is not a time of day"),
        ({"action": "daily"}, "needs a time like 09:00"),
        (
            {"action": "daily", "time": "09:00", "timezone": "Mars/Olympus"},
            "Mars/Olympus is not a time zone",
        ),
        ({"action": "daily", "time": "09:00", "days": "mon-xyz"}, "mon-xyz"),
        ({"action": "leaderboard", "day": "someday", "time": "09:00"}, "someday"),
        ({"action": "off", "which": "weekly"}, "`weekly` is not a schedule"),
    ],
)
async def test_bad_schedules_are_refused_privately_and_change_nothing(
    host: Host, args: dict[str, str], problem: str
) -> None:
    await schedule(host, action="daily", time="07:00")
    reply = await host.command("schedule", options=args)
    assert problem in reply.text
    assert "Nothing was changed" in reply.text
    assert not reply.public
    shown = (await host.command("schedule")).text
    assert "daily 07:00 UTC every day" in shown
    assert "leaderboard" not in shown


async def test_a_daily_schedule_needs_questions_to_draw_from(host: Host) -> None:
    unknown = await schedule(host, action="daily", time="09:00", bank="no-such-bank")
    assert "There is no bank `no-such-bank`" in unknown
    empty = await schedule(host, action="daily", time="09:00", tag="no-such-tag")
    assert "No questions match tag `no-such-tag`" in empty
    assert "Nothing is scheduled here" in (await host.command("schedule")).text


async def test_turning_schedules_off(host: Host) -> None:
    await schedule(host, action="daily", time="09:00")
    await schedule(host, action="leaderboard", day="fri", time="17:00")
    assert "Turned off the daily question schedule" in await schedule(
        host, action="off", which="daily"
    )
    assert "leaderboard fri 17:00" in (await host.command("schedule")).text
    assert "Turned off the daily question and weekly leaderboard" in await schedule(
        host, action="off"
    )
    assert "Nothing to turn off" in await schedule(host, action="off")
    assert await run_until(host, at("2026-03-10 00:00")) == []


@pytest.mark.parametrize(
    ("key", "value", "problem"),
    [
        ("daily-window", "0", "daily-window (hours) must be between 1 and 168"),
        ("daily-window", "a day", "daily-window (hours) must be a whole number"),
        ("grace", "2000", "grace (minutes) must be between 0 and 1440"),
    ],
)
async def test_bad_window_and_grace_settings_are_refused(
    host: Host, key: str, value: str, problem: str
) -> None:
    assert problem in (await host.command("config", key=key, value=value)).text
    shown = (await host.command("config")).text
    assert "Daily question open for: 24 h at most" in shown
    assert "Grace for missed posts: 120 min" in shown


def test_schedule_commands_typed_as_text() -> None:
    assert parse("schedule daily 09:00 Europe/Berlin mon-fri bank=pytorch tag=ddp").args == {
        "action": "daily",
        "time": "09:00",
        "timezone": "Europe/Berlin",
        "days": "mon-fri",
        "bank": "pytorch",
        "tag": "ddp",
    }
    assert parse("schedule daily 7:30 mon,wed,fri").args == {
        "action": "daily",
        "time": "7:30",
        "days": "mon,wed,fri",
    }
    assert parse("schedule leaderboard mon 09:00 UTC").args == {
        "action": "leaderboard",
        "day": "mon",
        "time": "09:00",
        "timezone": "UTC",
    }
    assert parse("schedule").args == {"action": "show"}
    assert parse("schedule off daily").args == {"action": "off", "which": "daily"}
    assert parse("leaderboard streaks").args == {"period": "streaks"}
    for bad in (
        "schedule daily",
        "schedule weekly 09:00",
        "schedule leaderboard mon",
        "schedule off a b",
    ):
        with pytest.raises(UsageError):
            parse(bad)


# -- when posts go out ------------------------------------------------------------------


async def test_daily_questions_go_out_on_the_chosen_days_only(host: Host) -> None:
    await schedule(host, action="daily", time="09:00", timezone="Europe/Berlin", days="mon,wed-fri")
    posted = await run_until(host, at("2026-03-16 00:00"))
    local = [when.astimezone(BERLIN) for when, _ in posted]
    assert [day.strftime("%a %d") for day in local] == [
        "Wed 04",
        "Thu 05",
        "Fri 06",
        "Mon 09",
        "Wed 11",
        "Thu 12",
        "Fri 13",
    ]
    assert {day.strftime("%H:%M") for day in local} == {"09:00"}
    assert all("Question of the day" in (sent.message.title or "") for _, sent in posted)


@pytest.mark.parametrize(
    ("zone", "time", "start", "end", "expected"),
    [
        # A 09:00 post stays at 09:00 local as the clocks change.
        (
            "Europe/Berlin",
            "09:00",
            "2026-03-27 12:00",
            "2026-03-30 12:00",
            ["2026-03-28 08:00", "2026-03-29 07:00", "2026-03-30 07:00"],
        ),
        (
            "Europe/Berlin",
            "09:00",
            "2026-10-23 12:00",
            "2026-10-26 12:00",
            ["2026-10-24 07:00", "2026-10-25 08:00", "2026-10-26 08:00"],
        ),
        (
            "America/New_York",
            "09:00",
            "2026-03-06 18:00",
            "2026-03-09 18:00",
            ["2026-03-07 14:00", "2026-03-08 13:00", "2026-03-09 13:00"],
        ),
        (
            "America/New_York",
            "09:00",
            "2026-10-30 18:00",
            "2026-11-02 18:00",
            ["2026-10-31 13:00", "2026-11-01 14:00", "2026-11-02 14:00"],
        ),
        # 02:30 does not exist on the spring-forward night: it moves to 03:00.
        (
            "Europe/Berlin",
            "02:30",
            "2026-03-27 12:00",
            "2026-03-30 12:00",
            ["2026-03-28 01:30", "2026-03-29 01:00", "2026-03-30 00:30"],
        ),
        (
            "America/New_York",
            "02:30",
            "2026-03-06 18:00",
            "2026-03-09 18:00",
            ["2026-03-07 07:30", "2026-03-08 07:00", "2026-03-09 06:30"],
        ),
        # 02:30 and 01:30 happen twice on the fall-back night: one post, at the first.
        (
            "Europe/Berlin",
            "02:30",
            "2026-10-23 12:00",
            "2026-10-26 12:00",
            ["2026-10-24 00:30", "2026-10-25 00:30", "2026-10-26 01:30"],
        ),
        (
            "America/New_York",
            "01:30",
            "2026-10-30 18:00",
            "2026-11-02 18:00",
            ["2026-10-31 05:30", "2026-11-01 05:30", "2026-11-02 06:30"],
        ),
    ],
)
async def test_daylight_saving_changes(
    host: Host, zone: str, time: str, start: str, end: str, expected: list[str]
) -> None:
    host.clock.set(at(start))
    await schedule(host, action="daily", time=time, timezone=zone)
    posted = await run_until(host, at(end))
    assert [when for when, _ in posted] == [at(moment) for moment in expected]


async def test_the_next_daily_question_closes_and_reveals_the_previous_one(host: Host) -> None:
    await schedule(host, action="daily", time="10:00")
    [(_, first)] = await run_until(host, at("2026-03-02 12:00"))
    assert first.edits == []
    await answer_daily(host, "ana", correct=True)
    await run_until(host, at("2026-03-03 10:00"))
    [reveal] = first.edits
    assert all(button.disabled for button in reveal.buttons if button.custom_id.startswith("qm:a:"))
    assert "1 answer. First correct: <@ana>" in reveal.text
    assert "Daily streaks:\n🔥 <@ana>: 1 day" in reveal.text
    late = await host.click_on(first, "bo", host.correct_letter(sent=first))
    assert "This question has closed" in late.text


async def test_a_daily_question_closes_after_its_window(host: Host) -> None:
    await host.command("config", key="daily-window", value="2")
    await schedule(host, action="daily", time="10:00")
    [(_, first)] = await run_until(host, at("2026-03-02 10:30"))
    assert not first.edits
    await run_until(host, at("2026-03-02 12:00"))
    assert first.edits, "closed and revealed two hours after posting"
    assert "Nobody got it right." in first.edits[0].text


# -- streaks ---------------------------------------------------------------------------


async def test_streaks_count_right_answers_in_a_row(host: Host) -> None:
    await schedule(host, action="daily", time="10:00")

    async def day(date: str) -> None:
        await run_until(host, at(f"{date} 10:00"))

    await day("2026-03-02")
    assert shows((await answer_daily(host, "ana", correct=True)), "🔥 1-day streak")
    await day("2026-03-03")
    assert shows((await answer_daily(host, "ana", correct=True)), "🔥 2-day streak")
    await day("2026-03-04")
    wrong = await answer_daily(host, "ana", correct=False)
    assert wrong.startswith("❌") and "streak starts again" in wrong
    await day("2026-03-05")
    assert shows((await answer_daily(host, "ana", correct=True)), "🔥 1-day streak")
    await day("2026-03-06")  # ana misses this one
    await day("2026-03-07")
    assert shows((await answer_daily(host, "ana", correct=True)), "🔥 1-day streak")

    stats = (await host.command("stats", user="ana", moderator=False)).text
    assert "Daily streak: 1 (best here 2, best in this community 2)" in stats


async def test_days_without_a_post_never_break_a_streak(host: Host) -> None:
    await schedule(host, action="daily", time="10:00", days="mon,wed,fri")
    replies = []
    for date in ("2026-03-02", "2026-03-04", "2026-03-06", "2026-03-09"):
        await run_until(host, at(f"{date} 10:00"))
        replies.append(await answer_daily(host, "ana", correct=True))
    assert [reply.splitlines()[-1] for reply in replies] == [
        "🔥 1-day streak",
        "🔥 2-day streak",
        "🔥 3-day streak",
        "🔥 4-day streak",
    ]


async def test_the_streak_leaderboard_and_best_streak_anywhere(host: Host) -> None:
    await schedule(host, action="daily", time="10:00")
    await schedule(host, OTHER_CHANNEL, action="daily", time="10:00")
    for date in ("2026-03-02", "2026-03-03", "2026-03-04"):
        await run_until(host, at(f"{date} 10:00"))
        await answer_daily(host, "ana", correct=True)
        await answer_daily(host, "bo", correct=date != "2026-03-03")
        await answer_daily(host, "cy", correct=True, target=OTHER_CHANNEL)
    await run_until(host, at("2026-03-05 10:00"))

    board = await host.command("leaderboard", user="viewer", moderator=False, period="streaks")
    assert board.public
    assert board.text.splitlines()[1:] == [
        "1. <@ana>: 3 days (best 3)",
        "2. <@bo>: 1 day (best 1)",
    ]
    stats = (await host.command("stats", OTHER_CHANNEL, user="ana", moderator=False)).text
    assert "Daily streak: 0 (best here 0, best in this community 3)" in stats


# -- downtime, restarts, two processes ------------------------------------------------------


@pytest.mark.parametrize(("down_hours", "posted_late"), [(1, True), (5, False)])
async def test_a_post_missed_during_downtime(
    host: Host, down_hours: int, posted_late: bool
) -> None:
    await schedule(host, action="daily", time="10:00")
    await run_until(host, at("2026-03-02 10:00"))
    await answer_daily(host, "ana", correct=True)
    # The bot is down from 09:30 on Tuesday; a new process comes up later.
    host.clock.set(at("2026-03-03 10:00") + timedelta(hours=down_hours))
    after = restart(host, seed=5)
    await asyncio.gather(after.service.tick(), after.service.tick())
    await after.service.tick()
    assert len(after.adapter.questions(CHANNEL)) == (1 if posted_late else 0)
    shown = (await after.command("schedule")).text
    assert "(next: Wed 04 Mar 10:00 UTC)" in shown

    # Either way the outage does not cost ana her streak.
    await run_until(after, at("2026-03-04 10:00"))
    reply = await answer_daily(after, "ana", correct=True)
    assert shows(reply, "🔥 2-day streak" if not posted_late else "🔥 1-day streak")


async def test_the_grace_window_is_a_channel_setting(host: Host) -> None:
    await host.command("config", key="grace", value="0")
    await schedule(host, action="daily", time="10:00")
    host.clock.set(at("2026-03-02 10:01"))
    assert await run_until(host, at("2026-03-02 12:00")) == []


async def test_two_processes_on_one_database_post_each_daily_question_once(host: Host) -> None:
    targets = [Target("test", "guild-1", f"chan-{n}") for n in range(20)]
    for target in targets:
        await schedule(host, target, action="daily", time="10:00")
    # A second process on the same database and the same platform (the
    # recording adapter stands for the platform both post to).
    second = QuizService(host.service.repository, host.catalog, host.clock, rng=random.Random(9))
    second.register(host.adapter)
    other = Host(second, host.adapter, host.catalog, host.clock)
    host.clock.set(at("2026-03-02 10:00"))
    await asyncio.gather(*(side.service.tick() for side in (host, other, host, other)))
    assert [len(host.adapter.questions(target)) for target in targets] == [1] * 20

    # A click handled by either process counts, and the close happens once.
    first = targets[0]
    sent = host.adapter.last_question(first)
    right = host.correct_letter(first)
    for side, user in ((host, "ana"), (other, "bo")):
        reply = await side.click_on(sent, user, right)
        assert shows(reply.text, "🔥 1-day streak"), reply.text
    host.clock.set(at("2026-03-03 10:00"))
    await asyncio.gather(host.service.tick(), other.service.tick())
    [reveal] = host.adapter.edits_of(sent.message_id)
    assert "2 answers" in reveal.text
    assert [len(host.adapter.questions(target)) for target in targets] == [2] * 20
    # Both processes ran the close; its answers were counted once.
    assert await host.leaderboard(first, period="all") == [("ana", 10), ("bo", 10)]
    assert await check_read_models(host.service.repository.database.writer) == ([], 0)


async def schedule_daily_at(host: Host, targets: list[Target], fire: datetime) -> None:
    """A daily question at 10:00 UTC in each channel, next due at `fire`
    (straight into storage: hundreds of commands would only slow the test)."""
    repository = host.service.repository
    for target in targets:
        channel = await repository.channels.channel(target, host.clock.now())
        await repository.schedules.set_schedule(
            channel.id,
            DAILY,
            at_time="10:00",
            zone="UTC",
            days=list(range(7)),
            bank=None,
            tag=None,
            next_fire=fire,
            created_by="mod",
            now=host.clock.now(),
        )


async def test_500_channels_due_at_the_same_minute_are_each_posted_once(host: Host) -> None:
    targets = [Target("test", f"guild-{n % 7}", f"c{n}") for n in range(500)]
    fire = at("2026-03-02 10:00")
    await schedule_daily_at(host, targets, fire)
    host.adapter.failing_channels = {"c13"}
    host.clock.set(fire + timedelta(seconds=20))
    await host.service.tick()
    await host.service.tick()
    counts = {target.channel: len(host.adapter.questions(target)) for target in targets}
    assert counts.pop("c13") == 0
    assert set(counts.values()) == {1}


async def test_a_big_fan_out_posts_while_later_schedules_wait_unclaimed(host: Host) -> None:
    # More channels than posts in flight at once, and than one page of due schedules.
    targets = [Target("test", "guild-1", f"c{n}") for n in range(120)]
    fire = at("2026-03-02 10:00")
    await schedule_daily_at(host, targets, fire)
    host.clock.set(fire + timedelta(seconds=5))
    adapter = host.adapter
    gate = adapter.send_gate = asyncio.Event()
    ticking = asyncio.create_task(host.service.tick())
    async with asyncio.timeout(60):  # a safety net, not a measurement
        while adapter.held_sends < CONCURRENT_POSTS:
            await adapter.more_held.wait()
            adapter.more_held.clear()
    # Posts are on their way while most schedules are not even claimed: the
    # platform is never kept waiting for the whole due set's database work,
    # and a crash now would leave the rest due for the next start.
    still_due = await host.service.repository.schedules.due_schedules(
        host.clock.now(), ["test"], limit=500
    )
    assert len(still_due) == len(targets) - CONCURRENT_POSTS
    gate.set()
    await ticking
    # One tick posts every due schedule, each once.
    assert [len(adapter.questions(target)) for target in targets] == [1] * len(targets)
    assert (
        await host.service.repository.schedules.due_schedules(host.clock.now(), ["test"], limit=500)
        == []
    )


async def test_a_channel_that_refuses_posts_pauses_its_schedule_without_costing_streaks(
    host: Host,
) -> None:
    await schedule(host, action="daily", time="10:00")
    await schedule(host, OTHER_CHANNEL, action="daily", time="10:00")
    await run_until(host, at("2026-03-02 10:00"))
    await answer_daily(host, "ana", correct=True)
    host.adapter.failing_channels = {CHANNEL.channel}
    posted = await run_until(host, at("2026-03-04 10:00"))
    assert [sent.target for _, sent in posted] == [OTHER_CHANNEL, OTHER_CHANNEL]
    shown = (await host.command("schedule")).text
    assert "My last post here failed: cannot post in chan-1" in shown

    # A moderator fixes the permissions and starts a quiz; the schedule resumes.
    host.adapter.failing_channels = set()
    await host.start(questions=1)
    await host.close_current()
    await run_until(host, at("2026-03-05 10:00"))
    assert shows((await answer_daily(host, "ana", correct=True)), "🔥 1-day streak")


# -- the weekly leaderboard -------------------------------------------------------------


async def test_the_weekly_leaderboard_post(host: Host) -> None:
    await schedule(host, action="daily", time="10:00")
    await schedule(host, action="leaderboard", day="mon", time="09:00", timezone="Europe/Berlin")
    for date, ana, bo in (
        ("2026-03-02", True, True),
        ("2026-03-03", True, False),
        ("2026-03-04", False, False),
    ):
        await run_until(host, at(f"{date} 10:00"))
        await answer_daily(host, "ana", correct=ana)
        await answer_daily(host, "bo", correct=bo)
        await answer_daily(host, "cy", correct=True)
    hardest = host.question_of(host.current())
    await schedule(host, action="off", which="daily")
    await run_until(host, at("2026-03-09 09:00"))
    [weekly] = [
        sent.message
        for sent in host.adapter.in_channel(CHANNEL)
        if (sent.message.title or "").startswith("Weekly")
    ]
    assert weekly.public
    assert weekly.title == "Weekly leaderboard: Mar 02 – Mar 08"
    ranks = re.findall(r"<@(\w+)>: (\d+) pts", weekly.body)
    assert ranks == [("cy", "30"), ("ana", "20"), ("bo", "10")]
    assert "Daily streaks:\n🔥 <@cy>: 3 days" in weekly.text
    assert f"Hardest question:\n{hardest.prompt}\n1 of 3 right (33%)" in weekly.text
