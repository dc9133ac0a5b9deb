"""The read models behind leaderboards, stats and streaks: kept by the write
path, checked against the answers by `quizmaster db check`, repaired by
`quizmaster db rebuild`, and safe with concurrent writers."""

from __future__ import annotations

import asyncio
import random
import re
import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.chat import Target
from bot.domain.records import NewAnswer
from bot.domain.rules import Period, streak_table, streaks
from bot.quiz.buttons import parse_answer_custom_id
from bot.storage import boards as board_statements
from bot.storage import dashboard
from bot.storage.db import check_read_models, rebuild_read_models
from bot.storage.models import Post
from bot.storage.repository import Repository
from tests.conftest import CHANNEL, OTHER_CHANNEL, Host, run_until
from tests.test_cli import run_cli

FAR_CHANNEL = Target("test", "guild-2", "chan-3")
TOKYO = ZoneInfo("Asia/Tokyo")


def at(moment: str) -> datetime:
    return datetime.fromisoformat(moment).replace(tzinfo=UTC)


async def schedule(host: Host, target: Target = CHANNEL, **args: str) -> str:
    return (await host.command("schedule", target, options=args)).text


async def one_question(host: Host, target: Target, answers: dict[str, bool]) -> None:
    await host.start(target, questions=1, seconds=10)
    for user, correct in answers.items():
        await host.answer(user, correct=correct, target=target)
    await host.close_current(target)


async def busy_month(host: Host, repository: Repository) -> None:
    """Live quizzes in three channels of two communities (one in Tokyo time)
    over a week and a month boundary, daily questions with streaks, and a
    member who asks to be forgotten."""
    tokyo = await repository.channels.channel(OTHER_CHANNEL, host.clock.now())
    await repository.channels.set_channel_timezone(tokyo.id, "Asia/Tokyo")
    await schedule(host, action="daily", time="10:00")
    day = at("2026-03-27 10:00")
    for index in range(8):
        await run_until(host, day + timedelta(days=index))
        sent = host.current()
        for user, correct in (("ana", True), ("bo", index % 3 != 0), ("cy", index % 2 == 0)):
            if user == "cy" and index == 5:
                continue  # cy misses a day
            letter = host.correct_letter() if correct else host.wrong_letter()
            await host.click_on(sent, user, letter)
        for target in (CHANNEL, OTHER_CHANNEL, FAR_CHANNEL):
            host.clock.set(day + timedelta(days=index, hours=13, minutes=30))
            await one_question(host, target, {"ana": index % 2 == 1, "dee": True, "eve": False})
    await host.command("forget-me", user="eve", moderator=False)


async def test_check_agrees_with_the_answers_after_a_busy_month(
    host: Host, repository: Repository, engine: AsyncEngine
) -> None:
    await busy_month(host, repository)
    assert await check_read_models(engine) == ([], 0)


async def test_check_reports_a_damaged_row_and_rebuild_repairs_it(
    host: Host, repository: Repository, engine: AsyncEngine
) -> None:
    await busy_month(host, repository)
    board = await host.leaderboard(scope="server", period="all")
    streaks = (await host.command("leaderboard", period="streaks")).text
    async with engine.begin() as connection:
        await connection.execute(
            text(
                "UPDATE community_scores SET points = points + 100"
                " WHERE user_id = 'dee' AND community = 'guild-1'"
            )
        )
        await connection.execute(text("UPDATE daily_streaks SET current = 9 WHERE user_id = 'bo'"))
    assert await host.leaderboard(scope="server", period="all") != board

    lines, total = await check_read_models(engine)
    assert total == 2
    assert any(line.startswith("community_scores ('test', 'guild-1', 'dee')") for line in lines)
    assert any(line.startswith("daily_streaks") and "'bo'" in line for line in lines)

    await rebuild_read_models(engine)
    assert await check_read_models(engine) == ([], 0)
    assert await host.leaderboard(scope="server", period="all") == board
    assert (await host.command("leaderboard", period="streaks")).text == streaks


async def test_last_weeks_post_counts_members_who_already_answered_this_week(
    host: Host,
) -> None:
    """The Monday post is made after that day's daily question has closed: its
    answers start a new week on the member's row without losing last week's points."""
    await host.command("config", key="daily-window", value="1")
    await schedule(host, action="daily", time="10:00")
    await schedule(host, action="leaderboard", day="mon", time="12:00")
    for date in ("2026-03-04", "2026-03-05"):
        await run_until(host, at(f"{date} 10:00"))
        for user in ("ana", "bo"):
            await host.click(user, host.correct_letter(), CHANNEL)
    await run_until(host, at("2026-03-09 10:00"))
    await host.click("ana", host.correct_letter(), CHANNEL)  # Monday: a new week for ana
    assert await host.leaderboard(period="week") == []  # it counts once the question closes
    await run_until(host, at("2026-03-09 12:00"))

    *_, weekly = [
        sent.message
        for sent in host.adapter.in_channel(CHANNEL)
        if (sent.message.title or "").startswith("Weekly")
    ]
    assert weekly.title == "Weekly leaderboard: Mar 02 – Mar 08"
    assert re.findall(r"<@(\w+)>: (\d+) pts", weekly.body) == [("ana", "20"), ("bo", "20")]
    assert await host.leaderboard(period="week") == [("ana", 10)]


async def test_an_answer_counts_on_boards_and_stats_once_its_question_closes(
    host: Host, engine: AsyncEngine
) -> None:
    """While the question is open nobody can tell from the boards or their stats
    whether their answer was right; the close counts it, once."""
    await host.start(CHANNEL, questions=2, seconds=10)
    await host.answer("ana", correct=True)
    await host.answer("bo", correct=False)
    assert await host.leaderboard(period="week") == []
    assert (await host.stats("ana")).answered == 0
    await host.close_current()
    assert await host.leaderboard(period="week") == [("ana", 15), ("bo", 0)]
    assert (await host.stats("ana")).points == 15
    await host.service.tick()  # a second look at the closed question counts nothing again
    assert await host.leaderboard(scope="server", period="all") == [("ana", 15), ("bo", 0)]
    assert await check_read_models(engine) == ([], 0)


async def test_questions_that_close_out_of_order_keep_each_answer_in_its_own_week(
    host: Host, engine: AsyncEngine
) -> None:
    """Sunday's daily question is still open when Monday's live question closes:
    its answers, counted later, still belong to last week."""
    await schedule(host, action="daily", time="10:00")
    await schedule(host, action="leaderboard", day="mon", time="12:00")
    await run_until(host, at("2026-03-08 10:00"))  # a Sunday
    await host.click("ana", host.correct_letter(), CHANNEL)
    await run_until(host, at("2026-03-09 08:00"))
    await one_question(host, CHANNEL, {"ana": True})  # closes before Sunday's daily
    assert await host.leaderboard(period="week") == [("ana", 15)]
    await run_until(host, at("2026-03-09 12:00"))  # Sunday's daily closed at 10:00

    assert await host.leaderboard(period="week") == [("ana", 15)]
    assert await host.leaderboard(period="month") == [("ana", 25)]
    assert await host.leaderboard(scope="server", period="all") == [("ana", 25)]
    *_, weekly = [
        sent.message
        for sent in host.adapter.in_channel(CHANNEL)
        if (sent.message.title or "").startswith("Weekly")
    ]
    assert weekly.title == "Weekly leaderboard: Mar 02 – Mar 08"
    assert re.findall(r"<@(\w+)>: (\d+) pts", weekly.body) == [("ana", "10")]
    assert await check_read_models(engine) == ([], 0)


async def test_forget_me_leaves_no_trace_in_boards_stats_or_streaks(
    host: Host, engine: AsyncEngine
) -> None:
    await schedule(host, action="daily", time="10:00")
    await run_until(host, at("2026-03-02 10:00"))
    await host.click("ana", host.correct_letter(), CHANNEL)
    await one_question(host, CHANNEL, {"ana": True})
    await host.command("forget-me", user="ana", moderator=False)

    async with engine.connect() as connection:
        for table in ("channel_scores", "community_scores", "member_questions", "daily_streaks"):
            found = await connection.execute(text(f"SELECT count(*) FROM {table}"))
            assert found.scalar_one() == 0, table
    stats = await host.stats("ana")
    assert (stats.answered, stats.points) == (0, 0)


async def test_concurrent_batches_with_the_same_members_count_each_answer_once(
    host: Host, repository: Repository, engine: AsyncEngine
) -> None:
    """On PostgreSQL the batches, and then the two closes that count them, run on
    separate connections at once: rows are written in key order, so overlapping
    members never deadlock."""
    await host.start(CHANNEL, questions=1, seconds=600)
    await host.start(OTHER_CHANNEL, questions=1, seconds=600)
    posts = []
    for target in (CHANNEL, OTHER_CHANNEL):
        parsed = parse_answer_custom_id(host.current(target).message.buttons[0].custom_id)
        assert parsed is not None
        post = await repository.posts.post(parsed[0])
        assert post is not None
        posts.append(post)
    members = [f"member-{n:03d}" for n in range(200)]
    now = host.clock.now()

    def batch(post_index: int, order: list[str]) -> list[NewAnswer]:
        post = posts[post_index]
        return [NewAnswer(post, user, 0, post.correct_slot == 0, 10, now) for user in order]

    results = await asyncio.gather(
        repository.answers.record_answers(batch(0, members)),
        repository.answers.record_answers(batch(1, members[::-1])),
        repository.answers.record_answers(batch(0, members[::-1])),  # the same clicks again
        repository.answers.record_answers(batch(1, members)),
    )
    assert sum(map(sum, results)) == 2 * len(members)
    # Both questions close at once: their answers reach the same members'
    # server rows from two transactions.
    closed = await asyncio.gather(*(repository.posts.claim_close(p.id, now) for p in posts))
    assert closed == [True, True]
    assert await check_read_models(engine) == ([], 0)
    board = await host.leaderboard(scope="server", period="all")
    assert len(board) == 10
    assert {points for _, points in board} <= {0, 20}


def test_db_check_and_rebuild_commands(tmp_path: Path) -> None:
    played = run_cli("play", "--questions", "3", cwd=tmp_path, stdin="A\nB\nC\n")
    assert played.returncode == 0, played.stderr
    clean = run_cli("db", "check", cwd=tmp_path)
    assert clean.returncode == 0, clean.stderr
    assert "Read models match the answers." in clean.stdout

    with sqlite3.connect(tmp_path / "data" / "quizmaster.db") as database:
        database.execute("UPDATE member_questions SET answered = answered + 1")
    damaged = run_cli("db", "check", cwd=tmp_path)
    assert damaged.returncode == 1
    assert "member_questions" in damaged.stdout
    assert "difference(s) between the read models and the answers" in damaged.stderr

    rebuilt = run_cli("db", "rebuild", cwd=tmp_path)
    assert rebuilt.returncode == 0, rebuilt.stderr
    assert run_cli("db", "check", cwd=tmp_path).returncode == 0


def test_the_streak_recount_agrees_with_the_plain_definition() -> None:
    """`streak_table` walks members' answers only; on random histories it
    gives what `streaks` gives over each member's list of closed or answered
    posts, the rule the README states."""
    rng = random.Random(7)
    for _ in range(300):
        posts = [(post_id, rng.random() < 0.85) for post_id in range(rng.randint(0, 12))]
        answers = {
            f"m{member}": {
                post_id: rng.random() < 0.7 for post_id, _ in posts if rng.random() < 0.6
            }
            for member in range(4)
        }
        plain = {
            user: streaks([mine.get(p, False) for p, closed in posts if closed or p in mine])
            for user, mine in answers.items()
        }
        assert streak_table(posts, answers) == plain


async def test_every_board_reads_its_top_ten_from_an_index_in_rank_order(
    engine: AsyncEngine,
) -> None:
    """No board sorts its members on each call, so a board of 50,000 costs what
    a board of 50 does (bench/boards.py measures it). The plan says so: no sort
    step on PostgreSQL, no temporary B-tree on SQLite."""
    boards = [
        board_statements.channel_board(1, period, "2026-W10", 10)
        for period in (Period.ALL, Period.WEEK, Period.MONTH)
    ]
    boards += [
        board_statements.community_board("test", "guild-1", period, "2026-03", 10)
        for period in (Period.ALL, Period.WEEK, Period.MONTH)
    ]
    boards.append(board_statements.streak_board(1, 10))
    async with engine.connect() as connection:
        for board in boards:
            sql = str(board.compile(engine, compile_kwargs={"literal_binds": True}))
            if engine.dialect.name == "postgresql":
                # Tiny tables: make every other plan dear, so a sort shows up
                # only where no index gives the order.
                for setting in ("enable_seqscan", "enable_bitmapscan", "enable_sort"):
                    await connection.execute(text(f"SET {setting} = off"))
                plan = "\n".join(row[0] for row in await connection.execute(text(f"EXPLAIN {sql}")))
                assert "Sort" not in plan and "Index" in plan, plan
            else:
                rows = await connection.execute(text(f"EXPLAIN QUERY PLAN {sql}"))
                plan = "\n".join(str(row[-1]) for row in rows)
                assert "TEMP B-TREE" not in plan and "INDEX" in plan, plan


async def test_a_dashboard_statement_of_many_boards_reads_each_from_its_index(
    engine: AsyncEngine,
) -> None:
    """The dashboard asks for a community's channel boards in one statement:
    each board in it is still its own indexed LIMIT read, and only the few
    rows they return are sorted."""
    values = {f"channel_{n}": n + 1 for n in range(3)}
    values |= {f"key_{n}": "2026-W10" for n in range(3)}
    statements = [
        (dashboard.many_channel_boards(period, 3, 10), "ix_channel_scores_")
        for period in (Period.ALL, Period.WEEK, Period.MONTH)
    ]
    statements.append((dashboard.many_streak_boards(3, 10), "ix_daily_streaks_rank"))
    async with engine.connect() as connection:
        if engine.dialect.name == "postgresql":
            for setting in ("enable_seqscan", "enable_bitmapscan"):
                await connection.execute(text(f"SET {setting} = off"))
        for statement, index in statements:
            bound = statement.params(
                {name: value for name, value in values.items() if name in str(statement)}
            )
            sql = str(bound.compile(engine, compile_kwargs={"literal_binds": True}))
            if engine.dialect.name == "postgresql":
                plan = [row[0] for row in await connection.execute(text(f"EXPLAIN {sql}"))]
                reads = [line for line in plan if f"using {index}" in line]
                sorts = [line for line in plan if "Sort  (" in line]
            else:
                rows = await connection.execute(text(f"EXPLAIN QUERY PLAN {sql}"))
                plan = [str(row[-1]) for row in rows]
                reads = [line for line in plan if f"INDEX {index}" in line]
                sorts = [line for line in plan if "TEMP B-TREE" in line]
            assert len(reads) == 3, "\n".join(plan)
            # One sort of the rows the boards return; SQLite may instead merge
            # the streak boards, sorting each one's ten rows.
            merged = engine.dialect.name == "sqlite" and "MERGE (UNION ALL)" in plan
            assert len(sorts) <= (3 if merged else 1), "\n".join(plan)


async def test_a_daily_question_answered_by_627_members_in_one_batch_counts_each_once(
    host: Host, repository: Repository, engine: AsyncEngine
) -> None:
    """627 rows go as statements of 500, 100, 20, 5, 1 and 1 rows, each written
    from SQLAlchemy's one- and two-row compiles: every member's own slot and
    streak land in their own row, on both backends."""
    await schedule(host, action="daily", time="10:00")
    await run_until(host, at("2026-03-02 10:00"))
    parsed = parse_answer_custom_id(host.current().message.buttons[0].custom_id)
    assert parsed is not None
    post = await repository.posts.post(parsed[0])
    assert post is not None and post.kind == "daily"
    now = host.clock.now()
    members = [f"member-{n:03d}" for n in range(627)]
    rows = [
        NewAnswer(post, user, n % 4, post.correct_slot == n % 4, 10, now)
        for n, user in enumerate(members)
    ]
    assert await repository.answers.record_answers(rows) == [True] * 627
    assert await repository.answers.record_answers(rows[::-1]) == [False] * 627
    assert await repository.answers.answer_count(post.id) == 627
    for n in (0, 499, 500, 599, 600, 619, 620, 624, 625, 626):
        assert await repository.answers.answer_slot(post.id, members[n]) == n % 4
    assert await check_read_models(engine) == ([], 0)
    await host.close_current()
    assert (await host.stats("member-626")).answered == 1


async def test_a_member_answering_two_open_daily_questions_in_one_batch_extends_the_streak_twice(
    host: Host, repository: Repository, engine: AsyncEngine
) -> None:
    """Yesterday's daily question can still be open when today's is posted. A
    member who answers both right in one batch has a streak of two (on
    PostgreSQL one statement cannot move a streak row twice, so such a batch
    takes the transaction), and a member answering one of them has one."""
    await schedule(host, action="daily", time="10:00")
    await run_until(host, at("2026-03-02 10:00"))
    parsed = parse_answer_custom_id(host.current().message.buttons[0].custom_id)
    assert parsed is not None
    posts = Post.__table__
    async with engine.begin() as connection:
        [today] = (await connection.execute(posts.select().where(posts.c.id == parsed[0]))).all()
        copy = {name: value for name, value in today._mapping.items() if name != "id"}
        yesterday_id = (
            await connection.execute(posts.insert().values(copy).returning(posts.c.id))
        ).scalar_one()
    today_post = await repository.posts.post(parsed[0])
    yesterday_post = await repository.posts.post(yesterday_id)
    assert today_post is not None and yesterday_post is not None
    now = host.clock.now()
    right = today_post.correct_slot
    rows = [
        NewAnswer(yesterday_post, "both", right, True, 10, now),
        NewAnswer(today_post, "both", right, True, 10, now + timedelta(seconds=1)),
        NewAnswer(today_post, "one", right, True, 10, now),
    ]
    assert await repository.answers.record_answers(rows) == [True, True, True]
    platform = today_post.target.platform
    both = await repository.answers.streak_and_due(today_post.channel_id, platform, "both", now)
    one = await repository.answers.streak_and_due(today_post.channel_id, platform, "one", now)
    assert (both[0], one[0]) == (2, 1)
