"""The Slack adapter: the real slack-bolt app against a local fake Slack
(tests/fakes/fake_slack.py), over signed HTTP requests and over Socket Mode."""

from __future__ import annotations

import asyncio
import contextlib
import html
import io
import json
import random
import re
import socket
import time
import uuid
import zipfile
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml

from bot.adapters.slack.blocks import blocks, escape
from bot.adapters.slack.pacing import PRUNE_AFTER, ChannelPacer
from bot.adapters.slack.platform import SlackPlatform
from bot.chat import Button, ButtonStyle, OutMessage, Target
from bot.clock import Clock, SystemClock
from bot.config import Settings
from bot.platforms import StartError
from bot.quiz.bank import Catalog, Question
from bot.quiz.service import QuizService
from bot.serving import Limits
from bot.storage.db import Database, open_database
from bot.storage.repository import Repository
from tests.conftest import ROOT
from tests.dashboard_helpers import links_for, path_of, web_client
from tests.fakes.clock import ShiftedClock
from tests.fakes.fake_slack import (
    APP_TOKEN,
    BOT_TOKEN,
    SIGNING_SECRET,
    TEAM,
    Call,
    FakeSlack,
    SignedSender,
    buttons_in,
    click_payload,
    shown_options,
    slash_payload,
    view_submission_payload,
)
from tests.test_surface import TOOT, TOOT_MESSAGE, Tooter, add_tooter

CHANNEL = "C0QUIZ"
OTHER = "C0OTHER"
ADMIN, MEMBER, HOST, MOD = "U0ADMIN", "U0MEMBER", "U0HOST", "U0MOD"
PLAYERS = [f"U1P{n:02d}" for n in range(30)]


# -- harness ---------------------------------------------------------------------


@dataclass
class Slack:
    """People in a Slack workspace, using the bot through the fake Slack."""

    fake: FakeSlack
    platform: SlackPlatform
    service: QuizService
    repository: Repository
    catalog: Catalog
    sender: SignedSender | None  # None: Socket Mode

    async def deliver_command(self, text: str, user: str, channel: str, key: str) -> None:
        payload = slash_payload(
            text, user=user, channel=channel, response_url=self.fake.response_url(key)
        )
        if self.sender is None:
            envelope = await self.fake.send_envelope("slash_commands", payload)
            await self.fake.wait_for(lambda: envelope in self.fake.acks, what="the command ack")
        else:
            status, _ = await self.sender.slash(payload)
            assert status == 200

    async def command(self, text: str, user: str = ADMIN, channel: str = CHANNEL) -> Reply:
        """`/quiz <text>`; returns the reply Slack received on the response_url."""
        key = uuid.uuid4().hex
        await self.deliver_command(text, user, channel, key)
        [body] = await self.fake.wait_for(
            lambda: self.fake.responses_to(key), what=f"a reply to /quiz {text}"
        )
        return Reply(body)

    def click_body(self, question: Call, letter: str, user: str) -> dict[str, Any]:
        value = question.buttons()[letter]
        return click_payload(
            value,
            letter,
            user=user,
            channel=str(question.channel),
            message_ts=self.ts_of(question),
            response_url=self.fake.response_url(f"click-{uuid.uuid4().hex}"),
        )

    async def click(self, question: Call, letter: str, user: str, **options: Any) -> int:
        body = self.click_body(question, letter, user)
        if self.sender is None:
            envelope = await self.fake.send_envelope("interactive", body)
            await self.fake.wait_for(lambda: envelope in self.fake.acks, what="the click ack")
            return 200
        status, _ = await self.sender.click(body, **options)
        return status

    def ts_of(self, question: Call) -> str:
        """The ts Slack gave a posted message."""
        return str(question.result["ts"])

    async def next_question(self, channel: str = CHANNEL, after: int = 0) -> Call:
        found = await self.fake.wait_for(
            lambda: self.fake.questions(channel)[after:], what="a question post"
        )
        return found[0]  # type: ignore[no-any-return]

    async def reveal_of(self, question: Call) -> Call:
        ts = self.ts_of(question)
        found = await self.fake.wait_for(
            lambda: [c for c in self.fake.calls_to("chat.update") if c.params.get("ts") == ts],
            what="the reveal",
        )
        return found[-1]  # type: ignore[no-any-return]

    def question_of(self, call: Call) -> Question:
        matches = [
            question
            for question_id in self.catalog.pool()
            if (question := self.catalog.question(question_id)) is not None
            and question.prompt in call.text
        ]
        assert len(matches) == 1
        return matches[0]

    def letter(self, call: Call, *, correct: bool) -> str:
        question = self.question_of(call)
        right = question.options[question.answer_index]
        for letter, text in shown_options(call).items():
            if (text == right) == correct:
                return letter
        raise AssertionError("no such option")

    async def answers_to(self, question: Call) -> int:
        post_id = int(next(iter(question.buttons().values())).split(":")[2])
        return await self.repository.answers.answer_count(post_id)


@dataclass
class Reply:
    body: dict[str, Any]

    @property
    def text(self) -> str:
        return html.unescape(str(self.body.get("text", "")))

    @property
    def private(self) -> bool:
        return self.body.get("response_type") == "ephemeral"


def settings_for(fake: FakeSlack, *, socket: bool, **extra: Any) -> Settings:
    values: dict[str, Any] = {
        "slack_bot_token": BOT_TOKEN,
        "slack_api_url": fake.api_url,
        "slack_host": "127.0.0.1",
        "slack_port": 0,
        "slack_moderators": [MOD],
    }
    values["slack_app_token" if socket else "slack_signing_secret"] = (
        APP_TOKEN if socket else SIGNING_SECRET
    )
    values.update(extra)
    return Settings(_env_file=None, **values)  # type: ignore[call-arg]


def workspace(fake: FakeSlack) -> None:
    fake.add_user(ADMIN, "Ada", admin=True)
    fake.add_user(MEMBER, "Max")
    fake.add_user(HOST, "Hana")
    fake.add_user(MOD, "Mo")
    for number, player in enumerate(PLAYERS):
        fake.add_user(player, f"Player {number}")
    fake.add_group("S0HOSTS", "quiz-hosts", [HOST])


@pytest.fixture
async def fake() -> AsyncIterator[FakeSlack]:
    made = await FakeSlack().start()
    workspace(made)
    yield made
    await made.close()


MakeSlack = Callable[..., Awaitable[Slack]]


@pytest.fixture
async def make_slack(
    fake: FakeSlack, catalog: Catalog, tmp_path: Path, _templates: Any
) -> AsyncIterator[MakeSlack]:
    """Starts the real Slack platform (HTTP or Socket Mode) on a fresh SQLite
    database with the real clock (or `clock`) and the timer loop running."""
    async with AsyncExitStack() as stack:

        async def make(
            *,
            socket: bool = False,
            clock: Clock | None = None,
            prepare: Callable[[QuizService], None] | None = None,
            database: Database | None = None,
            limits: Limits | None = None,
        ) -> Slack:
            if database is None:  # else another platform's (two processes on one database)
                path = await _templates.sqlite_copy(tmp_path / f"{uuid.uuid4().hex}.db")
                database = open_database(f"sqlite+aiosqlite:///{path}")
                stack.push_async_callback(database.dispose)
            repository = Repository(database)
            service = QuizService(repository, catalog, clock or SystemClock(), rng=random.Random(5))
            if prepare is not None:
                prepare(service)  # before the platform reads the service's surface
            platform = SlackPlatform(settings_for(fake, socket=socket), service, limits=limits)
            service.register(platform.adapter)
            await platform.start()
            stack.push_async_callback(platform.close)
            timers = asyncio.create_task(service.run_timers())

            async def stop_timers() -> None:
                service.shutdown()
                timers.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await timers

            stack.push_async_callback(stop_timers)
            sender = None
            if not socket:
                sender = SignedSender(f"http://127.0.0.1:{platform.port}/slack/events")
                stack.push_async_callback(sender.close)
            return Slack(fake, platform, service, repository, catalog, sender)

        yield make


# -- HTTP mode end to end ---------------------------------------------------------


async def test_http_live_quiz_posts_reveals_scores_and_counts_each_click_once(
    make_slack: MakeSlack,
) -> None:
    slack = await make_slack()
    fake = slack.fake
    assert slack.platform.adapter.connected

    started = await slack.command("start 2 2")
    assert started.private and started.text.startswith("Starting a quiz: 2 questions")

    first = await slack.next_question()
    assert set(first.buttons()) == {"A", "B", "C", "D"}
    assert "A. " in first.text and "Question 1/2" in first.text  # the plain fallback
    assert [b["type"] for b in first.blocks][:2] == ["header", "section"]

    # 30 members click at once; each gets a private confirmation.
    statuses = await asyncio.gather(
        *(slack.click(first, "ABCD"[n % 4], player) for n, player in enumerate(PLAYERS))
    )
    assert statuses == [200] * 30
    await fake.wait_for(
        lambda: (
            len({c.params["user"] for c in fake.ephemerals() if c.params["user"] in PLAYERS}) == 30
        ),
        what="30 ephemerals",
    )
    assert all("Locked in" in c.text for c in fake.ephemerals())
    assert await slack.answers_to(first) == 30

    reveal = await slack.reveal_of(first)
    assert "(closed)" in reveal.text and "Answer: " in reveal.text
    assert "30 answers" in reveal.text
    assert slack.question_of(first).explanation in reveal.text
    assert "█" in reveal.text or "░" in reveal.text  # the distribution bars
    # No more letters: only the button that reports a problem with the question.
    [actions] = [b for b in reveal.blocks if b["type"] == "actions"]
    assert [e["text"]["text"] for e in actions["elements"]] == ["Report a problem"]

    # A double click, and a click Slack delivers again with X-Slack-Retry-Num.
    second = await slack.next_question(after=1)
    double = await asyncio.gather(
        slack.click(second, "A", MEMBER), slack.click(second, "A", MEMBER)
    )
    assert double == [200, 200]
    assert await slack.click(second, "B", HOST) == 200
    assert await slack.click(second, "B", HOST, retry=1) == 200
    replies = await fake.wait_for(
        lambda: len(fake.ephemerals(MEMBER)) == 2 and fake.ephemerals(MEMBER),
        what="two replies to the double click",
    )
    texts = sorted(call.text for call in replies)
    assert texts[0].startswith("Locked in A")
    assert texts[1].startswith("You already answered A")
    assert await slack.answers_to(second) == 2

    second_reveal = await slack.reveal_of(second)
    assert "2 answers" in second_reveal.text
    scores = await fake.wait_for(
        lambda: [c for c in fake.posts(CHANNEL) if "Quiz over" in c.text], what="the scoreboard"
    )
    assert "players" in scores[0].text or "player" in scores[0].text


async def test_bad_signatures_and_stale_timestamps_get_401_and_change_nothing(
    make_slack: MakeSlack,
) -> None:
    slack = await make_slack()
    fake = slack.fake
    assert slack.sender is not None
    start = slash_payload(
        "start 1 30", user=ADMIN, channel=CHANNEL, response_url=fake.response_url("forged")
    )
    forged, _ = await slack.sender.slash(start, signature="v0=" + "0" * 64)
    stale, _ = await slack.sender.slash(start, timestamp=int(time.time()) - 6 * 60)
    assert (forged, stale) == (401, 401)
    await asyncio.sleep(0.3)
    assert fake.posts() == [] and fake.responses == []

    await slack.command("start 1 30")
    question = await slack.next_question()
    click = slack.click_body(question, "A", MEMBER)
    assert (await slack.sender.click(click, signature="v0=" + "1" * 64))[0] == 401
    assert (await slack.sender.click(click, timestamp=int(time.time()) - 301))[0] == 401
    await asyncio.sleep(0.3)
    assert fake.ephemerals(MEMBER) == []
    assert await slack.answers_to(question) == 0
    assert (await slack.sender.click(click))[0] == 200
    await fake.wait_for(lambda: fake.ephemerals(MEMBER), what="the reply to a signed click")
    assert await slack.answers_to(question) == 1
    await slack.command("stop")


# -- Socket Mode ---------------------------------------------------------------------


async def test_socket_mode_plays_a_quiz_through_envelopes_and_acks_each(
    make_slack: MakeSlack,
) -> None:
    slack = await make_slack(socket=True)
    fake = slack.fake
    assert slack.platform.adapter.connected
    assert fake.calls_to("apps.connections.open")[0].token == APP_TOKEN

    refused = await slack.command("start 1 30", user=MEMBER)
    assert refused.private and refused.text.startswith("Only moderators can start a quiz")
    assert fake.posts() == []

    started = await slack.command("start 1 30")
    assert started.text.startswith("Starting a quiz: 1 question")
    question = await slack.next_question()
    players = PLAYERS[:5]
    envelopes = await asyncio.gather(
        *(fake.send_envelope("interactive", slack.click_body(question, "C", p)) for p in players)
    )
    # The same click delivered twice (Slack retries envelopes it thinks were lost).
    again = slack.click_body(question, "D", players[0])
    envelopes.append(await fake.send_envelope("interactive", again, retry=1))
    await fake.wait_for(lambda: all(e in fake.acks for e in envelopes), what="every ack")
    await fake.wait_for(lambda: len(fake.ephemerals()) == 6, what="six private replies")
    assert sorted(c.text[:11] for c in fake.ephemerals(players[0])) == [
        "Locked in C",
        "You already",
    ]
    assert await slack.answers_to(question) == 5

    stopped = await slack.command("stop")
    assert stopped.text == "Quiz stopped."
    reveal = await slack.reveal_of(question)
    assert "5 answers" in reveal.text
    await fake.wait_for(
        lambda: [c for c in fake.posts(CHANNEL) if "Quiz stopped" in c.text], what="scores"
    )
    await slack.platform.close()
    assert not slack.platform.adapter.connected  # timers skip Slack; /healthz says so


# -- scheduled daily questions -------------------------------------------------------------


@pytest.mark.parametrize("socket", [False, True], ids=["http", "socket-mode"])
async def test_a_click_is_acknowledged_once_stored_without_waiting_for_its_private_reply(
    make_slack: MakeSlack, socket: bool
) -> None:
    """Bolt sends a listener's response when the listener returns: a click's
    listener returns at its ack, once the answer is stored, and its private
    reply follows on its own. With the reply held by Slack, the click is
    still acknowledged; the reply arrives once Slack answers."""
    slack = await make_slack(socket=socket)
    await slack.command("start 1 60")
    question = await slack.next_question()
    slack.fake.hang("chat.postEphemeral")
    status = await asyncio.wait_for(slack.click(question, "A", MEMBER), 5)
    assert status == 200
    assert await slack.answers_to(question) == 1
    assert not [c for c in slack.fake.ephemerals(MEMBER) if "Locked in" in c.text]
    slack.fake.release()
    await slack.fake.wait_for(
        lambda: [c for c in slack.fake.ephemerals(MEMBER) if "Locked in" in c.text],
        what="the held private reply",
    )


async def test_a_scheduled_daily_question_is_posted_when_due_and_a_right_click_starts_a_streak(
    make_slack: MakeSlack,
) -> None:
    clock = ShiftedClock()
    slack = await make_slack(clock=clock)
    fake = slack.fake
    due = clock.minute_due_in(2.0)  # schedules fire on whole minutes
    saved = await slack.command(f"schedule daily {due:%H:%M}")
    assert saved.private
    assert saved.text.startswith(f"Daily question scheduled: daily {due:%H:%M} UTC every day")
    assert not fake.questions(CHANNEL)

    question = await slack.next_question()
    assert "Question of the day" in question.text
    # Not early: it closes a default 24 h window after it was posted (bot time).
    closes = re.search(r"<!date\^(\d+)\^", json.dumps(question.blocks))
    assert closes is not None
    assert datetime.fromtimestamp(int(closes[1]), UTC) - timedelta(hours=24) >= due
    assert await slack.click(question, slack.letter(question, correct=True), MEMBER) == 200
    [answered] = await fake.wait_for(lambda: fake.ephemerals(MEMBER), what="the click reply")
    assert "is right!" in answered.text and "🔥 1-day streak" in answered.text


# -- moderators, faults, scores --------------------------------------------------------


async def test_moderators_are_admins_listed_users_and_members_of_the_group(
    make_slack: MakeSlack,
) -> None:
    slack = await make_slack()
    refused = await slack.command("config show", user=MEMBER)
    assert refused.private and refused.text.startswith("Only moderators can change")
    assert (await slack.command("stop", user=MOD)).text.startswith("No quiz is running")
    assert (await slack.command("config show", user=HOST)).text.startswith("Only moderators")

    # Typed as @quiz-hosts, Slack escapes the group as <!subteam^ID|@handle>.
    saved = await slack.command("config set moderator-group <!subteam^S0HOSTS|@quiz-hosts>")
    assert "Moderator role/group: quiz-hosts" in saved.text
    assert "Moderator role/group: quiz-hosts" in (await slack.command("config", user=HOST)).text
    still = await slack.command("skip", user=MEMBER)
    assert still.text.startswith("Only moderators can skip") and "quiz-hosts" in still.text
    assert slack.fake.calls_to("usergroups.users.list")[0].params["usergroup"] == "S0HOSTS"


async def test_a_429_on_posting_is_retried_and_nothing_is_lost(make_slack: MakeSlack) -> None:
    slack = await make_slack()
    slack.fake.rate_limit("chat.postMessage", times=1, retry_after=1)
    started = await slack.command("start 1 30")
    assert started.text.startswith("Starting a quiz")
    question = await slack.next_question()
    attempts = slack.fake.calls_to("chat.postMessage", CHANNEL, ok=False)
    assert [call.status for call in attempts] == [429, 200]
    assert attempts[1].at - attempts[0].at >= 1.0  # waited for Retry-After
    assert len(slack.fake.questions()) == 1
    await slack.click(question, "A", MEMBER)
    await slack.fake.wait_for(lambda: slack.fake.ephemerals(MEMBER), what="the click reply")
    await slack.command("stop")


async def test_a_channel_slack_refuses_is_reported_and_others_carry_on(
    make_slack: MakeSlack,
) -> None:
    slack = await make_slack()
    slack.fake.fail("chat.postMessage", "channel_not_found", channel=OTHER)
    refused = await slack.command("start 1 30", channel=OTHER)
    assert refused.private
    assert refused.text.startswith("I can't post in this channel (channel_not_found)")
    shown = await slack.command("config show", channel=OTHER)
    assert "My last post here failed: channel_not_found" in shown.text

    assert (await slack.command("start 1 30")).text.startswith("Starting a quiz")
    await slack.next_question(CHANNEL)
    assert "failed" not in (await slack.command("config show")).text
    assert (await slack.command("start 1 30", channel=OTHER)).text.startswith("I can't post")
    await slack.command("stop")


async def _play_one(slack: Slack, right: list[str], wrong: list[str]) -> Call:
    await slack.command("start 1 60")
    question = await slack.next_question(after=len(slack.fake.questions(CHANNEL)) - 1)
    for user in right:
        await slack.click(question, slack.letter(question, correct=True), user)
    for user in wrong:
        await slack.click(question, slack.letter(question, correct=False), user)
    await slack.fake.wait_for(
        lambda: len(slack.fake.ephemerals()) >= len(right) + len(wrong), what="replies"
    )
    return question


async def test_leaderboard_is_public_and_stats_mention_members_in_order(
    make_slack: MakeSlack,
) -> None:
    slack = await make_slack()
    question = await _play_one(slack, right=[HOST, MOD], wrong=[MEMBER])
    await slack.command("stop")
    reveal = await slack.reveal_of(question)
    assert f"First correct: <@{HOST}>" in reveal.text

    board = await slack.command("leaderboard channel all", user=MEMBER)
    assert board.body["response_type"] == "in_channel"
    text = board.text
    assert text.index(f"<@{HOST}>") < text.index(f"<@{MOD}>") < text.index(f"<@{MEMBER}>")
    stats = await slack.command(f"stats <@{HOST}|hana>", user=MEMBER)
    assert stats.private and stats.text.startswith(f"Stats for <@{HOST}>")
    assert "Correct: 1 (100%)" in stats.text
    mine = await slack.command("stats", user=MEMBER)
    assert mine.text.startswith(f"Stats for <@{MEMBER}>") and "Correct: 0" in mine.text


async def test_dashboard_replies_privately_with_links_that_open_the_pages(
    make_slack: MakeSlack,
) -> None:
    slack = await make_slack()
    off = await slack.command("dashboard", user=MEMBER)
    assert off.private and "dashboard is off" in off.text
    question = await _play_one(slack, right=[HOST], wrong=[MEMBER])
    await slack.command("stop")
    await slack.reveal_of(question)
    links = links_for(slack.service)
    slack.service.commands.links = links

    reply = await slack.command("dashboard", user=MEMBER)
    assert reply.private
    community, mine = re.findall(r"https?://[^\s>|]+", reply.text)
    async with web_client(slack.service, links) as client:
        board = await client.get(path_of(community) + "&period=all")
        assert board.status == 200
        html = await board.text()
        # Names from users.info, in rank order: Hana answered right, Max did not.
        assert html.index("Hana") < html.index("Max")
        page = await client.get(path_of(mine))
        assert "<h1>Max</h1>" in await page.text()


async def test_with_mentions_off_channel_posts_use_display_names(make_slack: MakeSlack) -> None:
    slack = await make_slack()
    saved = await slack.command("config set mentions off")
    assert "Mentions in channel posts: off" in saved.text
    question = await _play_one(slack, right=[HOST], wrong=[MEMBER])
    await slack.command("stop")
    reveal = await slack.reveal_of(question)
    assert "First correct: Hana" in reveal.text and "<@" not in reveal.text
    scores = await slack.fake.wait_for(
        lambda: [c for c in slack.fake.posts(CHANNEL) if "Quiz stopped" in c.text], what="scores"
    )
    assert "Hana" in scores[0].text and "Max" in scores[0].text
    assert "<@" not in scores[0].text
    board = await slack.command("leaderboard all")
    assert board.text.index("Hana") < board.text.index("Max")


async def test_malformed_commands_get_a_private_usage_message(make_slack: MakeSlack) -> None:
    slack = await make_slack()
    unknown = await slack.command("frobnicate", user=MEMBER)
    assert unknown.private and "unknown command `frobnicate`" in unknown.text
    assert "Usage: `/quiz start" in unknown.text
    bad = await slack.command("start 5 30 colour=blue")
    assert bad.private and "unknown option `colour=blue`" in bad.text
    assert slack.fake.posts() == []


async def test_start_typed_with_a_bank_and_tag_in_place_draws_from_them(
    make_slack: MakeSlack,
) -> None:
    slack = await make_slack()
    started = await slack.command("start 1 30 pytorch-distributed-training parameter-server")
    assert started.text.startswith("Starting a quiz: 1 question, 30 seconds")
    question = slack.question_of(await slack.next_question())
    assert "parameter-server" in question.tags
    bank = slack.catalog.bank_of(question.id)
    assert bank is not None and bank.id == "pytorch-distributed-training"


async def test_a_rejected_bot_token_stops_start_up_without_showing_it(
    fake: FakeSlack, catalog: Catalog, tmp_path: Path
) -> None:
    settings = settings_for(fake, socket=False, slack_bot_token="xoxb-wrong-token")
    database = open_database(f"sqlite+aiosqlite:///{tmp_path / 'quiz.db'}")
    service = QuizService(Repository(database), catalog, SystemClock())
    with pytest.raises(StartError) as raised:
        await SlackPlatform(settings, service).start()
    await database.dispose()
    assert "invalid_auth" in str(raised.value)
    assert "xoxb-wrong-token" not in str(raised.value)
    assert not fake.calls_to("chat.postMessage")


async def test_a_taken_port_or_a_rejected_app_token_stops_start_up_clearly(
    fake: FakeSlack, catalog: Catalog, tmp_path: Path
) -> None:
    database = open_database(f"sqlite+aiosqlite:///{tmp_path / 'quiz.db'}")
    service = QuizService(Repository(database), catalog, SystemClock())
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        busy = SlackPlatform(settings_for(fake, socket=False, slack_port=port), service)
        with pytest.raises(StartError, match=f"cannot listen on 127.0.0.1:{port}"):
            await busy.start()
    assert not busy.adapter.connected
    wrong = settings_for(fake, socket=True, slack_app_token="xapp-wrong")
    with pytest.raises(StartError, match=r"rejected SLACK_APP_TOKEN \(invalid_auth\)") as raised:
        await SlackPlatform(wrong, service).start()
    assert "xapp-wrong" not in str(raised.value)
    await database.dispose()


# -- small parts -------------------------------------------------------------------------


def test_question_blocks_have_letters_a_closing_time_and_escaped_text() -> None:
    deadline = datetime(2026, 3, 2, 9, 0, 30, tzinfo=UTC)
    message = OutMessage(
        text="Is 1 < 2 & 3 > 2? <@U1>",
        title="Bank · Question 1/2",
        body="Is 1 < 2? ask <@U1>\n\n**A.** Yes\n**B.** No",
        buttons=(Button("qm:a:7:0", "A"), Button("qm:a:7:1", "B", ButtonStyle.SUCCESS)),
        footer="30 seconds to answer",
        deadline=deadline,
    )
    made = blocks(message)
    assert [block["type"] for block in made] == ["header", "section", "context", "actions"]
    assert made[1]["text"]["text"] == "Is 1 &lt; 2? ask <@U1>\n\n*A.* Yes\n*B.* No"
    closes = made[2]["elements"][1]["text"]
    assert closes.startswith(f"Closes <!date^{int(deadline.timestamp())}^")
    assert closes.endswith("|2026-03-02 09:00:30 UTC>")
    buttons = made[3]["elements"]
    assert [b["action_id"] for b in buttons] == ["qm:a:7:0", "qm:a:7:1"]
    assert [b["value"] for b in buttons] == ["qm:a:7:0", "qm:a:7:1"]
    assert buttons[1]["style"] == "primary" and "style" not in buttons[0]
    assert escape(message.text) == "Is 1 &lt; 2 &amp; 3 &gt; 2? <@U1>"
    closed = OutMessage(text="x", body="y", buttons=(Button("qm:a:7:0", "A", disabled=True),))
    assert [block["type"] for block in blocks(closed)] == ["section"]


async def test_pacing_spaces_posts_in_one_channel_but_not_across_channels() -> None:
    now = 0.0

    def clock() -> float:
        return now

    async def sleep(seconds: float) -> None:
        nonlocal now
        now += seconds  # time passes only while a post waits

    pacer = ChannelPacer(rate=1.0, burst=2, clock=clock, sleep=sleep)
    sent: list[tuple[str, float]] = []

    async def post(channel: str) -> None:
        await pacer.wait(channel)
        sent.append((channel, now))

    for _ in range(5):
        await post("a")
    await post("b")
    times_a = [moment for channel, moment in sent if channel == "a"]
    assert times_a == pytest.approx([0.0, 0.0, 1.0, 2.0, 3.0])  # a burst of 2, then 1/s
    # Another channel has its own budget: it does not wait behind channel a.
    assert sent[-1] == ("b", pytest.approx(3.0))


async def test_pacing_forgets_idle_channels_without_changing_any_pace() -> None:
    now = 0.0

    def clock() -> float:
        return now

    async def sleep(seconds: float) -> None:
        nonlocal now
        now += seconds

    pacer = ChannelPacer(rate=1.0, burst=2, clock=clock, sleep=sleep)
    for _ in range(3):
        await pacer.wait("busy")  # a burst of 2, then it waits 1 s
    for number in range(5 * PRUNE_AFTER):
        now += 1.0  # one post a second, each in a channel of its own
        await pacer.wait(f"quiet-{number}")
    assert len(pacer) <= 2 * PRUNE_AFTER
    before = now
    await pacer.wait("quiet-0")  # forgotten long ago: a full burst again
    await pacer.wait("quiet-0")
    assert now == before


def test_the_manifest_declares_the_command_scopes_interactivity_and_socket_mode() -> None:
    manifest = yaml.safe_load((ROOT / "slack-app-manifest.yml").read_text())
    features = manifest["features"]
    assert features["bot_user"]["display_name"]
    [command] = features["slash_commands"]
    assert command["command"] == "/quiz" and command["should_escape"] is True
    assert command["usage_hint"].startswith("start")
    scopes = set(manifest["oauth_config"]["scopes"]["bot"])
    assert "commands" in scopes
    # Every Web API method the adapter calls, and the bot scope it needs.
    needs = {
        "auth_test": None,
        "apps_connections_open": None,  # the app-level token's connections:write
        "chat_postMessage": "chat:write",
        "chat_update": "chat:write",
        "chat_postEphemeral": "chat:write",
        "views_open": None,  # needs only the trigger id of a command or click
        "users_info": "users:read",
        "users_list": "users:read",
        "usergroups_list": "usergroups:read",
        "usergroups_users_list": "usergroups:read",
        "conversations_open": "im:write",
        "files_upload_v2": "files:write",
    }
    source = "".join(path.read_text() for path in (ROOT / "bot/adapters/slack").glob("*.py"))
    called = set(re.findall(r"client\.(\w+)\(", source))
    assert called and called <= set(needs), called - set(needs)
    assert {needs[method] for method in called} - {None} <= scopes
    # Authors hear the review outcome in the app's Messages tab.
    assert features["app_home"]["messages_tab_enabled"] is True
    settings = manifest["settings"]
    assert settings["interactivity"]["is_enabled"] is True
    assert settings["socket_mode_enabled"] is True


# -- the study loop ----------------------------------------------------------------


async def miss_two_questions(slack: Slack, user: str) -> None:
    """A two-question quiz in which `user` picks a wrong letter each time."""
    assert (await slack.command("start 2 60")).text.startswith("Starting a quiz")
    for number, step in ((0, "skip"), (1, "stop")):
        question = await slack.next_question(after=number)
        assert await slack.click(question, slack.letter(question, correct=False), user) == 200
        await slack.command(step)


async def click_private(slack: Slack, shown: list[dict[str, Any]], letter: str, user: str) -> None:
    value = buttons_in(shown)[letter]
    body = click_payload(
        value,
        letter,
        user=user,
        channel=CHANNEL,
        message_ts=f"{time.time():.6f}",
        response_url=slack.fake.response_url(f"click-{uuid.uuid4().hex}"),
    )
    assert slack.sender is not None
    status, _ = await slack.sender.click(body)
    assert status == 200


async def test_review_cards_are_private_clicked_in_turn_and_refused_to_others(
    make_slack: MakeSlack,
) -> None:
    clock = ShiftedClock()
    slack = await make_slack(clock=clock)
    fake = slack.fake
    nothing = await slack.command("review", user=MEMBER)
    assert nothing.private and nothing.text.startswith("Nothing to review yet.")
    await miss_two_questions(slack, MEMBER)

    soon = await slack.command("review", user=MEMBER)
    assert re.match(r"Nothing to review\. Next review: \w{3} \d\d \w{3} \d\d:\d\d$", soon.text)
    clock.offset += timedelta(minutes=11)
    card = await slack.command("review 3", user=MEMBER)
    assert card.private and card.text.startswith("Review · ")
    shown = card.body["blocks"]
    assert all(value.startswith("qm:r:") for value in buttons_in(shown).values())

    await click_private(slack, shown, "A", HOST)
    [refused] = await fake.wait_for(lambda: fake.ephemerals(HOST), what="the refusal")
    assert refused.text.startswith("This review card belongs to someone else")

    await click_private(slack, shown, "A", MEMBER)
    [following] = await fake.wait_for(lambda: fake.ephemerals(MEMBER)[2:], what="the next card")
    assert re.match(r"(✅ A is right!|❌ A is not it)", following.text)
    assert buttons_in(following.blocks)
    await click_private(slack, following.blocks, "B", MEMBER)
    [done] = await fake.wait_for(lambda: fake.ephemerals(MEMBER)[3:], what="the end")
    assert "Review done: 2 cards." in done.text and list(done.buttons()) == ["Report a problem"]


async def test_export_arrives_as_a_file_in_the_members_direct_message(
    make_slack: MakeSlack,
) -> None:
    slack = await make_slack()
    fake = slack.fake
    await miss_two_questions(slack, MEMBER)
    reply = await slack.command("export", user=MEMBER)
    assert reply.private and reply.text == "I sent your Anki deck to our direct messages."
    [shared] = fake.shared_files()
    assert shared.channel == f"D{MEMBER}" and shared.filename == "quizmaster-missed.apkg"
    assert (shared.initial_comment or "").startswith("Your Anki deck: 2 questions you missed.")
    with zipfile.ZipFile(io.BytesIO(shared.data)) as archive:
        assert "collection.anki2" in archive.namelist()
    [opened] = fake.calls_to("conversations.open")
    assert opened.params["users"] == MEMBER
    assert not [post for post in fake.posts() if "Anki" in post.text]

    fake.fail("files.completeUploadExternal", "not_allowed_token_type", times=1)
    failed = await slack.command("export all", user=MEMBER)
    assert failed.private
    assert failed.text == (
        "I could not send you the file (not_allowed_token_type). Please try again later."
    )


# -- member submissions and review -----------------------------------------------------

TYPED = {
    "prompt": "Which collective leaves the sum of every rank's tensor on all ranks?",
    "options": "all_reduce\nbroadcast\nscatter",
    "answer": "A",
    "explanation": "all_reduce sums and shares the result with every rank.",
    "tags": "collectives",
}


async def open_form(slack: Slack, text: str, user: str, team: str = "T0TEAM") -> dict[str, Any]:
    """`/quiz <text>` that answers with a modal: the view Slack was asked to open."""
    before = len(slack.fake.views)
    payload = slash_payload(
        text, user=user, channel=CHANNEL, response_url=slack.fake.response_url("form"), team=team
    )
    assert slack.sender is not None
    assert (await slack.sender.slash(payload))[0] == 200
    views = await slack.fake.wait_for(lambda: slack.fake.views[before:], what="views.open")
    return dict(views[0])


async def submit_view(
    slack: Slack, view: dict[str, Any], user: str, **typed: str
) -> dict[str, Any]:
    """Submit a modal; returns the ack Slack got back (empty: the modal closes)."""
    body = view_submission_payload(view, typed, user=user)
    if slack.sender is None:
        envelope = await slack.fake.send_envelope("interactive", body)
        return await _ack(slack, envelope)
    status, text = await slack.sender.click(body)
    assert status == 200
    return dict(json.loads(text)) if text else {}


async def _ack(slack: Slack, envelope: str) -> dict[str, Any]:
    await slack.fake.wait_for(lambda: envelope in slack.fake.acks, what="the view ack")
    return slack.fake.acks[envelope]


def reply_buttons(body: dict[str, Any]) -> dict[str, str]:
    return {
        element["text"]["text"]: element["value"]
        for block in body.get("blocks") or []
        if block.get("type") == "actions"
        for element in block["elements"]
    }


async def review_click(slack: Slack, value: str, label: str, user: str) -> None:
    body = click_payload(
        value,
        label,
        user=user,
        channel=CHANNEL,
        message_ts="1700000000.000001",
        response_url=slack.fake.response_url(f"review-{uuid.uuid4().hex}"),
    )
    assert slack.sender is not None
    assert (await slack.sender.click(body))[0] == 200


async def test_slack_submit_shows_problems_in_the_form_then_queues(make_slack: MakeSlack) -> None:
    slack = await make_slack()
    view = await open_form(slack, "submit", MEMBER)
    assert view["callback_id"] == "qm:f:submit" and view["private_metadata"] == CHANNEL
    assert view["title"]["text"] == "Submit a question"
    inputs = [block for block in view["blocks"] if block["type"] == "input"]
    assert [b["block_id"] for b in inputs] == ["prompt", "options", "answer", "explanation", "tags"]
    assert inputs[1]["element"]["multiline"] is True and inputs[4]["optional"] is True

    ack = await submit_view(slack, view, MEMBER, **{**TYPED, "answer": "E", "options": "one"})
    assert ack["response_action"] == "errors"
    assert set(ack["errors"]) == {"options"}  # the answer is checked once there are options
    assert "at least two" in ack["errors"]["options"]
    assert slack.fake.ephemerals(MEMBER) == []

    assert await submit_view(slack, view, MEMBER, **TYPED) == {}
    [told] = await slack.fake.wait_for(lambda: slack.fake.ephemerals(MEMBER), what="the reply")
    assert told.channel == CHANNEL and "waiting for a moderator" in told.text
    assert await slack.repository.submissions.pending_total("slack", "T0TEAM") == 1


async def test_slack_review_accepts_rejects_with_a_reason_and_draws_in_its_workspace_only(
    make_slack: MakeSlack,
) -> None:
    slack = await make_slack()
    fake = slack.fake
    await submit_view(slack, await open_form(slack, "submit", MEMBER), MEMBER, **TYPED)
    second = {**TYPED, "prompt": "Which call sends one rank's tensor to all?", "answer": "B"}
    await submit_view(slack, await open_form(slack, "submit", HOST), HOST, **second)

    refused = await slack.command("submissions", user=MEMBER)
    assert refused.private and "moderator" in refused.text
    card = await slack.command("submissions", user=ADMIN)
    assert card.private and "(2 pending)" in card.text and "all_reduce ✅" in card.text
    buttons = reply_buttons(card.body)
    assert list(buttons) == ["Accept", "Reject", "Skip"]

    await review_click(slack, buttons["Accept"], "Accept", MEMBER)
    [no] = await fake.wait_for(lambda: fake.ephemerals(MEMBER)[1:], what="a refusal")
    assert "moderator" in no.text
    await review_click(slack, buttons["Accept"], "Accept", ADMIN)
    [accepted] = await fake.wait_for(lambda: fake.ephemerals(ADMIN), what="the next card")
    assert "community-" in accepted.text and "one rank's tensor" in accepted.text
    [dm] = await fake.wait_for(lambda: fake.direct_messages(MEMBER), what="the author's DM")
    assert "was accepted" in dm.text

    before = len(fake.views)
    await review_click(slack, accepted.buttons()["Reject"], "Reject", ADMIN)
    [reject] = await fake.wait_for(lambda: fake.views[before:], what="the reject form")
    assert reject["title"]["text"] == "Reject submission"
    assert await submit_view(slack, reject, ADMIN, reason="Same as <@U0MEMBER>'s") == {}
    [dm] = await fake.wait_for(lambda: fake.direct_messages(HOST), what="the rejection")
    assert "not accepted" in dm.text and "Same as" in dm.text
    assert "<@U0MEMBER>" not in str(dm.params.get("text"))  # the reason cannot ping

    started = await slack.command("start 1 30 bank=community", user=ADMIN)
    assert started.text.startswith("Starting a quiz"), started.text
    question = await slack.next_question()
    assert TYPED["prompt"] in question.text

    key = uuid.uuid4().hex
    other = slash_payload(
        "start 1 30 bank=community",
        user=MOD,
        channel=OTHER,
        response_url=fake.response_url(key),
        team="T0ELSEWHERE",
    )
    assert slack.sender is not None
    await slack.sender.slash(other)
    [body] = await fake.wait_for(lambda: fake.responses_to(key), what="the other workspace")
    assert "No questions" in str(body["text"]) or "no questions" in str(body["text"])
    await slack.command("stop", user=ADMIN)


async def test_slack_member_with_ten_pending_gets_no_form(make_slack: MakeSlack) -> None:
    slack = await make_slack()
    for number in range(10):
        await slack.repository.submissions.submit(
            platform="slack",
            community="T0TEAM",
            channel=CHANNEL,
            author_id=MEMBER,
            author_name=None,
            question={"prompt": f"Q{number}"},
            now=datetime.now(UTC),
            limit=10,
        )
    reply = await slack.command("submit", user=MEMBER)
    assert reply.private and "10 questions waiting" in reply.text
    assert slack.fake.views == []


async def test_socket_mode_form_errors_come_back_in_the_ack(make_slack: MakeSlack) -> None:
    slack = await make_slack(socket=True)
    key = uuid.uuid4().hex
    await slack.deliver_command("submit", MEMBER, CHANNEL, key)
    [view] = await slack.fake.wait_for(lambda: slack.fake.views, what="views.open")
    ack = await submit_view(slack, view, MEMBER, **{**TYPED, "prompt": " "})
    assert ack["response_action"] == "errors" and set(ack["errors"]) == {"prompt"}
    assert await submit_view(slack, view, MEMBER, **TYPED) == {}
    await slack.fake.wait_for(lambda: slack.fake.ephemerals(MEMBER), what="the reply")


async def test_a_new_button_kind_is_routed_on_slack(make_slack: MakeSlack) -> None:
    tooters: list[Tooter] = []
    slack = await make_slack(prepare=lambda service: tooters.append(add_tooter(service)))
    sent = await slack.platform.adapter.send(Target("slack", TEAM, CHANNEL), TOOT_MESSAGE)
    body = click_payload(
        TOOT.id(7),
        "Toot",
        user=MEMBER,
        channel=CHANNEL,
        message_ts=sent.message_id,
        response_url=slack.fake.response_url(f"click-{uuid.uuid4().hex}"),
    )
    assert slack.sender is not None
    status, _ = await slack.sender.click(body)
    assert status == 200
    replies = await slack.fake.wait_for(
        lambda: [c for c in slack.fake.ephemerals(MEMBER) if "toot 7" in c.text], what="the reply"
    )
    assert len(replies) == 1 and tooters[0].pressed == [(MEMBER, 7)]


# -- question reports --------------------------------------------------------------------


async def test_slack_member_reports_a_revealed_question_and_a_moderator_removes_it(
    make_slack: MakeSlack,
) -> None:
    slack = await make_slack()
    fake = slack.fake
    await slack.command("start 1 60", user=ADMIN)
    question = await slack.next_question()
    await slack.click(question, "A", MEMBER)
    await slack.command("skip", user=ADMIN)
    reveal = await slack.reveal_of(question)
    report = reveal.buttons()["Report a problem"]

    before = len(fake.views)
    body = click_payload(
        report,
        "Report a problem",
        user=MEMBER,
        channel=CHANNEL,
        message_ts=slack.ts_of(question),
        response_url=fake.response_url(f"report-{uuid.uuid4().hex}"),
    )
    assert slack.sender is not None
    assert (await slack.sender.click(body))[0] == 200
    [view] = await fake.wait_for(lambda: fake.views[before:], what="the report form")
    assert view["title"]["text"] == "Report a problem"
    # A reason that is none of the five stays in the form with the problem beside it.
    ack = await submit_view(slack, view, MEMBER, reason="boring", text="")
    assert ack["response_action"] == "errors" and set(ack["errors"]) == {"reason"}
    typed = {"reason": "Outdated", "text": "rpc is <!channel> no longer developed"}
    assert await submit_view(slack, view, MEMBER, **typed) == {}
    [told] = await fake.wait_for(lambda: fake.ephemerals(MEMBER)[1:], what="the thanks")
    assert "with the moderators" in told.text

    refused = await slack.command("reports", user=MEMBER)
    assert "moderator" in refused.text
    card = await slack.command("reports", user=ADMIN)
    assert card.private and "outdated: rpc is" in card.text
    assert "<!channel>" not in str(card.body["text"])  # the member's words cannot ping
    question_id = re.search(r"Report \d+ on (\S+)", card.text).group(1)  # type: ignore[union-attr]
    buttons = reply_buttons(card.body)
    await review_click(slack, buttons["Remove from this community"], "Remove", ADMIN)
    [after] = await fake.wait_for(lambda: fake.ephemerals(ADMIN), what="the next card")
    assert "no longer drawn in this community" in after.text and "No open reports" in after.text
    [dm] = await fake.wait_for(lambda: fake.direct_messages(MEMBER), what="the reporter's DM")
    assert "no longer asked in this community" in dm.text
    pool = await slack.service.questions.pool(Target("slack", "T0TEAM", CHANNEL), None, None)
    assert question_id not in pool and len(pool) == len(slack.catalog.pool()) - 1
