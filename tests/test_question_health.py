"""Question health through the quiz service, on SQLite and PostgreSQL: the
item analysis kept at close and its flags (a wrongly keyed question, a dead
option, too easy, too hard, negative discrimination, reported), `db check`
over it, member reports and the moderators' queue, a removed question no
longer drawn, and forget-me. The adaptive daily pick is in
test_daily_pick.py; the platforms' report forms in test_health_platforms.py."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
import yaml
from sqlalchemy import text

from bot.chat import FormSubmission, Interaction, OutMessage, Target
from bot.quiz import buttons
from bot.quiz.bank import Catalog, load_banks
from bot.quiz.health import MAX_OPEN_REPORTS
from bot.quiz.service import QuizService
from bot.storage.db import check_read_models, rebuild_read_models
from bot.storage.repository import Repository
from tests.conftest import CHANNEL, Host, shown_options
from tests.fakes.clock import FakeClock
from tests.fakes.recording import RecordingAdapter, Sent

STRONG = [f"strong-{n}" for n in range(10)]
MIDDLE = [f"middle-{n}" for n in range(10)]
WEAK = [f"weak-{n}" for n in range(10)]
EVERYONE = STRONG + MIDDLE + WEAK


def _question(qid: str, tag: str, options: list[str], answer: str) -> dict[str, Any]:
    return {
        "id": qid,
        "prompt": f"Question {qid}: which of these holds?",
        "options": options,
        "answer": answer,
        "explanation": f"Because of how {qid} works.",
        "tags": [tag],
    }


# A bank where `key-01` is keyed A though B is right, and the rest are plain.
BANK = {
    "id": "health",
    "title": "Health checks",
    "questions": [
        *(
            _question(f"warm-{n:02d}", "warm", [f"w{n} yes", f"w{n} no", f"w{n} maybe"], "A")
            for n in range(1, 5)
        ),
        _question("key-01", "key", ["Gather", "All-reduce", "Scatter", "Send"], "A"),
        _question("dead-01", "dead", ["Ring", "Tree", "Star", "Mesh"], "A"),
        _question("easy-01", "easy", ["Yes", "No", "Perhaps"], "A"),
        _question("hard-01", "hard", ["One", "Two", "Three", "Four"], "A"),
    ],
}


def health_catalog(folder: Path) -> Catalog:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "health.yaml").write_text(yaml.safe_dump(BANK))
    found, problems = load_banks([folder])
    assert not problems, problems
    return found


@pytest.fixture
def health_host(repository: Repository, clock: FakeClock, tmp_path: Path) -> Host:
    catalog = health_catalog(tmp_path / "banks")
    service = QuizService(repository, catalog, clock, rng=random.Random(3))
    adapter = RecordingAdapter()
    service.register(adapter)
    return Host(service, adapter, catalog, clock)


def letter_for(sent: Sent, option: str) -> str:
    [letter] = [letter for letter, shown in shown_options(sent.message).items() if shown == option]
    return letter


async def one_post(host: Host, tag: str, choices: dict[str, str]) -> Sent:
    """A one-question live quiz on the question tagged `tag`; each member picks
    the option with the given text."""
    await host.start(questions=1, seconds=30, bank="health", tag=tag)
    sent = host.current()
    for user, option in choices.items():
        reply = await host.click(user, letter_for(sent, option))
        assert reply.text.startswith("Locked in"), reply.text
    await host.close_current()
    return sent


async def warm_up(host: Host) -> None:
    """Four questions the strong members get right and the weak ones wrong
    (half the middle right): afterwards the strong are in the upper group of
    every post, the weak in the lower."""
    for _ in range(4):
        await host.start(questions=1, seconds=30, bank="health", tag="warm")
        sent = host.current()
        yes, no, maybe = host.question_of(sent).options
        for index, user in enumerate(EVERYONE):
            wanted = {"strong": yes, "weak": no}.get(
                user.split("-")[0], maybe if index % 2 else yes
            )
            reply = await host.click(user, letter_for(sent, wanted))
            assert reply.text.startswith("Locked in"), reply.text
        await host.close_current()


async def health(host: Host, question: str | None = None) -> OutMessage:
    return await host.command("health", options={"id": question} if question else {})


async def test_each_flag_follows_from_how_the_community_answered(health_host: Host) -> None:
    host = health_host
    before = await health(host)
    assert "No flagged questions" in before.text
    await warm_up(host)
    # key-01 is keyed "Gather", but the strong members all pick "All-reduce".
    await one_post(
        host,
        "key",
        {u: "All-reduce" for u in STRONG}
        | {u: "Gather" for u in WEAK}
        | {u: ("Gather" if i % 2 else "All-reduce") for i, u in enumerate(MIDDLE)},
    )
    # dead-01: nobody ever picks "Mesh".
    spread = ["Ring", "Tree", "Star"]
    await one_post(host, "dead", {u: spread[i % 3] for i, u in enumerate(EVERYONE)})
    await one_post(host, "easy", {u: "Yes" for u in EVERYONE})
    await one_post(
        host, "hard", {u: ["Two", "Three", "Four"][i % 3] for i, u in enumerate(EVERYONE)}
    )

    listed = (await health(host)).text
    lines = {line.split("**")[1]: line for line in listed.splitlines() if line.startswith("• ")}
    assert "check the key" in lines["key-01"] and "negative discrimination" in lines["key-01"]
    assert "strongest members chose B" in lines["key-01"]
    assert "dead option (D chosen by under 3 %" in lines["dead-01"]
    assert "too easy" in lines["easy-01"] and "too hard" in lines["hard-01"]
    # Worst first: the two whose upper group outvotes the key (hard-01's strongest
    # members agree on a wrong option too), then the rest; the plain warm-ups are not listed.
    order = [line.split("**")[1] for line in listed.splitlines() if line.startswith("• ")]
    assert set(order[:2]) == {"key-01", "hard-01"} and set(order[2:]) == {"dead-01", "easy-01"}
    assert not any(key.startswith("warm-") for key in lines)

    detail = (await health(host, "key-01")).text
    assert "30 answers, 50 % right" in detail
    # Chosen by all / strongest 27 % / weakest 27 % (8 of 30 in each group).
    assert "A ✅ Gather: 50 % / 0 % / 100 %" in detail
    assert "B All-reduce: 50 % / 100 % / 0 %" in detail
    assert "discrimination -1.00" in detail
    unknown = await health(host, "nope-99")
    assert "no question `nope-99`" in unknown.text
    refused = await host.command("health", user="member", moderator=False)
    assert "Only moderators" in refused.text


async def test_db_check_covers_the_analysis_and_rebuild_repairs_it(
    health_host: Host, repository: Repository
) -> None:
    host = health_host
    await warm_up(host)
    await one_post(host, "easy", {u: "Yes" for u in EVERYONE})
    assert await check_read_models(repository.engine) == ([], 0)
    async with repository.engine.begin() as connection:
        await connection.execute(
            text("UPDATE question_analysis SET upper_correct = upper_correct + 1")
        )
    lines, total = await check_read_models(repository.engine)
    assert total == 5 and all(line.startswith("question_analysis") for line in lines)
    await rebuild_read_models(repository.engine)
    assert await check_read_models(repository.engine) == ([], 0)


async def test_forget_me_leaves_the_analysis_as_if_the_member_never_answered(
    health_host: Host, repository: Repository
) -> None:
    host = health_host
    await warm_up(host)
    await one_post(host, "dead", {u: "Ring" for u in EVERYONE})
    await repository.forget_member("test", "strong-0")
    assert await check_read_models(repository.engine) == ([], 0)
    assert "29 answers" in (await health(host, "dead-01")).text


def report_values(reason: str = "wrong answer", details: str = "B is right") -> dict[str, str]:
    return {"reason": reason, "text": details}


async def report(host: Host, sent: Sent, user: str, **given: str) -> Any:
    [button] = [b for b in sent.latest.buttons if b.label == "Report a problem"]
    opened = await host.service.handle_click(Interaction(CHANNEL, user, button.custom_id))
    assert opened.form is not None, opened.text
    form = FormSubmission(CHANNEL, user, opened.form.form_id, report_values(**given))
    return await host.service.handle_form(form)


async def press(host: Host, message: OutMessage, label: str, *, moderator: bool = True) -> Any:
    [button] = [b for b in message.buttons if b.label == label]

    async def check(_role: str | None) -> bool:
        return moderator

    return await host.service.handle_click(
        Interaction(CHANNEL, "mod", button.custom_id, moderator_check=check)
    )


async def test_a_reported_question_reaches_the_moderators_and_removing_it_stops_its_draw(
    health_host: Host,
) -> None:
    host = health_host
    sent = await one_post(host, "key", {"ana": "All-reduce", "bo": "Gather"})
    reply = await report(host, sent, "ana")
    assert not reply.errors and "with the moderators" in reply.message.text
    second = await report(host, sent, "bo", reason="Typo!", details="")
    assert not second.errors
    bad = await report(host, sent, "cy", reason="boring")
    assert (
        "reason" in bad.errors
        and "wrong answer, unclear, outdated, typo or other" in (bad.errors["reason"])
    )

    card = await host.command("reports")
    assert "Report 1 on key-01 (2 open)" in card.text
    assert "wrong answer: B is right" in card.text and "Key: A. Gather" in card.text
    assert "reported: 2 open reports" in card.text
    assert [b.label for b in card.buttons] == [
        "Dismiss",
        "Mark fixed",
        "Remove from this community",
        "Skip",
    ]
    assert "reported" in (await health(host)).text
    member = await press(host, card, "Dismiss", moderator=False)
    assert "Only moderators" in member.text

    after = await press(host, card, "Remove from this community")
    assert "key-01 is no longer drawn in this community" in after.text
    assert "Report 2 on key-01" in after.text
    [(_, told, message)] = host.adapter.direct
    assert told == "ana" and "no longer asked in this community" in message.text
    again = await press(host, card, "Remove from this community")
    assert "already closed" in again.text

    refused = await host.command("start", options={"questions": 1, "bank": "health", "tag": "key"})
    assert not refused.text.startswith("Starting a quiz"), refused.text
    dismissed = await press(host, after, "Dismiss")
    assert "Report 2 dismissed" in dismissed.text and "No open reports" in dismissed.text
    assert "kept the question" in host.adapter.direct[-1][2].text


async def test_a_member_has_at_most_five_open_reports_and_forget_me_removes_them(
    health_host: Host, repository: Repository
) -> None:
    host = health_host
    sent = await one_post(host, "easy", {"ana": "Yes"})
    for _ in range(MAX_OPEN_REPORTS):
        assert not (await report(host, sent, "ana")).errors
    full = await report(host, sent, "ana")
    assert "5 open reports" in full.message.text
    assert not (await report(host, sent, "bo")).errors
    await repository.forget_member("test", "ana")
    card = await host.command("reports")
    assert "(1 open)" in card.text


async def test_an_open_question_cannot_be_reported(health_host: Host) -> None:
    host = health_host
    await host.start(questions=1, seconds=30, bank="health", tag="easy")
    post_id = int(host.current().message.buttons[0].custom_id.split(":")[2])
    reply = await host.service.handle_click(Interaction(CHANNEL, "ana", buttons.REPORT.id(post_id)))
    assert reply.form is None and "still open" in reply.text


ELSEWHERE = Target("test", "guild-2", "chan-9")


async def test_removal_is_for_one_community_only(health_host: Host) -> None:
    host = health_host
    sent = await one_post(host, "easy", {"ana": "Yes"})
    await report(host, sent, "ana")
    card = await host.command("reports")
    await press(host, card, "Remove from this community")
    here = await host.command("start", options={"questions": 1, "bank": "health", "tag": "easy"})
    assert not here.text.startswith("Starting a quiz")
    there = await host.command(
        "start", ELSEWHERE, options={"questions": 1, "bank": "health", "tag": "easy"}
    )
    assert there.text.startswith("Starting a quiz"), there.text


def test_the_cli_prints_every_questions_analysis_as_a_table_or_csv(tmp_path: Path) -> None:
    import csv
    import io

    from tests.test_cli import run_cli

    played = run_cli("play", "--questions", "1", "--seconds", "60", cwd=tmp_path, stdin="A\n")
    assert played.returncode == 0, played.stderr
    result = run_cli(
        "questions", "health", "--platform", "console", "--community", "local", "--csv",
        cwd=tmp_path,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    rows = list(csv.DictReader(io.StringIO(result.stdout)))
    assert len(rows) == 30  # every question of the shipped bank, answered or not
    answered = [row for row in rows if row["answers"] == "1"]
    [row] = answered
    assert row["right"] in ("0.00", "1.00") and row["discrimination"] == ""
    assert sorted(row[x] for x in "ABCD") == ["0.00", "0.00", "0.00", "1.00"]
    table = run_cli(
        "questions", "health", "--platform", "console", "--community", "local", cwd=tmp_path
    )
    assert table.stdout.splitlines()[0].startswith("question\tanswers\tright\tdiscrimination")
    nowhere = run_cli(
        "questions", "health", "--platform", "slack", "--community", "T0NONE", cwd=tmp_path
    )
    assert nowhere.returncode == 0 and len(nowhere.stdout.splitlines()) == 31  # none answered


async def test_the_dashboard_flags_questions_and_shows_one_with_its_group_chart(
    health_host: Host,
) -> None:
    import re as regex

    from tests.dashboard_helpers import links_for, path_of, web_client

    host = health_host
    await warm_up(host)
    await one_post(
        host,
        "key",
        {u: "All-reduce" for u in STRONG}
        | {u: "Gather" for u in WEAK}
        | {u: ("Gather" if i % 2 else "All-reduce") for i, u in enumerate(MIDDLE)},
    )
    host.service.commands.links = links_for(host.service)
    reply = await host.command("dashboard", user="ana", moderator=False)
    community = path_of(regex.findall(r"https?://\S+", reply.text)[0])
    questions = community.replace("?t=", "/questions?t=")
    async with web_client(host.service, host.service.commands.links) as client:
        listing = await (await client.get(questions + "&period=all")).text()
        [link] = regex.findall(r'href="([^"]*/questions/key-01\?t=[^"]+)"', listing)
        assert "⚑ check the key · negative discrimination · dead option" in listing
        page = await client.get(link.replace("&amp;", "&"))
        assert page.status == 200
        html = await page.text()
        missing = await client.get(link.replace("key-01", "nope-01").replace("&amp;", "&"))
        assert missing.status == 404
    assert "check the key" in html and "strongest members chose B" in html
    assert "30 answers, 50 % right, discrimination -1.00" in html
    # The chart: each option for everyone, the strongest and the weakest 27 %.
    bars = regex.findall(r"<title>([^<]+)</title>", html)
    assert "A · all: 50%" in bars and "A · strongest 27 %: 0%" in bars
    assert "B · strongest 27 %: 100%" in bars and "B · weakest 27 %: 0%" in bars


async def test_a_review_card_is_reported_from_under_its_verdict(health_host: Host) -> None:
    host = health_host
    await one_post(host, "easy", {"ana": "No"})  # a miss: a card due in ten minutes
    host.clock.advance(601)
    card = await host.command("review", user="ana", moderator=False)
    assert not [b for b in card.buttons if b.label == "Report a problem"]  # nothing answered yet
    [wrong] = [b for b in card.buttons if b.label == letter_for_card(card, "No")]
    done = await host.service.handle_click(Interaction(CHANNEL, "ana", wrong.custom_id))
    [button] = [b for b in done.buttons if b.label == "Report a problem"]
    stranger = await host.service.handle_click(Interaction(CHANNEL, "bo", button.custom_id))
    assert stranger.form is None and "not the last one you answered" in stranger.text
    opened = await host.service.handle_click(Interaction(CHANNEL, "ana", button.custom_id))
    assert opened.form is not None
    form = FormSubmission(CHANNEL, "ana", opened.form.form_id, report_values("unclear", ""))
    reply = await host.service.handle_form(form)
    assert reply.message is not None and "report on easy-01" in reply.message.text
    card = await host.command("reports")
    assert "Report 1 on easy-01" in card.text and "unclear: (no details)" in card.text


def letter_for_card(card: OutMessage, option: str) -> str:
    [letter] = [letter for letter, shown in shown_options(card).items() if shown == option]
    return letter


async def test_migration_0014_fills_the_analysis_from_answers_already_stored(
    tmp_path: Path,
) -> None:
    """A database at 0013 with a closed post and its answers: after the upgrade
    the analysis holds them, as `db check` agrees (SQLite only: the backfill
    is the replay that `db check` runs on both backends)."""
    from datetime import UTC, datetime

    from bot.storage.db import create_engine, upgrade

    engine = create_engine(f"sqlite+aiosqlite:///{tmp_path / 'old.db'}")
    await upgrade(engine, "0013")
    when = datetime(2026, 11, 2, 9, 0, tzinfo=UTC).isoformat()
    async with engine.begin() as connection:
        await connection.execute(
            text(
                "INSERT INTO channels (id, platform, community, channel, created_at) "
                "VALUES (1, 'test', 'guild-1', 'chan-1', :at)"
            ),
            {"at": when},
        )
        await connection.execute(
            text(
                "INSERT INTO posts (id, channel_id, kind, question_id, option_order, "
                "correct_slot, seconds, posted_at, closes_at, closed_at) VALUES "
                "(1, 1, 'live', 'pdt-01', '[1, 0, 2, 3]', 0, 30, :at, :at, :at)"
            ),
            {"at": when},
        )
        for user, slot in (("ana", 0), ("bo", 1), ("cy", 1)):
            await connection.execute(
                text(
                    "INSERT INTO answers (post_id, channel_id, user_id, slot, correct, points, "
                    "answered_at, latency_ms) VALUES (1, 1, :user, :slot, :right, 0, :at, 900)"
                ),
                {"user": user, "slot": slot, "right": slot == 0, "at": when},
            )
    await upgrade(engine)
    row = await _analysis_row(
        engine, "answered, correct, option_0, option_1, options, answer", "pdt-01"
    )
    # Slot 0 shows bank option 1 (the key), slot 1 bank option 0.
    assert tuple(row) == (3, 1, 2, 1, 4, 1)
    # (The raw rows above skipped the other read models; only this one is asked.)
    lines, _ = await check_read_models(engine)
    assert not [line for line in lines if line.startswith("question_analysis")]
    await engine.dispose()


async def test_a_post_of_another_community_cannot_be_reported_here(health_host: Host) -> None:
    host = health_host
    sent = await one_post(host, "easy", {"ana": "Yes"})
    [button] = [b for b in sent.latest.buttons if b.label == "Report a problem"]
    elsewhere = await host.service.handle_click(Interaction(ELSEWHERE, "ana", button.custom_id))
    assert elsewhere.form is None and "still open or gone" in elsewhere.text
    form = FormSubmission(ELSEWHERE, "ana", buttons.REPORT_FORM.id(1), report_values())
    refused = await host.service.handle_form(form)
    assert refused.message is not None and "still open or gone" in refused.message.text


async def test_a_removed_question_is_put_back_in_the_draw_by_its_community_only(
    health_host: Host,
) -> None:
    host = health_host
    sent = await one_post(host, "key", {"ana": "All-reduce"})
    await report(host, sent, "ana")
    card = await host.command("reports")
    await press(host, card, "Remove from this community")
    refused = await host.command("start", options={"questions": 1, "bank": "health", "tag": "key"})
    assert not refused.text.startswith("Starting a quiz"), refused.text

    member = await host.command("restore", user="ana", moderator=False, id="key-01")
    assert "Only" in member.text and "moderators" in member.text
    elsewhere = Target(CHANNEL.platform, "another-community", "c9")
    there = await host.command("restore", elsewhere, id="key-01")
    assert "was not removed in this community" in there.text
    unknown = await host.command("restore", id="no-such-question")
    assert "There is no question `no-such-question`" in unknown.text

    back = await host.command("restore", id="key-01")
    assert "key-01 is back in this community's draw" in back.text
    again = await host.command("restore", id="key-01")
    assert "was not removed in this community" in again.text
    await host.start(questions=1, bank="health", tag="key")
    assert host.question_of(host.current()).id == "key-01"


async def test_a_close_ranks_its_answerers_as_the_recount_does(host: Host) -> None:
    """The close counts its post's upper and lower groups in the database;
    the recount ranks in Python (`post_counts`). Both order ties by the
    smoothed right share, then more answers, then user id in code point
    order (digits, capitals, small letters, then accents), and agree."""
    # Code point order: "10" < "9" < "B" < "Z" < "a" < "b" < ... < "é".
    members = ["é", "b", "a", "Z", "9", "B", "10", "c", "d", "e", "f", "g"]
    first_three = sorted(members)[:3]  # ["10", "9", "B"]
    # First post: nobody has a record, so the id alone ranks; 12 answerers
    # make groups of 3, and only the first three by code point are right.
    await host.start(questions=3, seconds=60)
    first_question = host.question_of(host.current()).id
    for member in members:
        await host.answer(member, correct=member in first_three)
    await host.close_current()
    row = await _analysis_row(
        host.service.repository.engine,
        "answered, correct, upper_answered, upper_correct, lower_answered, lower_correct",
        first_question,
    )
    assert tuple(row) == (12, 3, 3, 3, 3, 0)
    # Second post: records now differ (right 2/3 smoothed, wrong 1/3), and
    # those with equal records are again ordered by id.
    for member in members:
        await host.answer(member, correct=member in ("a", "Z", "é"))
    await host.close_current()
    # Third post: six members right once in two (smoothed 2/4) tie on share
    # with three newcomers (1/2); more answers go first, then the id.
    for member in [*members, "0", "A", "h"]:
        await host.answer(member, correct=member in ("10", "9", "B", "Z"))
    await host.close_current()
    assert await check_read_models(host.service.repository.engine) == ([], 0)


async def _analysis_row(engine: Any, columns: str, question_id: str) -> Any:
    """`columns` of the question's one `question_analysis` row."""
    async with engine.connect() as connection:
        found = await connection.execute(
            text(f"SELECT {columns} FROM question_analysis WHERE question_id = :question"),
            {"question": question_id},
        )
        return found.one()
