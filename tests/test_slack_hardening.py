"""Slack under attack and under load, through the real Bolt app and the fake
Slack: requests checked before parsing, replays refused, a click acknowledged
only once its answer is stored, and names and bank text that cannot ping."""

from __future__ import annotations

import asyncio
import logging
import sqlite3
import time
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from urllib.parse import urlencode

import pytest
from slack_sdk.signature import SignatureVerifier
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.adapters.console.adapter import ConsoleAdapter
from bot.adapters.discord.dialect import DISCORD_DIALECT
from bot.adapters.slack.dialect import SLACK_DIALECT
from bot.adapters.slack.http import ReplayCache, RequestGate
from bot.quiz.bank import Catalog, load_banks
from bot.storage.seen_requests import SeenRequests
from tests.conftest import ROOT
from tests.fakes.fake_slack import (
    SIGNING_SECRET,
    Call,
    FakeSlack,
    click_payload,
    slash_payload,
    view_submission_payload,
)
from tests.test_slack import (  # the fixtures, shared with test_slack.py
    ADMIN,
    CHANNEL,
    HOST,
    MEMBER,
    TYPED,
    MakeSlack,
    Slack,
    fake,
    make_slack,
    open_form,
    reply_buttons,
    review_click,
    submit_view,
)

__all__ = ["fake", "make_slack"]  # fixtures used by name

ONE_MB = 1024 * 1024


def _database(slack: Slack) -> Path:
    path = slack.repository.engine.url.database
    assert path
    return Path(path)


def _stored(slack: Slack, question: Call) -> set[str]:
    """Who has an answer stored for `question`, read by a connection of our own
    (the bot's single connection may be the one waiting for a lock)."""
    post_id = int(next(iter(question.buttons().values())).split(":")[2])
    with sqlite3.connect(_database(slack)) as reader:
        rows = reader.execute("SELECT user_id FROM answers WHERE post_id = ?", (post_id,))
        return {user for (user,) in rows}


@asynccontextmanager
async def _writes_held(slack: Slack) -> AsyncIterator[None]:
    """Another writer holds the database: the bot's answer writes wait (as they
    would behind a slow disk or a busy PostgreSQL) until the block ends."""
    holder = sqlite3.connect(_database(slack), isolation_level=None, timeout=0)
    while True:  # the bot may be mid-transaction; it needs the loop to finish it
        try:
            holder.execute("BEGIN IMMEDIATE")
            break
        except sqlite3.OperationalError:
            await asyncio.sleep(0.02)
    try:
        yield
    finally:
        holder.execute("ROLLBACK")
        holder.close()


def _lines(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    """What the bot, Bolt and aiohttp logged (not the database driver's chatter)."""
    return [r for r in caplog.records if r.name.startswith(("bot", "slack", "aiohttp"))]


# -- requests checked before they are parsed ----------------------------------------------


async def test_unsigned_forged_stale_and_malformed_requests_get_401_with_one_short_line(
    make_slack: MakeSlack, caplog: pytest.LogCaptureFixture
) -> None:
    slack = await make_slack()
    sender = slack.sender
    assert sender is not None
    now = str(int(time.time()))
    form = {"Content-Type": "application/x-www-form-urlencoded"}
    deep = b"payload=" + b"[" * 50_000 + b"]" * 50_000
    good = urlencode(slash_payload("start 1 30", user=ADMIN, channel=CHANNEL, response_url="x"))
    attempts: list[tuple[bytes, dict[str, str]]] = [
        (b"payload=not json", form),
        (b"[1, 2, 3]", {"Content-Type": "application/json"}),
        (b'"just a string"', {"Content-Type": "application/json"}),
        (deep, form),
        (good.encode(), {**form, "X-Slack-Signature": "v0=" + "0" * 64}),  # no timestamp
        (good.encode(), {**form, "X-Slack-Request-Timestamp": now}),  # no signature
        (
            good.encode(),
            {**form, "X-Slack-Request-Timestamp": "soon", "X-Slack-Signature": "v0=" + "0" * 64},
        ),
        (
            good.encode(),
            {**form, "X-Slack-Request-Timestamp": "1e9", "X-Slack-Signature": "v0=" + "0" * 64},
        ),
        (good.encode(), {**form, "X-Slack-Request-Timestamp": now, "X-Slack-Signature": "v0=1"}),
        (good.encode(), sender.signed_headers(good.encode(), int(time.time()) - 301)),
        (
            b"\xff\xfe not utf-8",
            {**form, "X-Slack-Request-Timestamp": now, "X-Slack-Signature": "v0=" + "a" * 64},
        ),
    ]
    caplog.clear()
    with caplog.at_level(logging.INFO):
        statuses = [(await sender.raw(body, headers))[0] for body, headers in attempts]
    assert statuses == [401] * len(attempts)
    assert len(_lines(caplog)) <= len(attempts)
    assert not [r for r in _lines(caplog) if r.exc_info or len(r.getMessage()) > 200]

    # Correctly signed, but not what Slack ever sends: a clean 400, no traceback.
    garbage = [b"payload=not json", b"payload=[1,2]", b'payload="text"', deep, b"[1]", b'"x"']
    caplog.clear()
    with caplog.at_level(logging.INFO):
        signed = [(await sender.raw(body, sender.signed_headers(body)))[0] for body in garbage]
    assert all(400 <= status < 500 for status in signed), signed
    assert not [r for r in _lines(caplog) if r.exc_info or len(r.getMessage()) > 200]

    # Over 64 KB: 413, whether it says its size up front or not.
    huge = b"payload=" + b"x" * (64 * 1024 + 10)
    assert (await sender.raw(huge, sender.signed_headers(huge)))[0] == 413

    async def chunks() -> AsyncIterator[bytes]:
        for _ in range(3):
            yield b"x" * (ONE_MB // 2)

    signed_looking = {
        **form,
        "X-Slack-Request-Timestamp": now,
        "X-Slack-Signature": "v0=" + "a" * 64,
    }
    async with sender.session.post(sender.url, data=chunks(), headers=signed_looking) as response:
        assert response.status == 413
    # Unsigned, it is refused before a byte of its body is read.
    async with sender.session.post(sender.url, data=chunks(), headers=form) as response:
        assert response.status == 401

    await asyncio.sleep(0.3)
    assert slack.fake.posts() == [] and slack.fake.responses == []
    # And the door still opens for Slack itself.
    assert (await slack.command("config show")).private


async def test_a_replayed_signed_start_is_refused_and_starts_nothing(
    make_slack: MakeSlack,
) -> None:
    slack = await make_slack()
    sender = slack.sender
    assert sender is not None
    key = uuid.uuid4().hex
    body = urlencode(
        slash_payload(
            "start 1 30", user=ADMIN, channel=CHANNEL, response_url=slack.fake.response_url(key)
        )
    ).encode()
    headers = sender.signed_headers(body)
    assert (await sender.raw(body, headers))[0] == 200
    await slack.next_question()
    assert (await slack.command("stop")).text == "Quiz stopped."

    # The same request again, as someone who captured it would send it (or as
    # Slack resends it): answered 200, so Slack sees no failing endpoint, and ignored.
    assert (await sender.raw(body, headers))[0] == 200
    await asyncio.sleep(0.5)
    assert len(slack.fake.questions(CHANNEL)) == 1
    assert len(slack.fake.responses_to(key)) == 1


def test_the_replay_cache_forgets_after_five_minutes_and_stays_bounded() -> None:
    now = 1_000.0
    cache = ReplayCache(lambda: now, limit=100)
    assert not cache.seen("a", now + 300)
    assert cache.seen("a", now + 300)
    now += 301
    assert not cache.seen("a", now + 300)  # expired: Slack's window refuses it anyway
    for n in range(1_000):
        cache.seen(f"k{n}", now + 300)
    assert len(cache) <= 100


async def test_the_gate_keeps_slacks_five_minute_window_on_its_own_clock() -> None:
    now = 1_700_000_000.0
    gate = RequestGate(SIGNING_SECRET, clock=lambda: now)
    signer = SignatureVerifier(SIGNING_SECRET)
    body = b"command=%2Fquiz&text=stats"

    def headers(at: int) -> dict[str, str]:
        signature = signer.generate_signature(timestamp=str(at), body=body)
        assert signature is not None
        return {"X-Slack-Request-Timestamp": str(at), "X-Slack-Signature": signature}

    sent = int(now)
    now += 299
    assert gate.refusal(body, headers(sent)) is None
    assert await gate.first_time(headers(sent))
    assert gate.refusal(body, headers(sent)) is None
    assert not await gate.first_time(headers(sent))  # a repeat
    now += 2  # 301 s after it was signed
    assert gate.refusal(body, headers(sent + 1)) is None
    assert gate.refusal(body, headers(sent)) == "stale timestamp"
    assert gate.refusal(body, headers(int(now) + 301)) == "stale timestamp"  # from the future


# -- acknowledged means stored -------------------------------------------------------------


async def test_an_http_click_is_answered_200_only_once_its_answer_is_stored(
    make_slack: MakeSlack,
) -> None:
    slack = await make_slack()
    await slack.command("start 1 60")
    question = await slack.next_question()
    async with _writes_held(slack):
        clicking = asyncio.create_task(slack.click(question, "A", MEMBER))
        await asyncio.sleep(0.5)  # the bot is now waiting to store it
    assert await clicking == 200
    assert _stored(slack, question) == {MEMBER}  # stored before the 200 came back
    [reply] = await slack.fake.wait_for(lambda: slack.fake.ephemerals(MEMBER), what="the reply")
    assert reply.text.startswith("Locked in A")
    await slack.command("stop")


async def test_a_socket_mode_click_is_acked_only_once_its_answer_is_stored(
    make_slack: MakeSlack,
) -> None:
    slack = await make_slack(socket=True)
    fake = slack.fake
    await slack.command("start 1 60")
    question = await slack.next_question()
    async with _writes_held(slack):
        envelope = await fake.send_envelope("interactive", slack.click_body(question, "B", HOST))
        await asyncio.sleep(0.5)
        early = envelope in fake.acks
    await fake.wait_for(lambda: envelope in fake.acks, what="the ack")
    stored_at_ack = _stored(slack, question)
    assert not early
    assert stored_at_ack == {HOST}
    await slack.command("stop")


async def test_a_click_that_cannot_be_stored_in_time_is_told_to_click_again(
    make_slack: MakeSlack,
) -> None:
    slack = await make_slack()
    slack.platform.ack_within = 0.3  # Slack allows 3 s; the default waits 2.5 s
    await slack.command("start 1 60")
    question = await slack.next_question()
    async with _writes_held(slack):
        assert await slack.click(question, "C", MEMBER) == 200  # acked, no error shown
        [unsure] = await slack.fake.wait_for(
            lambda: slack.fake.ephemerals(MEMBER), what="the reply to the slow click"
        )
        assert "could not confirm your answer" in unsure.text
        assert "click your answer again" in unsure.text
    # The write went through once the database was free; a second click is safe.
    await slack.fake.wait_for(lambda: _stored(slack, question) == {MEMBER}, what="the write")
    assert await slack.click(question, "D", MEMBER) == 200
    replies = await slack.fake.wait_for(
        lambda: len(slack.fake.ephemerals(MEMBER)) == 2 and slack.fake.ephemerals(MEMBER),
        what="the second reply",
    )
    assert replies[1].text.startswith("You already answered C")
    await slack.command("stop")


async def test_close_waits_for_clicks_in_flight_and_their_answers_are_stored(
    make_slack: MakeSlack,
) -> None:
    slack = await make_slack()
    await slack.command("start 1 60")
    question = await slack.next_question()
    players = [f"U3P{n:02d}" for n in range(10)]
    async with _writes_held(slack):
        clicks = [asyncio.create_task(slack.click(question, "A", p)) for p in players]
        # Every click's request in the bot's hands (on a busy machine a fixed
        # 0.5 s was not always enough for all ten to arrive).
        for _ in range(200):
            if len(slack.platform._in_flight) >= len(players):
                break
            await asyncio.sleep(0.05)
        closing = asyncio.create_task(slack.platform.close())
        await asyncio.sleep(0.3)
        assert not closing.done()  # it waits for the clicks it took
    await asyncio.wait_for(closing, 15)
    statuses = await asyncio.gather(*clicks, return_exceptions=True)
    acked = {p for p, status in zip(players, statuses, strict=True) if status == 200}
    assert acked and acked <= _stored(slack, question)
    # Their private replies went out before close() returned.
    assert {c.params["user"] for c in slack.fake.ephemerals()} >= acked


async def test_socket_mode_close_acks_and_stores_the_envelopes_in_flight(
    make_slack: MakeSlack,
) -> None:
    slack = await make_slack(socket=True)
    fake = slack.fake
    await slack.command("start 1 60")
    question = await slack.next_question()
    players = [f"U3S{n:02d}" for n in range(10)]
    async with _writes_held(slack):
        envelopes = [
            await fake.send_envelope("interactive", slack.click_body(question, "B", p))
            for p in players
        ]
        await asyncio.sleep(0.5)
        closing = asyncio.create_task(slack.platform.close())
        await asyncio.sleep(0.3)
        assert not closing.done()
    await asyncio.wait_for(closing, 15)
    assert all(envelope in fake.acks for envelope in envelopes)  # acked before the socket closed
    assert _stored(slack, question) == set(players)
    assert {c.params["user"] for c in fake.ephemerals()} >= set(players)


# -- names and bank text that cannot ping --------------------------------------------------

HOSTILE = ["<!channel>", "<!everyone>", "<!subteam^S1>", f"<@{ADMIN}>", "Tom & <b>Jerry</b>"]
HOSTILE_USERS = [f"U4H{n}" for n in range(len(HOSTILE))]
HOSTILE_BANK = """\
id: hostile
title: "<!here> & friends"
questions:
  - id: hostile-01
    prompt: "Who does <!channel> notify, and is 1 < 2?"
    options:
      - "<@U0MEMBER>"
      - "<!everyone>"
    answer: A
    explanation: "<!subteam^S1> & <#C0OTHER> are markup too."
"""


@pytest.fixture
def catalog(tmp_path: Path) -> Catalog:
    """The shipped banks plus one whose text looks like Slack markup."""
    folder = tmp_path / "banks"
    folder.mkdir()
    (folder / "hostile.yaml").write_text(HOSTILE_BANK)
    found, problems = load_banks([ROOT / "questions", folder])
    assert not problems, problems
    return found


def _raw(call: Call) -> str:
    """Everything Slack parses for markup in a call: the text fallback and each
    mrkdwn text (plain_text, such as the header, never pings)."""
    found = [str(call.params.get("text", ""))]

    def walk(node: object) -> None:
        if isinstance(node, dict):
            if node.get("type") == "mrkdwn":
                found.append(str(node.get("text", "")))
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(call.blocks)
    return "\n".join(found)


def _assert_inert(raw: str) -> None:
    for markup in (
        "<!channel>",
        "<!everyone>",
        "<!here>",
        "<!subteam^S1>",
        "<@U0MEMBER>",
        "<#C0OTHER>",
    ):
        assert markup not in raw, markup


async def test_with_mentions_off_hostile_names_and_bank_text_ping_nobody(
    make_slack: MakeSlack,
) -> None:
    slack = await make_slack()
    fake: FakeSlack = slack.fake
    for user, name in zip(HOSTILE_USERS, HOSTILE, strict=True):
        fake.add_user(user, name)
    await slack.command("config set mentions off")
    await slack.command("start 1 60 bank=hostile")
    question = await slack.next_question()
    _assert_inert(_raw(question))
    assert "&lt;!channel&gt;" in question.params["text"]
    assert "1 &lt; 2" in question.params["text"]
    assert "&lt;!here&gt; &amp; friends" in question.params["text"]
    for user in HOSTILE_USERS:
        assert await slack.click(question, "A", user) == 200
    await fake.wait_for(lambda: len(fake.ephemerals()) == len(HOSTILE_USERS), what="replies")
    await slack.command("stop")

    reveal = await slack.reveal_of(question)
    scores = await fake.wait_for(
        lambda: [c for c in fake.posts(CHANNEL) if "Quiz stopped" in c.text], what="scores"
    )
    for call in (reveal, scores[0]):
        raw = _raw(call)
        _assert_inert(raw)
        assert f"<@{ADMIN}>" not in raw
    assert "First correct: &lt;!channel&gt;" in reveal.params["text"]
    board = str(scores[0].params["text"])
    for name in (
        "&lt;!channel&gt;",
        "&lt;!everyone&gt;",
        "&lt;!subteam^S1&gt;",
        f"&lt;@{ADMIN}&gt;",
    ):
        assert name in board
    assert "Tom &amp; &lt;b&gt;Jerry&lt;/b&gt;" in board  # escaped once, not twice
    # People still read the names as typed.
    assert "<!channel>" in scores[0].text and "Tom & <b>Jerry</b>" in scores[0].text


async def test_with_mentions_on_members_are_still_mentioned(make_slack: MakeSlack) -> None:
    slack = await make_slack()
    slack.fake.add_user(HOSTILE_USERS[0], HOSTILE[0])
    await slack.command("start 1 60 bank=hostile")
    question = await slack.next_question()
    assert await slack.click(question, "A", HOSTILE_USERS[0]) == 200
    await slack.fake.wait_for(lambda: slack.fake.ephemerals(), what="the reply")
    await slack.command("stop")
    reveal = await slack.reveal_of(question)
    assert f"First correct: <@{HOSTILE_USERS[0]}>" in reveal.params["text"]
    _assert_inert(_raw(reveal))


def test_escaping_is_per_platform() -> None:
    assert SLACK_DIALECT.escape_name("<!channel> & co") == "&lt;!channel&gt; &amp; co"
    assert SLACK_DIALECT.escape_text("1 < 2") == "1 &lt; 2"
    discord = DISCORD_DIALECT.escape_name("**bold** <@123> @everyone a_b")
    assert discord == "\\*\\*bold\\*\\* \\<\\@123\\> \\@everyone a\\_b"
    assert DISCORD_DIALECT.escape_text("`code`") == "`code`"  # bank markdown is meant to show
    assert ConsoleAdapter.dialect.escape_name("<!channel>") == "<!channel>"


# -- ids and workspaces ---------------------------------------------------------------------


async def test_a_slack_connect_member_s_submission_lands_in_the_installing_workspace(
    make_slack: MakeSlack,
) -> None:
    slack = await make_slack()
    assert slack.sender is not None
    view = await open_form(slack, "submit", MEMBER)
    # A member of a partner workspace in a shared channel: their own team is not ours.
    body = view_submission_payload(view, TYPED, user=MEMBER, team="T0VISITOR")
    status, _ = await slack.sender.click(body)
    assert status == 200
    submissions = slack.repository.submissions
    await slack.fake.wait_for(lambda: slack.fake.ephemerals(MEMBER), what="the answer")
    assert await submissions.pending_total("slack", "T0TEAM") == 1
    assert await submissions.pending_total("slack", "T0VISITOR") == 0


@pytest.mark.parametrize(
    "user", ["U0EV><!channel><@U0X", "u0lower", "U" + "A" * 100, "U0 SPACE", "C0NOTAUSER"]
)
async def test_a_signed_request_with_an_id_slack_never_makes_does_nothing(
    make_slack: MakeSlack, user: str
) -> None:
    slack = await make_slack()
    sender = slack.sender
    assert sender is not None
    key = uuid.uuid4().hex
    payload = slash_payload(
        "start 1 30", user=user, channel=CHANNEL, response_url=slack.fake.response_url(key)
    )
    assert (await sender.slash(payload))[0] == 200
    await asyncio.sleep(0.4)
    assert slack.fake.questions(CHANNEL) == [] and slack.fake.responses_to(key) == []
    assert slack.fake.posts() == []


async def test_stats_asked_in_another_workspace_show_nothing_from_this_one(
    make_slack: MakeSlack,
) -> None:
    slack = await make_slack()
    await slack.command("start 1 60")
    question = await slack.next_question()
    await slack.click(question, slack.letter(question, correct=True), MEMBER)
    await slack.fake.wait_for(lambda: slack.fake.ephemerals(MEMBER), what="the lock-in")
    await slack.command("stop")
    await slack.reveal_of(question)
    here = await slack.command(f"stats <@{MEMBER}>", user=HOST)
    assert "Answered: 1" in here.text and "Correct: 1 (100%)" in here.text

    # The same member, asked about from a workspace the quiz never ran in.
    key = uuid.uuid4().hex
    elsewhere = slash_payload(
        f"stats <@{MEMBER}>",
        user="U0STRANGER",
        channel="C0FAR",
        response_url=slack.fake.response_url(key),
        team="T0ELSEWHERE",
    )
    assert slack.sender is not None
    assert (await slack.sender.slash(elsewhere))[0] == 200
    [body] = await slack.fake.wait_for(lambda: slack.fake.responses_to(key), what="stats")
    text = str(body["text"])
    assert "Answered: 0" in text and "Points: 0" in text
    assert "By topic" not in text and "review" not in text.lower()


async def test_a_channel_moderator_moderates_the_channel_but_not_the_community_bank(
    make_slack: MakeSlack,
) -> None:
    slack = await make_slack()
    await slack.command("config set moderator-group <!subteam^S0HOSTS|@quiz-hosts>")
    await submit_view(slack, await open_form(slack, "submit", MEMBER), MEMBER, **TYPED)
    # HOST is in this channel's moderator group: the channel's quizzes are theirs...
    assert (await slack.command("stop", user=HOST)).text.startswith("No quiz is running")
    # ...the community's bank is not: no queue, no accepting, no removing.
    queue = await slack.command("submissions", user=HOST)
    assert queue.private and "moderators can review submissions" in queue.text
    removed = await slack.command("remove-question community-1", user=HOST)
    assert removed.private and "moderators can remove community questions" in removed.text
    card = await slack.command("submissions", user=ADMIN)  # an admin reviews
    accept = reply_buttons(card.body)["Accept"]
    await review_click(slack, accept, "Accept", HOST)
    [no] = await slack.fake.wait_for(lambda: slack.fake.ephemerals(HOST), what="a refusal")
    assert "moderators can review submissions" in no.text
    assert await slack.repository.submissions.pending_total("slack", "T0TEAM") == 1


async def _report_first_question(slack: Slack, reporter: str, text: str) -> None:
    """A one-question quiz in CHANNEL, revealed, then reported by `reporter`."""
    await slack.command("start 1 60", user=ADMIN)
    question = await slack.next_question()
    await slack.command("skip", user=ADMIN)
    reveal = await slack.reveal_of(question)
    before = len(slack.fake.views)
    body = click_payload(
        reveal.buttons()["Report a problem"],
        "Report a problem",
        user=reporter,
        channel=CHANNEL,
        message_ts=slack.ts_of(question),
        response_url=slack.fake.response_url(f"report-{uuid.uuid4().hex}"),
    )
    assert slack.sender is not None
    assert (await slack.sender.click(body))[0] == 200
    [view] = await slack.fake.wait_for(lambda: slack.fake.views[before:], what="the form")
    assert await submit_view(slack, view, reporter, reason="Typo", text=text) == {}


async def test_reports_are_for_community_moderators_and_stay_in_their_workspace(
    make_slack: MakeSlack,
) -> None:
    slack = await make_slack()
    await slack.command("config set moderator-group <!subteam^S0HOSTS|@quiz-hosts>")
    await _report_first_question(slack, MEMBER, "secret words of workspace one")
    # HOST moderates this channel only: the community's reports are not theirs.
    refused = await slack.command("reports", user=HOST)
    assert refused.private and "a channel's moderator role is not enough" in refused.text
    assert "secret words" not in refused.text
    assert "secret words" in (await slack.command("reports", user=ADMIN)).text

    # An admin of another workspace sees that workspace's queue: empty.
    key = uuid.uuid4().hex
    elsewhere = slash_payload(
        "reports",
        user=ADMIN,
        channel="C0FAR",
        response_url=slack.fake.response_url(key),
        team="T0ELSEWHERE",
    )
    assert slack.sender is not None
    assert (await slack.sender.slash(elsewhere))[0] == 200
    [body] = await slack.fake.wait_for(lambda: slack.fake.responses_to(key), what="reports")
    assert "No open reports" in str(body["text"]) and "secret" not in str(body)


async def test_a_signed_request_is_claimed_by_one_process_until_it_expires(
    engine: AsyncEngine,
) -> None:
    """Several processes on one database: only the first to see a signature
    acts on it; once its window is over and pruned it can be claimed again."""
    now = [1_000.0]
    one, other = SeenRequests(engine, lambda: now[0]), SeenRequests(engine, lambda: now[0])
    assert await one.first_time("v0=" + "a" * 64, 1_300.0)
    assert not await other.first_time("v0=" + "a" * 64, 1_300.0)
    assert not await one.first_time("v0=" + "a" * 64, 1_300.0)
    assert await other.first_time("v0=" + "b" * 64, 1_300.0)
    now[0] = 1_400.0  # both windows over; the next claim prunes them
    assert await other.first_time("v0=" + "a" * 64, 1_700.0)
    assert not await one.first_time("v0=" + "a" * 64, 1_700.0)


async def test_of_many_claims_at_once_each_request_is_acted_on_once(engine: AsyncEngine) -> None:
    """A burst: claims made together share statements, and a request sent
    twice within it (a retry racing the original) still counts once."""
    seen = SeenRequests(engine, lambda: 1_000.0)
    keys = [f"v0={n:064d}" for n in range(200)]
    claims = await asyncio.gather(*(seen.first_time(key, 1_300.0) for key in keys + keys))
    assert claims == [True] * 200 + [False] * 200
