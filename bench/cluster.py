"""Several `quizmaster run` processes on one PostgreSQL database, then kill -9 one.

Discord's shards are split over the processes (the fake Discord routes each
server to its shard), Slack workspaces install the app through the OAuth flow,
live quizzes run in many channels, members click as fast as `--concurrency`
clicks in flight allow (or, with `--rate N`, at a steady N clicks a second);
after `--before` seconds one process is killed and the clicking goes on for
`--after` seconds (to the servers whose shards are still connected). Daily
questions come due after the kill in some channels.

Prints: shards connected, workspaces installed, clicks acknowledged and stored,
the longest extra wait of any channel's next question after the kill, reveals
and daily posts made twice, and clicks per second before and after the kill
and over the whole run; at a steady rate also how long a click waited for its
reply and how late the questions due before the kill were revealed, which
says whether the processes kept up with that rate.
Run it with `--processes 1` for one process's rate on the same machine (it
kills nothing then).

    .venv/bin/python bench/cluster.py --postgres postgresql://postgres@127.0.0.1/test
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import os
import random
import re
import signal
import statistics
import sys
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from urllib.parse import urlencode

import aiohttp
import asyncpg
from sqlalchemy.engine import make_url

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from common import percentile  # noqa: E402  (bench/common.py)

from bot.quiz.buttons import parse_answer_custom_id  # noqa: E402
from tests.fakes.fake_discord import (  # noqa: E402
    MANAGE_GUILD,
    MEMBER_PERMISSIONS,
    FakeDiscord,
    buttons_of,
    text_of,
)
from tests.fakes.fake_slack import (  # noqa: E402
    CLIENT_ID,
    CLIENT_SECRET,
    SIGNING_SECRET,
    FakeSlack,
    SignedSender,
    slash_payload,
)
from tests.processes import bot_environment, free_port, start_run, wait_until_connected  # noqa: E402

MOD = "440000000000000001"
PLAYERS = [f"4500000000000{n:05d}" for n in range(40)]
DAILY_TITLE = "· Question of the day"


def guild_id(number: int) -> str:
    return str(((1_000_000_000_000 + number) << 22) | 1)


def channel_of(guild: str) -> str:
    return str(int(guild) + 7)


def shard_ranges(shards: int, processes: int) -> list[list[int]]:
    return [list(range(shards))[p::processes] for p in range(processes)]


async def fresh_database(url: str) -> tuple[str, str]:
    base = make_url(url)
    name = f"qm_bench_{uuid.uuid4().hex[:8]}"
    admin = await asyncpg.connect(base.set(drivername="postgresql").render_as_string(False))
    try:
        await admin.execute(f'CREATE DATABASE "{name}"')
    finally:
        await admin.close()
    return name, base.set(drivername="postgresql", database=name).render_as_string(False)


async def drop_database(url: str, name: str) -> None:
    admin = await asyncpg.connect(
        make_url(url).set(drivername="postgresql").render_as_string(False)
    )
    try:
        await admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1", name
        )
        await admin.execute(f'DROP DATABASE IF EXISTS "{name}"')
    finally:
        await admin.close()


async def install(fake: FakeSlack, port: int, team: str, session: aiohttp.ClientSession) -> bool:
    base = f"http://127.0.0.1:{port}"
    fake.redirect_url = f"{base}/slack/oauth_redirect"
    async with session.get(f"{base}/slack/install") as page:
        cookie = page.headers["Set-Cookie"].split(";")[0]
        [link] = re.findall(r'href="([^"]+)"', await page.text())
    approve = link.replace("&amp;", "&") + "&" + urlencode({"team": team})
    async with session.get(approve, allow_redirects=False) as approved:
        back = approved.headers["Location"]
    async with session.get(back, headers={"Cookie": cookie}) as done:
        return "is ready" in await done.text()


class Clicks:
    """Clicks on the open question of random live channels, `concurrency` at a time."""

    def __init__(self, fake: FakeDiscord, channels: dict[str, str]) -> None:
        self.fake = fake
        self.channels = channels  # channel → guild, of the shards still connected
        self.acked: list[float] = []  # when each "Locked in" came
        self.locked: set[tuple[str, str]] = set()  # (message, member) acknowledged
        self.waits: list[tuple[float, float]] = []  # (sent, seconds to its reply), acked
        self.unanswered = 0
        self.undelivered = 0
        self.idle = 0  # paced clicks that found no open question to press
        self.shed = 0  # paced clicks not sent: the cap of clicks in flight was reached

    async def one(self, paced: bool = False) -> None:
        channel = random.choice(list(self.channels))
        questions = self.fake.questions(channel)
        if not questions:
            await self.nothing_to_press(paced)
            return
        question = questions[-1]
        # Answers only: a hint or a report opens other paths (a report a form,
        # which is no message, so its click would wait 3 s and count unanswered).
        live = [
            b
            for b in buttons_of(question)
            if not b.get("disabled") and parse_answer_custom_id(str(b.get("custom_id")))
        ]
        if not live:
            await self.nothing_to_press(paced)
            return
        member = random.choice(PLAYERS)
        sent = time.monotonic()
        try:
            token = await self.fake.click(
                self.channels[channel], member, question["id"], random.choice(live)["custom_id"]
            )
        except AssertionError:  # its shard's socket is reconnecting: never delivered
            self.undelivered += 1
            return
        try:
            _, final = await self.fake.reply(token, within=3.0)
        except AssertionError:
            self.unanswered += 1
            return
        if text_of(final).startswith("Locked in"):
            self.acked.append(time.monotonic())
            self.waits.append((sent, self.acked[-1] - sent))
            self.locked.add((question["id"], member))

    async def nothing_to_press(self, paced: bool) -> None:
        if paced:
            self.idle += 1  # a paced click is not retried: the rate stays the rate
        else:
            await asyncio.sleep(0.05)

    async def run(self, until: float, concurrency: int) -> None:
        async def worker() -> None:
            while time.monotonic() < until:
                await self.one()

        await asyncio.gather(*(worker() for _ in range(concurrency)))

    async def paced(self, until: float, per_second: float, cap: int) -> None:
        """Clicks sent at a steady rate whatever the replies do (an open loop,
        as members click), each its own task, at most `cap` in flight."""
        in_flight: set[asyncio.Task[None]] = set()
        step, owed, last = 0.01, 0.0, time.monotonic()
        while (now := time.monotonic()) < until:
            owed += (now - last) * per_second
            last = now
            while owed >= 1:
                owed -= 1
                if len(in_flight) >= cap:
                    self.shed += 1
                    continue
                task = asyncio.create_task(self.one(paced=True))
                in_flight.add(task)
                task.add_done_callback(in_flight.discard)
            await asyncio.sleep(step)
        await asyncio.gather(*in_flight)

    async def click_until(self, until: float, args: argparse.Namespace) -> None:
        if args.rate:
            await self.paced(until, args.rate, args.concurrency)
        else:
            await self.run(until, args.concurrency)

    def waits_between(self, start: float, end: float) -> list[float]:
        return sorted(w for sent, w in self.waits if start <= sent < end)


def cpu_seconds(pid: int) -> float:
    """User and system CPU a process has used so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def machine_busy_seconds() -> float:
    """CPU seconds the whole machine has spent busy (every core, every process)."""
    values = [int(v) for v in Path("/proc/stat").read_text().split("\n")[0].split()[1:]]
    idle = values[3] + values[4]  # idle and iowait
    return (sum(values[:8]) - idle) / os.sysconf("SC_CLK_TCK")


class CpuMeter:
    """CPU used between two marks by each bot process, this process (the fakes
    and the clicking) and the rest of the machine (PostgreSQL, other work)."""

    def __init__(self, bots: list[asyncio.subprocess.Process]) -> None:
        self.bots = bots
        self.marks: list[tuple[list[float], float, float]] = []

    def mark(self) -> None:
        bots = [cpu_seconds(b.pid) if b.returncode is None else 0.0 for b in self.bots]
        own = sum(os.times()[:2])
        self.marks.append((bots, own, machine_busy_seconds()))

    def between(self, first: int, last: int) -> tuple[list[float], float, float]:
        (bots0, own0, all0), (bots1, own1, all1) = self.marks[first], self.marks[last]
        bots = [max(0.0, b - a) for a, b in zip(bots0, bots1, strict=True)]
        own = own1 - own0
        return bots, own, (all1 - all0) - sum(bots) - own


async def database_work(url: str, name: str) -> tuple[int, int]:
    """Transactions committed on the database so far, and questions closed."""
    connection = await asyncpg.connect(url)
    try:
        commits = await connection.fetchval(
            "SELECT xact_commit FROM pg_stat_database WHERE datname = $1", name
        )
        closed = await connection.fetchval("SELECT count(*) FROM posts WHERE closed_at IS NOT NULL")
    finally:
        await connection.close()
    return int(commits), int(closed)


async def reveal_lateness(url: str, start: datetime, end: datetime) -> list[float]:
    """How late each live question due between `start` and `end` was revealed
    (still unrevealed ones: late until now), in seconds, sorted; early closes count 0."""
    connection = await asyncpg.connect(url)
    try:
        rows = await connection.fetch(
            "SELECT EXTRACT(EPOCH FROM coalesce(revealed_at, now()) - closes_at) AS late"
            " FROM posts WHERE kind = 'live' AND closes_at >= $1 AND closes_at < $2",
            start,
            end,
        )
    finally:
        await connection.close()
    return sorted(max(0.0, float(r["late"])) for r in rows)


async def drain(stream: asyncio.StreamReader | None, into: Path) -> None:
    """Keep a bot's output flowing into a file, so a full pipe never blocks its logging."""
    if stream is None:
        return
    with into.open("wb") as out:
        while chunk := await stream.read(65536):
            out.write(chunk)


def rate(times: list[float], start: float, end: float) -> float:
    return sum(start <= t < end for t in times) / max(end - start, 1e-9)


def extra_wait_after(
    fake: FakeDiscord, channels: list[str], killed: datetime, seconds: float
) -> float:
    """Over the channels, the longest gap between two questions that ended
    after the kill, beyond the question's time (or the usual gap, if longer), in seconds."""
    before: list[float] = []
    after: list[float] = []
    for channel in channels:
        stamps = [
            datetime.fromisoformat(m["timestamp"])
            for m in fake.questions(channel)
            if DAILY_TITLE not in text_of(m)
        ]
        for earlier, later in itertools.pairwise(stamps):
            gap = (later - earlier).total_seconds()
            (after if later > killed else before).append(gap)
    # Beyond the question's own time: a question all its players answered
    # closes at once, so the usual gap can be far shorter.
    usual = max(statistics.median(before), seconds) if before else seconds
    return max(after, default=usual) - usual


def longest_waits(
    fake: FakeDiscord, channels: list[str], killed: datetime, count: int = 5
) -> list[str]:
    """The channels with the longest gaps that ended after the kill: when each
    of their questions was posted, from the kill (for --verbose)."""
    found: list[tuple[float, str, list[float]]] = []
    for channel in channels:
        stamps = [
            (datetime.fromisoformat(m["timestamp"]) - killed).total_seconds()
            for m in fake.questions(channel)
            if DAILY_TITLE not in text_of(m)
        ]
        gaps = [later - earlier for earlier, later in itertools.pairwise(stamps) if later > 0]
        if gaps:
            found.append((max(gaps), channel, stamps))
    found.sort(reverse=True)
    return [
        f"  {gap:.1f} s in {channel}: questions at "
        + ", ".join(f"{at:+.1f}" for at in stamps[-6:])
        + " s from the kill"
        for gap, channel, stamps in found[:count]
    ]


async def bench(args: argparse.Namespace) -> None:
    name, database = await fresh_database(args.postgres)
    discord = FakeDiscord(shards=args.shards)
    slack = await FakeSlack().start()
    await discord.start()
    guilds = [guild_id(n) for n in range(args.guilds)]
    for guild in guilds:
        discord.add_guild(guild, [channel_of(guild)])
        discord.add_member(guild, MOD, "Mod", permissions=MEMBER_PERMISSIONS | MANAGE_GUILD)
        for player in PLAYERS:
            discord.add_member(guild, player)
    teams = [f"T0W{n:04d}" for n in range(args.workspaces)]
    for team in teams:
        slack.add_workspace(team, f"Workspace {team[-4:]}")
    ranges = shard_ranges(args.shards, args.processes)
    processes: list[asyncio.subprocess.Process] = []
    drains: list[asyncio.Task[None]] = []
    health_ports, slack_ports = [], []
    work = Path(os.environ.get("TMPDIR", "/tmp")) / f"qm-cluster-{uuid.uuid4().hex[:6]}"
    try:
        for index, shards in enumerate(ranges):
            folder = work / f"p{index}"
            folder.mkdir(parents=True)
            health_ports.append(free_port())
            slack_ports.append(free_port())
            environment = bot_environment(
                folder,
                QUIZ_DATABASE_URL=database,
                QUIZ_HEALTH_PORT=str(health_ports[-1]),
                QUIZ_LOG_LEVEL="WARNING",
                DISCORD_TOKEN=discord.token,
                QUIZ_DISCORD_API_URL=discord.api_url,
                QUIZ_DISCORD_GATEWAY_URL=discord.gateway_url,
                QUIZ_DISCORD_SHARD_COUNT=str(args.shards),
                QUIZ_DISCORD_SHARD_IDS=",".join(map(str, shards)),
                SLACK_CLIENT_ID=CLIENT_ID,
                SLACK_CLIENT_SECRET=CLIENT_SECRET,
                SLACK_SIGNING_SECRET=SIGNING_SECRET,
                QUIZ_SLACK_API_URL=slack.api_url,
                QUIZ_SLACK_HOST="127.0.0.1",
                QUIZ_SLACK_PORT=str(slack_ports[-1]),
            )
            processes.append(await start_run(folder, environment))
            drains.append(asyncio.create_task(drain(processes[-1].stderr, folder / "stderr.log")))
            drains.append(asyncio.create_task(drain(processes[-1].stdout, folder / "stdout.log")))
        for port, process in zip(health_ports, processes, strict=True):
            await wait_until_connected(port, "discord", process, 120)
        connected = len({tuple(i["shard"]) for i in discord.identifies})
        print(
            f"shards connected        {connected} of {args.shards} over {args.processes} processes"
        )

        async with aiohttp.ClientSession() as session:
            installed = 0
            for number, team in enumerate(teams):
                installed += await install(
                    slack, slack_ports[number % len(slack_ports)], team, session
                )
        spread = "OAuth, spread over the processes"
        print(f"workspaces installed    {installed} of {args.workspaces} ({spread})")

        # Live quizzes, and daily questions due after the kill in some channels.
        live = [channel_of(g) for g in guilds[: args.channels]]
        by_channel = {channel_of(g): g for g in guilds}
        # Started over one question's time, as channels of a real bot are, so
        # their questions come due at a steady rate rather than all at once.
        began, batches = time.monotonic(), max(1, (len(live) + 49) // 50)
        for number, start in enumerate(range(0, len(live), 50)):
            await asyncio.sleep(
                max(0.0, began + number * args.seconds / batches - time.monotonic())
            )
            tokens = [
                await discord.slash(
                    by_channel[c], c, MOD, "start", {"questions": 50, "seconds": args.seconds}
                )
                for c in live[start : start + 50]
            ]
            await asyncio.gather(*(discord.reply(t, within=30) for t in tokens))
        senders = [SignedSender(f"http://127.0.0.1:{p}/slack/events") for p in slack_ports]
        for number, team in enumerate(teams):
            payload = slash_payload(
                "start 3 5",
                user="U0ADMIN",
                channel=f"C0{team}",
                response_url=slack.response_url("r"),
                team=team,
            )
            slack.add_user("U0ADMIN", "Ada", admin=True)
            try:
                await senders[number % len(senders)].slash(payload)
            except aiohttp.ClientOSError:  # a kept-alive connection the bot had closed
                await senders[number % len(senders)].slash(payload)
        now = datetime.now(UTC)
        due = (now + timedelta(seconds=args.before + 15 + 60)).replace(second=0, microsecond=0)
        daily = [channel_of(g) for g in guilds[args.channels : args.channels + args.daily]]
        tokens = [
            await discord.slash(
                by_channel[channel], channel, MOD, "schedule daily", {"time": f"{due:%H:%M}"}
            )
            for channel in daily
        ]
        await asyncio.gather(*(discord.reply(t, within=60) for t in tokens))

        clicks = Clicks(discord, {c: by_channel[c] for c in live})
        cpu = CpuMeter(processes)
        started, started_at = time.monotonic(), datetime.now(UTC)
        cpu.mark()
        db_work = [await database_work(database, name)]
        await clicks.click_until(started + args.before, args)
        cpu.mark()
        db_work.append(await database_work(database, name))
        # Questions due up to 2 s before the kill had time to be revealed on time.
        late = await reveal_lateness(database, started_at, datetime.now(UTC) - timedelta(seconds=2))
        # One process alone is the baseline: it keeps running (nobody would take over).
        victim = 1 if len(processes) > 1 else None
        if victim is not None:
            processes[victim].send_signal(signal.SIGKILL)
            await processes[victim].wait()
        killed, killed_at = time.monotonic(), datetime.now(UTC)
        if victim is not None:
            dead = set(ranges[victim])
            clicks.channels = {
                c: g for c, g in clicks.channels.items() if (int(g) >> 22) % args.shards not in dead
            }
        wait_daily = max(0.0, (due - datetime.now(UTC)).total_seconds() + 10)
        # Long enough for every channel of the killed process to be taken over.
        after = max(args.after, wait_daily, args.seconds + 20)
        await clicks.click_until(time.monotonic() + after, args)
        ended = time.monotonic()
        # Daily posts late behind the reveals still count: wait for them (60 s at most).
        with contextlib.suppress(AssertionError):
            await discord.wait_for(
                lambda: all(
                    any(DAILY_TITLE in text_of(m) for m in discord.questions(c)) for c in daily
                ),
                60,
            )
        await asyncio.sleep(2)  # answers in flight reach the database

        stored_db = await asyncpg.connect(database)
        try:
            stored = await stored_db.fetchval("SELECT count(*) FROM answers")
        finally:
            await stored_db.close()
        reveals: dict[str, int] = {}
        for call in discord.calls:
            if call.method == "PATCH" and any(
                "(closed)" in (e.get("title") or "") for e in (call.body or {}).get("embeds") or []
            ):
                reveals[call.path] = reveals.get(call.path, 0) + 1
        doubled_reveals = sum(count > 1 for count in reveals.values())
        if args.verbose:
            for path, count in reveals.items():
                if count > 1:
                    times = [
                        f"{c.at - killed:+.1f}s ({c.status})"
                        for c in discord.calls
                        if c.method == "PATCH" and c.path == path
                    ]
                    print(f"  revealed twice: {path} at {', '.join(times)} from the kill")
        doubled_daily = sum(
            sum(DAILY_TITLE in text_of(m) for m in discord.questions(c)) > 1 for c in daily
        )
        for sender in senders:
            await sender.close()
        made_daily = sum(
            any(DAILY_TITLE in text_of(m) for m in discord.questions(c)) for c in daily
        )
        live_after = [c for c in live if c in clicks.channels or len(processes) == 1]
        print(
            f"clicks acknowledged     {len(clicks.locked)} (stored: {stored} answers; "
            f"{clicks.unanswered} unanswered in 3 s, {clicks.undelivered} not delivered "
            "while a shard reconnected)"
        )
        lost = max(0, len(clicks.locked) - stored)
        print(f"acknowledged and lost   {lost}")
        extra = extra_wait_after(discord, live, killed_at, args.seconds)
        print(f"longest extra wait      {extra:.1f} s (a channel's next question, after the kill)")
        if args.verbose:
            print("\n".join(longest_waits(discord, live, killed_at)))
        print(f"reveals made twice      {doubled_reveals} (of {len(reveals)} reveals)")
        print(f"daily posts made twice  {doubled_daily} (of {made_daily} made, {len(daily)} due)")
        print(f"clicks/s before kill    {rate(clicks.acked, started, killed):.0f}")
        if args.rate:
            waits = clicks.waits_between(started, killed)
            print(
                f"at {args.rate:.0f} offered/s      before the kill: reply p50 "
                f"{1000 * percentile(waits, 0.5, 0.0):.0f} ms, "
                f"p99 {1000 * percentile(waits, 0.99, 0.0):.0f} ms; "
                f"{clicks.shed} not sent (over {args.concurrency} in flight), "
                f"{clicks.idle} found no open question"
            )
        print(
            f"reveals before kill     {len(late)} due, "
            f"late p50 {percentile(late, 0.5, 0.0):.1f} s, "
            f"p99 {percentile(late, 0.99, 0.0):.1f} s, longest {max(late, default=0.0):.1f} s"
        )
        window = killed - started
        acked_before = sum(started <= t < killed for t in clicks.acked)
        commits, closes = (b - a for a, b in zip(*db_work, strict=True))
        print(
            f"database before kill    {commits / window:.0f} transactions/s, "
            f"{closes / window:.1f} questions closed/s, "
            f"{commits / max(acked_before + closes, 1):.1f} transactions per click or close"
        )
        bots, own, rest = cpu.between(0, 1)
        per_click = [f"{1000 * b / max(acked_before, 1):.1f}" for b in bots]
        print(
            f"CPU before kill         bots {' + '.join(f'{b / window:.2f}' for b in bots)} cores, "
            f"fakes and clicking {own / window:.2f}, rest (PostgreSQL, other work) "
            f"{rest / window:.2f} (of {os.cpu_count()}); "
            f"bot CPU per click {' + '.join(per_click)} ms"
        )
        after = rate(clicks.acked, killed, ended)
        print(
            f"clicks/s after kill     {after:.0f} (on the {len(live_after)} channels still served)"
        )
        # A process can answer more clicks for a while by closing questions late;
        # the whole run counts the catching up too.
        print(f"clicks/s whole run      {rate(clicks.acked, started, ended):.0f}")
    finally:
        for process in processes:
            if process.returncode is None:
                process.send_signal(signal.SIGTERM)
        for process in processes:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(process.wait(), 30)
        await discord.close()
        await slack.close()
        await drop_database(args.postgres, name)
        await asyncio.gather(*drains, return_exceptions=True)
        print(f"bot output in {work}")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--postgres", default=os.environ.get("QUIZ_TEST_POSTGRES_URL"))
    parser.add_argument("--processes", type=int, default=3)
    parser.add_argument("--shards", type=int, default=6)
    parser.add_argument("--guilds", type=int, default=3000)
    parser.add_argument("--workspaces", type=int, default=50)
    parser.add_argument("--channels", type=int, default=1000, help="live quizzes on Discord")
    parser.add_argument("--seconds", type=int, default=60, help="each live question's time")
    parser.add_argument("--daily", type=int, default=50, help="channels with a daily question")
    parser.add_argument(
        "--concurrency", type=int, default=32, help="clicks in flight (with --rate: at most)"
    )
    parser.add_argument(
        "--rate",
        type=float,
        default=0.0,
        help="clicks a second, sent steadily (0: as fast as replies allow)",
    )
    parser.add_argument("--before", type=float, default=20.0)
    parser.add_argument("--after", type=float, default=30.0)
    parser.add_argument(
        "--verbose", action="store_true", help="when each doubled reveal came, the longest waits"
    )
    args = parser.parse_args()
    if not args.postgres:
        parser.error("set QUIZ_TEST_POSTGRES_URL or pass --postgres URL")
    asyncio.run(bench(args))


if __name__ == "__main__":
    main()
