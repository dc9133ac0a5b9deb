"""Leaderboards (periods in the channel's time zone, channel and community scope,
tie-breaks), personal stats and forget-me."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

from bot.chat import Command, Target
from bot.storage.repository import Repository
from tests.conftest import CHANNEL, OTHER_CHANNEL, Host, ranking
from tests.fakes.clock import FakeClock

TOKYO = ZoneInfo("Asia/Tokyo")  # UTC+9, no daylight saving time
NEW_YORK = ZoneInfo("America/New_York")  # UTC-5 in winter
FAR_CHANNEL = Target("test", "guild-2", "chan-3")


async def set_zone(repository: Repository, clock: FakeClock, target: Target, zone: str) -> None:
    channel = await repository.channels.channel(target, clock.now())
    await repository.channels.set_channel_timezone(channel.id, zone)


async def answer_at(
    host: Host, moment: datetime, user: str, *, target: Target = CHANNEL, correct: bool = True
) -> None:
    """`user` answers a one-question quiz at `moment` (15 points when right)."""
    host.clock.set(moment)
    await host.start(target, questions=1, seconds=10)
    await host.answer(user, correct=correct, target=target)
    await host.close_current(target)


async def test_the_week_runs_monday_to_sunday_in_the_channel_time_zone(
    host: Host, repository: Repository, clock: FakeClock
) -> None:
    await set_zone(repository, clock, CHANNEL, "Asia/Tokyo")
    # Both moments fall on Sunday in UTC; in Tokyo they straddle midnight into Monday.
    await answer_at(host, datetime(2026, 3, 8, 23, 30, tzinfo=TOKYO), "sunday")
    assert await host.leaderboard(period="week") == [("sunday", 15)]
    await answer_at(host, datetime(2026, 3, 9, 0, 30, tzinfo=TOKYO), "monday")

    assert await host.leaderboard(period="week") == [("monday", 15)]
    assert {user for user, _ in await host.leaderboard(period="month")} == {"sunday", "monday"}
    assert {user for user, _ in await host.leaderboard(period="all")} == {"sunday", "monday"}

    clock.set(datetime(2026, 3, 15, 23, 59, tzinfo=TOKYO))  # the same week's Sunday night
    assert await host.leaderboard(period="week") == [("monday", 15)]
    clock.set(datetime(2026, 3, 16, 0, 0, tzinfo=TOKYO))  # a new week
    assert await host.leaderboard(period="week") == []
    assert len(await host.leaderboard(period="all")) == 2


async def test_the_month_follows_the_channel_time_zone(
    host: Host, repository: Repository, clock: FakeClock
) -> None:
    await set_zone(repository, clock, CHANNEL, "America/New_York")
    # Both moments fall on 1 March in UTC; in New York the first is still February.
    await answer_at(host, datetime(2026, 2, 28, 23, 30, tzinfo=NEW_YORK), "february")
    await answer_at(host, datetime(2026, 3, 1, 0, 30, tzinfo=NEW_YORK), "march")

    assert await host.leaderboard(period="month") == [("march", 15)]
    # Saturday and Sunday of one ISO week; the earlier right answer wins the tie.
    assert await host.leaderboard(period="week") == [("february", 15), ("march", 15)]
    clock.set(datetime(2026, 3, 31, 23, 59, tzinfo=NEW_YORK))
    assert await host.leaderboard(period="month") == [("march", 15)]
    clock.set(datetime(2026, 4, 1, 0, 0, tzinfo=NEW_YORK))
    assert await host.leaderboard(period="month") == []


async def test_a_utc_channel_counts_the_utc_week(host: Host, clock: FakeClock) -> None:
    await answer_at(host, datetime(2026, 3, 8, 23, 30, tzinfo=ZoneInfo("UTC")), "sunday")
    clock.set(datetime(2026, 3, 9, 0, 5, tzinfo=ZoneInfo("UTC")))
    assert await host.leaderboard(period="week") == []
    assert await host.leaderboard(period="month") == [("sunday", 15)]


async def test_channel_and_community_scopes(host: Host) -> None:
    start = host.clock.now()
    for target in (CHANNEL, OTHER_CHANNEL, FAR_CHANNEL):
        await host.start(target, questions=1, seconds=10)
    await host.answer("both", correct=True, target=CHANNEL)
    await host.answer("both", correct=True, target=OTHER_CHANNEL)
    host.clock.set(start + timedelta(seconds=2))  # 8 s left: 10 + 4
    await host.answer("next-door", correct=True, target=OTHER_CHANNEL)
    await host.answer("far-away", correct=True, target=FAR_CHANNEL)
    for target in (CHANNEL, OTHER_CHANNEL, FAR_CHANNEL):
        await host.close_current(target)

    assert await host.leaderboard(CHANNEL, scope="channel") == [("both", 15)]
    assert await host.leaderboard(OTHER_CHANNEL, scope="channel") == [
        ("both", 15),
        ("next-door", 14),
    ]
    community = [("both", 30), ("next-door", 14)]
    assert await host.leaderboard(CHANNEL, scope="server") == community
    assert await host.leaderboard(OTHER_CHANNEL, scope="community") == community
    assert await host.leaderboard(FAR_CHANNEL, scope="server") == [("far-away", 14)]


async def test_leaderboard_titles_and_bad_words(host: Host) -> None:
    reply = await host.command("leaderboard", moderator=False, scope="server", period="month")
    assert "this server" in (reply.title or "")
    assert "this month" in (reply.title or "")
    assert "No answers yet" in reply.text
    bad_scope = await host.command("leaderboard", moderator=False, scope="galaxy")
    assert "galaxy" in bad_scope.text and "scope" in bad_scope.text
    bad_period = await host.command("leaderboard", moderator=False, period="decade")
    assert "decade" in bad_period.text and "period" in bad_period.text


async def test_ties_break_on_correct_answers_then_earlier_last_correct_then_user_id(
    host: Host, clock: FakeClock
) -> None:
    """Points with seconds=5: right at once 15, right with 0.4 s left 10, wrong 0."""
    await host.start(questions=3, seconds=5)

    async def question(
        quick: Sequence[str], slow: Sequence[str], wrong: Sequence[str] = ()
    ) -> None:
        posted = clock.now()
        for user in quick:
            await host.answer(user, correct=True)
        for user in wrong:
            await host.answer(user, correct=False)
        clock.set(posted + timedelta(seconds=4.6))
        for user in slow:
            await host.answer(user, correct=True)
        await host.close_current()

    await question(quick=["alpha", "yak", "pat"], slow=["zeta"])
    await question(quick=["alpha", "bee"], slow=["zeta", "quin"])
    await question(quick=["cat", "dog", "quin"], slow=["zeta", "pat"], wrong=["alpha"])

    expected = [
        ("zeta", 30),  # 3 right beats alpha's 2 right for the same points
        ("alpha", 30),
        ("quin", 25),  # last right answer (question 3, at once) before pat's (question 3, late)
        ("pat", 25),
        ("yak", 15),  # last right answer in question 1, before bee's in question 2
        ("bee", 15),
        ("cat", 15),  # same moment as dog: user id decides
        ("dog", 15),
    ]
    assert ranking(host.adapter.sent[-1].message) == expected, "the quiz scoreboard"
    assert await host.leaderboard() == expected
    reply = await host.command("leaderboard", moderator=False)
    assert "<@zeta>" in reply.text and "<@dog>" in reply.text


async def test_leaderboard_shows_the_top_ten(host: Host, clock: FakeClock) -> None:
    await host.start(questions=1, seconds=5)
    posted = clock.now()
    for second in range(5):
        clock.set(posted + timedelta(seconds=second))
        await host.answer(f"right-{second}", correct=True)
    for n in range(7):
        await host.answer(f"wrong-{n}", correct=False)
    await host.close_current()

    board = await host.leaderboard()
    assert len(board) == 10
    assert board[:5] == [(f"right-{n}", 15 - n) for n in range(5)]
    assert [user for user, _ in board[5:]] == [f"wrong-{n}" for n in range(5)]


# -- stats and forget-me --------------------------------------------------------------


async def test_stats_count_answers_accuracy_points_and_topics(host: Host) -> None:
    await host.start(questions=3, seconds=10)
    shown = []
    for correct in (True, False, True):
        shown.append((host.question_of(host.current()), correct))
        await host.answer("learner", correct=correct)
        await host.close_current()

    stats = await host.stats("learner")

    assert (stats.answered, stats.correct, stats.accuracy, stats.points) == (3, 2, "67%", 30)
    expected: dict[str, tuple[str, int]] = {}
    for tag in {tag for question, _ in shown for tag in question.tags}:
        answered = sum(tag in question.tags for question, _ in shown)
        right = sum(tag in question.tags and correct for question, correct in shown)
        expected[tag] = (f"{round(100 * right / answered)}%", answered)
    assert stats.per_tag == expected


async def test_stats_of_another_member_and_of_a_newcomer(host: Host) -> None:
    await host.start(questions=1, seconds=10)
    await host.answer("known", correct=True)
    await host.close_current()

    reply = await host.service.handle_command(
        Command("stats", CHANNEL, "someone", args={"user": "known"})
    )
    assert "<@known>" in reply.text
    assert "Points: 15" in reply.text
    newcomer = await host.stats("newcomer")
    assert (newcomer.answered, newcomer.correct, newcomer.points) == (0, 0, 0)
    assert newcomer.per_tag == {}


async def test_forget_me_deletes_only_the_members_answers(host: Host) -> None:
    for target in (CHANNEL, OTHER_CHANNEL):
        await host.start(target, questions=2, seconds=10)
        for _ in range(2):
            await host.answer("leaver", correct=True, target=target)
            await host.answer("stayer", correct=False, target=target)
            await host.close_current(target)
    stayer_before = await host.stats("stayer")
    assert (await host.stats("leaver")).answered == 4

    reply = await host.command("forget-me", user="leaver", moderator=False)

    assert "4 answers" in reply.text
    leaver = await host.stats("leaver")
    assert (leaver.answered, leaver.correct, leaver.points, leaver.per_tag) == (0, 0, 0, {})
    assert await host.stats("stayer") == stayer_before
    for scope in ("channel", "server"):
        for period in ("week", "month", "all"):
            board = await host.leaderboard(scope=scope, period=period)
            assert [user for user, _ in board] == ["stayer"], (scope, period)
    again = await host.command("forget-me", user="leaver", moderator=False)
    assert "0 answers" in again.text
