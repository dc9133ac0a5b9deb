"""A realistic quiz history written straight into the tables, fast enough for
a million answers: for tests at small scale and for the scale benchmarks.

`generate` fills the tables of schema revision SCHEMA_REVISION (channels,
quizzes, posts, answers) with bulk inserts on the driver connection (sqlite3
executemany, asyncpg COPY), never the ORM row by row. The usual sequence is
`upgrade(engine, SCHEMA_REVISION)`, `generate(...)`, then `upgrade(engine)`, so
later migrations (read models and their backfill) run on it as on a live
database.

The shape, deterministic for a seed:
- channels spread round-robin over communities on Discord, a few in non-UTC
  zones and a few with a short daily window;
- one daily question per channel per day for `days` days up to `now` (the
  latest still open where its window has not passed), plus live quizzes of a
  few questions every few days, questions dealt from the real banks;
- members belong to one community each, with heavy-tailed activity (a few
  answer on nearly every post, most only a handful of times); a small share of
  answers come from members of other communities;
- answers are unique per (post, member), inside the post's open window, on a
  slot the post shows, and score as the service would (points_for).
"""

from __future__ import annotations

import asyncio
import bisect
import itertools
import json
import random
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from sqlalchemy.ext.asyncio import AsyncEngine

from bot.chat import Target
from bot.domain.rules import points_for, shuffled_order
from bot.quiz.bank import Question, load_banks

ROOT = Path(__file__).resolve().parent.parent
# The schema revision whose tables this module writes.
SCHEMA_REVISION = "0005"
PLATFORM = "discord"

# Discord-like snowflake ids, so ids have the length real ones have.
_COMMUNITY_BASE = 800_000_000_000_000_000
_CHANNEL_BASE = 810_000_000_000_000_000
_MEMBER_BASE = 820_000_000_000_000_000
_MESSAGE_BASE = 830_000_000_000_000_000

_ZONES = ("Europe/Berlin", "America/New_York", "Asia/Tokyo", "Australia/Sydney")
# Activity of a community's members falls off as 1/rank**_ZIPF.
_ZIPF = 1.0
# Share of answers given by members of another community (any member alike).
_VISITOR_SHARE = 0.05
# A live quiz every few days per channel, of a few questions each.
_LIVE_QUIZ_EVERY_DAYS = 3
_LIVE_QUESTIONS = 5
_LIVE_SECONDS = (20, 30, 30, 45, 60)
_LIVE_GAP = timedelta(seconds=4)
# Relative answers per post: live questions draw a few less than the daily one.
_LIVE_POST_WEIGHT = 0.9
_SHORT_WINDOW_HOURS = 8
_GRACE_MINUTES = 120
_BATCH = 100_000


@dataclass(frozen=True)
class GeneratedInfo:
    """What was written, and handles a benchmark needs."""

    answers: int
    posts: int
    daily_posts: int
    open_daily_posts: int
    live_posts: int
    quizzes: int
    channels: int
    members: int  # distinct members who answered
    heavy_member: str  # the member with the most answers
    heavy_member_answers: int
    heavy_member_channel: Target  # where the heavy member answered most
    busy_channel: Target  # the channel with the most answers
    busy_channel_answers: int
    community: str  # the busy channel's community
    full_daily_channel: Target  # a channel with a daily post on each of the days


@dataclass(frozen=True)
class _ChannelPlan:
    id: int
    index: int
    community: int
    zone: str
    window_hours: int
    activity: float


@dataclass(frozen=True)
class _PostPlan:
    """A post as answers need it: who may answer when, and how it scores."""

    id: int
    channel: _ChannelPlan
    live: bool
    posted_at: datetime
    answers_until: datetime  # end of the open window (exclusive)
    closes_at: datetime
    seconds: int
    options: int
    correct_slot: int
    weight: float


class _Members:
    """The member population: home community, weight and skill per member."""

    def __init__(self, members: int, communities: int, rng: random.Random) -> None:
        numbers = list(range(members))
        rng.shuffle(numbers)  # the heaviest members get no special-looking ids
        self.ids = [str(_MEMBER_BASE + number) for number in numbers]
        self.skill = [rng.betavariate(4, 2.5) for _ in range(members)]
        weights = [1.0 / (index // communities + 1) ** _ZIPF for index in range(members)]
        self.home: list[list[int]] = [
            list(range(k, members, communities)) for k in range(communities)
        ]
        self.home_cum = [list(itertools.accumulate(weights[m] for m in pool)) for pool in self.home]
        self.everyone = list(range(members))
        self.weights = weights

    def pick(self, community: int, count: int, rng: random.Random) -> list[int]:
        """`count` distinct members for one post, mostly from `community`."""
        chosen: dict[int, None] = {}
        for _ in range(50):
            need = count - len(chosen)
            if need <= 0:
                break
            visitors = sum(rng.random() < _VISITOR_SHARE for _ in range(need))
            for member in self._draw(
                self.home[community], self.home_cum[community], need - visitors, rng
            ):
                chosen[member] = None
            # Visitors are anyone, unweighted: a community's regulars (its heavy
            # members above all) rarely answer elsewhere.
            for _ in range(visitors):
                chosen[rng.randrange(len(self.everyone))] = None
        if len(chosen) < count:
            # Nearly everyone answers this post: a weighted shuffle of everyone.
            keys = {m: rng.random() ** (1.0 / self.weights[m]) for m in self.everyone}
            rest = sorted((m for m in self.everyone if m not in chosen), key=lambda m: -keys[m])
            for member in rest[: count - len(chosen)]:
                chosen[member] = None
        return list(chosen)[:count]

    @staticmethod
    def _draw(pool: list[int], cum: list[float], count: int, rng: random.Random) -> list[int]:
        if count <= 0 or not pool:
            return []
        total, last, chance = cum[-1], len(pool) - 1, rng.random
        return [pool[min(bisect.bisect(cum, chance() * total), last)] for _ in range(count)]


async def generate(
    engine: AsyncEngine,
    *,
    answers: int,
    members: int,
    channels: int,
    communities: int,
    days: int,
    seed: int,
    now: datetime,
) -> GeneratedInfo:
    """Write a quiz history of exactly `answers` answers into an empty database
    at SCHEMA_REVISION (or a later one with the same tables)."""
    if min(members, channels, communities, days) < 1 or answers < 0:
        raise ValueError("members, channels, communities and days must be positive")
    if communities > channels:
        raise ValueError("every community needs at least one channel")
    # Naive UTC inside: the SQLite text form then costs one isoformat per moment.
    now = now.astimezone(UTC).replace(tzinfo=None)
    rng = random.Random(seed)
    catalog, problems = load_banks([ROOT / "questions"])
    questions = [q for qid in catalog.pool() if (q := catalog.question(qid)) is not None]
    if problems or not questions:
        raise RuntimeError(f"the question banks do not load: {problems}")

    async with _DriverTransaction(engine) as writer:
        ids = await writer.next_ids(("channels", "quizzes", "posts", "answers"))
        plans = _plan_channels(channels, communities, rng, ids["channels"])
        await writer.insert("channels", _CHANNEL_COLUMNS, _channel_rows(plans, now, days, writer))
        posts, quiz_rows, post_rows = _plan_posts(plans, questions, days, now, rng, ids, writer)
        await writer.insert("quizzes", _QUIZ_COLUMNS, quiz_rows)
        await writer.insert("posts", _POST_COLUMNS, post_rows)
        population = _Members(members, communities, rng)
        counts = _allocate(answers, [post.weight for post in posts], members)
        tally = _Tally(members, channels)
        rows = _answer_rows(posts, counts, population, rng, ids["answers"], writer.time, tally)
        # Filling an index row by row costs far more than building it at the end.
        indexes = await writer.drop_plain_indexes("answers")
        await _insert_overlapped(writer, "answers", _ANSWER_COLUMNS, rows)
        await writer.create_indexes(indexes)
        await writer.finish(("channels", "quizzes", "posts", "answers"))

    daily = [post for post in posts if not post.live]
    heavy = max(range(members), key=lambda m: (tally.by_member[m], -m))
    heavy_channel = max(plans, key=lambda c: (tally.of_member_in(heavy, c.index), -c.index))
    busy = max(plans, key=lambda c: (tally.by_channel[c.index], -c.index))
    return GeneratedInfo(
        answers=answers,
        posts=len(posts),
        daily_posts=len(daily),
        open_daily_posts=sum(post.answers_until == now for post in daily),
        live_posts=len(posts) - len(daily),
        quizzes=len(quiz_rows),
        channels=channels,
        members=sum(1 for n in tally.by_member if n),
        heavy_member=population.ids[heavy],
        heavy_member_answers=tally.by_member[heavy],
        heavy_member_channel=_target(heavy_channel),
        busy_channel=_target(busy),
        busy_channel_answers=tally.by_channel[busy.index],
        community=_target(busy).community,
        full_daily_channel=_target(busy),  # every channel has a daily post each day
    )


async def _insert_overlapped(
    writer: _Writer, table: str, columns: Sequence[str], rows: Iterator[tuple[Any, ...]]
) -> None:
    """Insert in batches, making the next batch while the driver's thread (or
    the server) stores the last one."""
    storing: asyncio.Task[None] | None = None
    while batch := list(itertools.islice(rows, _BATCH)):
        if storing is not None:
            await storing
        storing = asyncio.create_task(writer.insert(table, columns, batch))
        await asyncio.sleep(0)  # let it hand the batch to the driver
    if storing is not None:
        await storing


def _target(channel: _ChannelPlan) -> Target:
    return Target(
        PLATFORM, str(_COMMUNITY_BASE + channel.community), str(_CHANNEL_BASE + channel.index)
    )


# -- planning --------------------------------------------------------------------------

_CHANNEL_COLUMNS = (
    "id",
    "platform",
    "community",
    "channel",
    "timezone",
    "moderator_role",
    "mentions",
    "delivery_problem",
    "daily_window_hours",
    "grace_minutes",
    "created_at",
)
_QUIZ_COLUMNS = (
    "id",
    "channel_id",
    "status",
    "question_ids",
    "posted",
    "seconds",
    "bank",
    "tag",
    "expected_players",
    "started_by",
    "started_at",
    "ended_at",
)
_POST_COLUMNS = (
    "id",
    "channel_id",
    "quiz_id",
    "kind",
    "sequence",
    "question_id",
    "option_order",
    "correct_slot",
    "seconds",
    "posted_at",
    "closes_at",
    "closed_at",
    "message_id",
    "revealed_at",
    "reveal_claimed_at",
    "publish_attempts",
    "publish_retry_at",
    "publish_by",
)
_ANSWER_COLUMNS = (
    "id",
    "post_id",
    "channel_id",
    "user_id",
    "slot",
    "correct",
    "points",
    "answered_at",
    "latency_ms",
)


def _plan_channels(
    channels: int, communities: int, rng: random.Random, first_id: int
) -> list[_ChannelPlan]:
    return [
        _ChannelPlan(
            id=first_id + index,
            index=index,
            community=index % communities,
            zone=_ZONES[index // 7 % len(_ZONES)] if index % 7 == 3 else "UTC",
            window_hours=_SHORT_WINDOW_HOURS if index % 4 == 1 else 24,
            activity=rng.lognormvariate(0.0, 0.75),
        )
        for index in range(channels)
    ]


def _channel_rows(
    plans: list[_ChannelPlan], now: datetime, days: int, writer: _Writer
) -> list[tuple[Any, ...]]:
    created = writer.time(now - timedelta(days=days + 1))
    return [
        (
            c.id,
            PLATFORM,
            _target(c).community,
            _target(c).channel,
            c.zone,
            None,
            True,
            None,
            c.window_hours,
            _GRACE_MINUTES,
            created,
        )
        for c in plans
    ]


class _Deck:
    """A channel's questions: each once per pass, in a new order every pass."""

    def __init__(self, questions: list[Question], rng: random.Random) -> None:
        self.questions, self.rng, self.left = questions, rng, list[Question]()

    def deal(self) -> Question:
        if not self.left:
            self.left = list(self.questions)
            self.rng.shuffle(self.left)
        return self.left.pop()


def _plan_posts(
    plans: list[_ChannelPlan],
    questions: list[Question],
    days: int,
    now: datetime,
    rng: random.Random,
    ids: dict[str, int],
    writer: _Writer,
) -> tuple[list[_PostPlan], list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    ts = writer.time
    posts: list[_PostPlan] = []
    quiz_rows: list[tuple[Any, ...]] = []
    post_rows: list[tuple[Any, ...]] = []
    post_ids = itertools.count(ids["posts"])
    quiz_ids = itertools.count(ids["quizzes"])

    def add(
        channel: _ChannelPlan,
        question: Question,
        *,
        quiz: tuple[int, int] | None,
        posted: datetime,
        closes: datetime,
        closed: datetime | None,
        weight: float,
    ) -> None:
        post_id = next(post_ids)
        order = shuffled_order(len(question.options), rng)
        correct_slot = order.index(question.answer_index)
        seconds = int((closes - posted).total_seconds())
        revealed = closed + timedelta(seconds=1) if closed is not None else None
        post_rows.append(
            (
                post_id,
                channel.id,
                quiz[0] if quiz else None,
                "live" if quiz else "daily",
                quiz[1] if quiz else None,
                question.id,
                json.dumps(order),
                correct_slot,
                seconds,
                ts(posted),
                ts(closes),
                ts(closed),
                str(_MESSAGE_BASE + post_id),
                ts(revealed),
                ts(revealed),
                0,
                None,
                ts(posted + timedelta(minutes=_GRACE_MINUTES)),
            )
        )
        posts.append(
            _PostPlan(
                post_id,
                channel,
                quiz is not None,
                posted,
                closed or now,
                closes,
                seconds,
                len(question.options),
                correct_slot,
                weight * channel.activity * rng.uniform(0.5, 1.5),
            )
        )

    for channel in plans:
        deck = _Deck(questions, rng)
        window = timedelta(hours=channel.window_hours)
        lag = timedelta(seconds=rng.randrange(3600, 20 * 3600))
        times = [now - timedelta(days=days - 1 - day) - lag for day in range(days)]
        for day, posted in enumerate(times):
            closes = posted + window
            # Closed when its window passed or the next day's question came.
            ends = min(closes, times[day + 1]) if day + 1 < days else closes
            closed = ends if ends <= now else None
            add(
                channel,
                deck.deal(),
                quiz=None,
                posted=posted,
                closes=closes,
                closed=closed,
                weight=1.0,
            )
        quizzes = max(1, days // _LIVE_QUIZ_EVERY_DAYS)
        for day in sorted(rng.sample(range(days), min(quizzes, days))):
            quiz_id, seconds = next(quiz_ids), rng.choice(_LIVE_SECONDS)
            started = now - timedelta(
                days=days - 1 - day, seconds=rng.randrange(2 * 3600, 22 * 3600)
            )
            dealt = [deck.deal() for _ in range(_LIVE_QUESTIONS)]
            posted = started
            for sequence, question in enumerate(dealt, start=1):
                closes = posted + timedelta(seconds=seconds)
                add(
                    channel,
                    question,
                    quiz=(quiz_id, sequence),
                    posted=posted,
                    closes=closes,
                    closed=closes,
                    weight=_LIVE_POST_WEIGHT,
                )
                posted = closes + _LIVE_GAP
            quiz_rows.append(
                (
                    quiz_id,
                    channel.id,
                    "finished",
                    json.dumps([q.id for q in dealt]),
                    len(dealt),
                    seconds,
                    None,
                    None,
                    None,
                    f"{_MEMBER_BASE}",
                    ts(started),
                    ts(posted - _LIVE_GAP + timedelta(seconds=1)),
                )
            )
    return posts, quiz_rows, post_rows


def _allocate(total: int, weights: Sequence[float], cap: int) -> list[int]:
    """Split `total` answers over posts in proportion to `weights`, at most `cap` each."""
    if total > cap * len(weights):
        raise ValueError(f"{total} answers do not fit {len(weights)} posts of {cap} members")
    counts = [0] * len(weights)
    left, open_posts = total, list(range(len(weights)))
    while left > 0:
        weight_sum = sum(weights[p] for p in open_posts)
        shares = [(p, left * weights[p] / weight_sum) for p in open_posts]
        given = {p: int(share) for p, share in shares}
        # Largest remainders take the answers rounding left over.
        rest = left - sum(given.values())
        for p, _ in sorted(shares, key=lambda s: (int(s[1]) - s[1], s[0]))[:rest]:
            given[p] += 1
        left = 0
        for p, extra in given.items():
            room = cap - counts[p]
            counts[p] += min(extra, room)
            left += max(0, extra - room)
        open_posts = [p for p in open_posts if counts[p] < cap]
    return counts


class _Tally:
    """Answers counted per member, per channel and per (member, channel)."""

    def __init__(self, members: int, channels: int) -> None:
        self.channels = channels
        self.by_member = [0] * members
        self.by_channel = [0] * channels
        self.by_member_channel: dict[int, int] = {}  # key: member × channels + channel

    def of_member_in(self, member: int, channel: int) -> int:
        return self.by_member_channel.get(member * self.channels + channel, 0)


def _answer_rows(
    posts: list[_PostPlan],
    counts: list[int],
    population: _Members,
    rng: random.Random,
    first_id: int,
    ts: Callable[[datetime | None], Any],
    tally: _Tally,
) -> Iterator[tuple[Any, ...]]:
    answer_ids = itertools.count(first_id)
    chance, below = rng.random, rng.randrange
    skill, member_ids = population.skill, population.ids
    daily_points = points_for(True, live=False, time_left=0, time_limit=0)
    # Tally by hand: this loop runs a million times.
    by_member, by_member_channel, channels = (
        tally.by_member,
        tally.by_member_channel,
        tally.channels,
    )
    for post, count in zip(posts, counts, strict=True):
        if count == 0:
            continue
        channel, correct_slot, posted_at = post.channel, post.correct_slot, post.posted_at
        open_us = int((post.answers_until - posted_at).total_seconds() * 1_000_000)
        tally.by_channel[channel.index] += count
        for member in population.pick(channel.community, count, rng):
            # Most answers come early in the window: the square skews towards 0.
            after_us = int(chance() ** 2 * open_us)
            answered = posted_at + timedelta(microseconds=after_us)
            correct = chance() < skill[member]
            if correct:
                slot = correct_slot
            else:
                slot = below(post.options - 1)
                slot += slot >= correct_slot
            if not correct:
                points = 0
            elif post.live:
                time_left = (post.closes_at - answered).total_seconds()
                points = points_for(True, live=True, time_left=time_left, time_limit=post.seconds)
            else:
                points = daily_points
            by_member[member] += 1
            key = member * channels + channel.index
            by_member_channel[key] = by_member_channel.get(key, 0) + 1
            yield (
                next(answer_ids),
                post.id,
                channel.id,
                member_ids[member],
                slot,
                correct,
                points,
                ts(answered),
                after_us // 1000,
            )


# -- writing ------------------------------------------------------------------------------


class _Writer:
    """Bulk inserts on one backend's driver connection, in one transaction."""

    def __init__(self, driver: Any) -> None:
        self.driver = driver

    def time(self, moment: datetime | None) -> Any:
        """A naive UTC moment as the driver wants it for a UTCDateTime column."""
        raise NotImplementedError

    async def next_ids(self, tables: Sequence[str]) -> dict[str, int]:
        raise NotImplementedError

    async def insert(self, table: str, columns: Sequence[str], rows: list[tuple[Any, ...]]) -> None:
        raise NotImplementedError

    async def finish(self, tables: Sequence[str]) -> None:
        return None

    async def drop_plain_indexes(self, table: str) -> list[str]:
        """Drop the table's indexes that back no constraint; their definitions."""
        raise NotImplementedError

    async def create_indexes(self, definitions: list[str]) -> None:
        for definition in definitions:
            await self.driver.execute(definition)


class _SqliteWriter(_Writer):
    def time(self, moment: datetime | None) -> Any:
        # SQLAlchemy's storage format for UTCDateTime on SQLite: naive UTC text
        # with microseconds always written, so that text comparisons order right.
        return None if moment is None else moment.isoformat(" ", "microseconds")

    async def next_ids(self, tables: Sequence[str]) -> dict[str, int]:
        found = {}
        for table in tables:
            cursor = await self.driver.execute(f"SELECT coalesce(max(id), 0) + 1 FROM {table}")
            [found[table]] = await cursor.fetchone()
        return found

    async def insert(self, table: str, columns: Sequence[str], rows: list[tuple[Any, ...]]) -> None:
        if rows:
            marks = ", ".join("?" for _ in columns)
            sql = f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({marks})"
            await self.driver.executemany(sql, rows)

    async def drop_plain_indexes(self, table: str) -> list[str]:
        cursor = await self.driver.execute(
            "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = ? "
            "AND sql IS NOT NULL",  # no sql: the index of a UNIQUE constraint
            (table,),
        )
        found = list(await cursor.fetchall())
        for name, _ in found:
            await self.driver.execute(f'DROP INDEX "{name}"')
        return [sql for _, sql in found]


class _PostgresWriter(_Writer):
    def time(self, moment: datetime | None) -> Any:
        return None if moment is None else moment.replace(tzinfo=UTC)

    async def next_ids(self, tables: Sequence[str]) -> dict[str, int]:
        return {
            table: await self.driver.fetchval(f"SELECT coalesce(max(id), 0) + 1 FROM {table}")
            for table in tables
        }

    async def insert(self, table: str, columns: Sequence[str], rows: list[tuple[Any, ...]]) -> None:
        if rows:
            await self.driver.copy_records_to_table(table, records=rows, columns=list(columns))

    async def drop_plain_indexes(self, table: str) -> list[str]:
        found = await self.driver.fetch(
            "SELECT i.indexrelid::regclass::text AS name, pg_get_indexdef(i.indexrelid) AS sql "
            "FROM pg_index i WHERE i.indrelid = $1::regclass AND NOT EXISTS "
            "(SELECT 1 FROM pg_constraint c WHERE c.conindid = i.indexrelid)",
            table,
        )
        for row in found:
            await self.driver.execute(f"DROP INDEX {row['name']}")
        return [row["sql"] for row in found]

    async def finish(self, tables: Sequence[str]) -> None:
        for table in tables:
            # Rows came with their ids: move the sequences past them for the bot's inserts.
            await self.driver.execute(
                f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), "
                f"(SELECT coalesce(max(id), 0) + 1 FROM {table}), false)"
            )
        # Autovacuum would soon analyse the new rows; do it now, so the
        # planner sees the tables as a running database would.
        await self.driver.execute(f"ANALYZE {', '.join(tables)}")


class _DriverTransaction:
    """One transaction on the engine's driver connection, committed on success."""

    def __init__(self, engine: AsyncEngine) -> None:
        self.engine = engine

    async def __aenter__(self) -> _Writer:
        self._connection = await self.engine.connect()
        raw = await self._connection.get_raw_connection()
        driver = raw.driver_connection
        if self.engine.dialect.name == "sqlite":
            # A big page cache keeps the answers' indexes in memory while they
            # fill (the default 2 MB makes every insert a random page read).
            cursor = await driver.execute("PRAGMA cache_size")
            [self._cache_size] = await cursor.fetchone()
            await driver.execute("PRAGMA cache_size = -524288")
            await driver.execute("BEGIN IMMEDIATE")
            self._made: _Writer = _SqliteWriter(driver)
        else:
            self._transaction = driver.transaction()
            await self._transaction.start()
            self._made = _PostgresWriter(driver)
        return self._made

    async def __aexit__(self, kind: type[BaseException] | None, *_: object) -> None:
        try:
            driver = self._made.driver
            if self.engine.dialect.name == "sqlite":
                await driver.execute("COMMIT" if kind is None else "ROLLBACK")
                await driver.execute(f"PRAGMA cache_size = {int(self._cache_size)}")
            elif kind is None:
                await self._transaction.commit()
            else:
                await self._transaction.rollback()
        finally:
            await asyncio.shield(self._connection.close())
