"""The dashboard over HTTP, on a history played through the service: the link
from `/quiz dashboard`, who it lets in, and what each page shows."""

from __future__ import annotations

import re
from datetime import UTC, date, datetime

import pytest
from sqlalchemy import text

from bot.chat import Command
from bot.quiz.service import QuizService
from bot.storage import dashboard as dashboard_store
from bot.storage.db import check_read_models, rebuild_read_models
from bot.storage.post_votes import backfill_post_votes
from bot.web.tokens import Signer
from bot.web.views import due_reviews
from tests.conftest import CHANNEL, Host
from tests.dashboard_helpers import (
    SECRET,
    links_for,
    path_of,
    play_history,
    rows_of,
    web_client,
)
from tests.test_submissions import accept_one


def dashboard_service(host: Host) -> QuizService:
    host.service.commands.links = links_for(host.service)
    return host.service


async def links_from_chat(host: Host, user: str = "ada") -> tuple[str, str]:
    reply = await host.command("dashboard", user=user, moderator=False)
    assert not reply.public
    urls = re.findall(r"https?://\S+", reply.text)
    assert len(urls) == 2, reply.text
    return path_of(urls[0]), path_of(urls[1])


async def test_without_a_secret_the_command_says_the_dashboard_is_off(host: Host) -> None:
    reply = await host.command("dashboard", user="ada", moderator=False)
    assert not reply.public and "dashboard is off" in reply.text and "QUIZ_WEB_SECRET" in reply.text
    async with web_client(host.service, None) as client:
        assert (await client.get("/dashboard/test/guild-1")).status == 404
        assert (await client.get("/healthz")).status == 200


async def test_the_community_page_shows_each_board_with_closed_answers_only(host: Host) -> None:
    await play_history(host)
    service = dashboard_service(host)
    community, _ = await links_from_chat(host)
    async with web_client(service, service.commands.links) as client:  # type: ignore[arg-type]
        response = await client.get(community + "&period=all")
        assert response.status == 200
        assert response.headers["Referrer-Policy"] == "no-referrer"
        html = await response.text()
    rows = rows_of(html)
    # The community board first: ada 45 + 0, bob 15 + 15, cy 0; dee's answer is open.
    # Names come from the platform (the recording adapter calls ada "Member ada").
    assert rows[:3] == [
        ["1", "Member ada", "45", "3", "4"],
        ["2", "Member bob", "30", "2", "4"],
        ["3", "Member cy", "0", "0", "2"],
    ]
    # chan-1's own board follows: ada 45, bob 15, cy 0.
    assert rows[3:6] == [
        ["1", "Member ada", "45", "3", "3"],
        ["2", "Member bob", "15", "1", "3"],
        ["3", "Member cy", "0", "0", "2"],
    ]
    assert "dee" not in html and "far-member" not in html
    assert "#chan-1" in html and "#chan-2" in html and "far-1" not in html
    assert "<svg" in html  # the top-ten chart


async def test_periods_switch_and_an_unknown_period_is_a_clear_400(host: Host) -> None:
    await play_history(host)
    service = dashboard_service(host)
    community, _ = await links_from_chat(host)
    async with web_client(service, service.commands.links) as client:  # type: ignore[arg-type]
        streaks = await (await client.get(community + "&period=streaks")).text()
        # No daily question was played: each channel's streak board is there, empty.
        assert 'aria-current="true">Daily streaks' in streaks
        assert streaks.count("Nobody is on this board yet") == 2
        host.clock.advance(8 * 24 * 3600)  # next week: the week board is empty
        community, _ = await links_from_chat(host)  # the old link has expired
        week = await (await client.get(community + "&period=week")).text()
        assert "Nobody is on this board yet" in week
        bad = await client.get(community + "&period=decade")
        assert bad.status == 400
        assert "week, month, all, streaks" in await bad.text()


async def test_bad_links_get_403_and_show_nothing(host: Host) -> None:
    await play_history(host)
    service = dashboard_service(host)
    community, member = await links_from_chat(host)
    token = community.split("?t=")[1]
    other = Signer(SECRET, host.clock).sign("test", "guild-2")
    async with web_client(service, service.commands.links) as client:  # type: ignore[arg-type]
        for path in (
            "/dashboard/test/guild-1",  # no token
            "/dashboard/test/guild-1?t=",
            f"/dashboard/test/guild-1?t={token[:-2]}xx",  # tampered
            f"/dashboard/test/guild-1?t={other}",  # another community's token
            f"/dashboard/test/guild-2?t={token}",  # this token on another community
            f"/dashboard/test/guild-1/questions?t={other}",
            f"/dashboard/test/guild-1/me?t={token}",  # a community token is nobody's page
        ):
            response = await client.get(path)
            assert response.status == 403, path
            html = await response.text()
            assert "ada" not in html and "Leaderboards</h1>" not in html, path
        host.clock.advance(24 * 3600 + 1)
        for path in (community, member):
            assert (await client.get(path)).status == 403


async def test_the_questions_page_splits_the_votes_of_closed_questions(host: Host) -> None:
    history = await play_history(host)
    service = dashboard_service(host)
    community, _ = await links_from_chat(host)
    questions = community.replace("?t=", "/questions?t=")
    async with web_client(service, service.commands.links) as client:  # type: ignore[arg-type]
        html = await (await client.get(questions + "&period=all")).text()
    assert history.open_prompt not in html
    summary = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", html.split('class="summary">')[1]))
    # guild-1's four closed posts (guild-2's is not counted here), half of 10 answers right.
    assert summary.strip().startswith("4 closed question posts, 10 answers, 50% answered right.")
    # One row per question: chan-2 drew one of chan-1's three questions, so its
    # two answers join that question's two (the seeded shuffle makes this so).
    table = rows_of(html.split("Every question")[1])
    assert sorted(int(row[1]) for row in table) == [3, 3, 4]
    assert "Hardest questions" in html and 'class="split"' in html
    # The right option is marked in each split.
    assert html.count("✓") == len(table)


async def test_a_member_sees_their_own_page(host: Host) -> None:
    await play_history(host)
    service = dashboard_service(host)
    _, member = await links_from_chat(host, user="bob")

    async def reviews(platform: str, community: str, user: str) -> int | None:
        return 3 if (platform, community, user) == ("test", "guild-1", "bob") else 0

    async with web_client(service, service.commands.links, reviews) as client:  # type: ignore[arg-type]
        html = await (await client.get(member)).text()
    assert "<h1>Member bob</h1>" in html
    assert re.search(r'class="big">30</span> points', html)
    assert re.search(r'class="big">4</span> answered', html)
    assert "Your points over time" in html and "<polyline" in html
    assert "Due reviews" in html and "<strong>3</strong> questions to review" in html


async def test_a_member_page_without_the_study_loop_has_no_review_section(host: Host) -> None:
    await play_history(host)
    service = dashboard_service(host)
    _, member = await links_from_chat(host, user="ada")
    async with web_client(service, service.commands.links) as client:  # type: ignore[arg-type]
        html = await (await client.get(member)).text()
    assert "Due reviews" not in html
    assert re.search(r'class="big">45</span> points', html)


async def test_forget_me_takes_the_member_off_the_question_counts(host: Host) -> None:
    await play_history(host)
    service = dashboard_service(host)
    community, _ = await links_from_chat(host)
    questions = community.replace("?t=", "/questions?t=") + "&period=all"
    await service.handle_command(Command("forget-me", CHANNEL, "ada"))
    async with web_client(service, service.commands.links) as client:  # type: ignore[arg-type]
        html = await (await client.get(questions)).text()
    table = rows_of(html.split("Every question")[1])
    assert sum(int(row[1]) for row in table) == 6  # ada's four answers are gone


async def test_post_votes_kept_at_close_match_a_recount_from_the_answers(host: Host) -> None:
    """The close transaction's rows are what migration 0010's backfill makes of
    the same answers (and the open question has none)."""
    await play_history(host)
    engine = host.service.repository.engine
    columns = "post_id, question_id, answered, correct, option_0, option_1, option_2, option_3"
    async with engine.begin() as connection:
        kept = (await connection.execute(text(f"SELECT {columns} FROM post_votes"))).all()
        await connection.execute(text("DELETE FROM post_votes"))
        await connection.run_sync(backfill_post_votes)
        recounted = (await connection.execute(text(f"SELECT {columns} FROM post_votes"))).all()
    assert sorted(kept) == sorted(recounted)
    assert len(kept) == 5  # five closed posts with answers; the open one is not there
    assert sum(row.answered for row in kept) == 11
    assert await check_read_models(engine) == ([], 0)


async def test_db_check_reports_a_damaged_post_votes_row_and_rebuild_repairs_it(
    host: Host,
) -> None:
    await play_history(host)
    engine = host.service.repository.engine
    async with engine.begin() as connection:
        await connection.execute(text("UPDATE post_votes SET option_0 = option_0 + 7"))
    lines, total = await check_read_models(engine)
    assert total == 5 and all(line.startswith("post_votes ") for line in lines)
    await rebuild_read_models(engine)
    assert await check_read_models(engine) == ([], 0)


async def test_the_member_page_counts_the_study_loops_due_reviews(host: Host) -> None:
    await play_history(host)
    service = dashboard_service(host)
    host.clock.advance(60 * 24 * 3600)  # long enough for every card to fall due
    _, member = await links_from_chat(host, user="cy")
    due = await service.repository.cards.due_count("test", "cy", host.clock.now())
    assert due >= 1  # cy missed two questions: both come back for review
    async with web_client(service, service.commands.links, due_reviews(service)) as client:  # type: ignore[arg-type]
        html = await (await client.get(member)).text()
    assert f"<strong>{due}</strong> question" in html and "/quiz review" in html


async def test_the_member_page_counts_each_utc_day_even_within_one_question(host: Host) -> None:
    """One question open across midnight UTC: each answer counts on its own
    day, in the rows the close keeps (and a recount from the answers agrees)."""
    host.clock.set(datetime(2026, 3, 2, 23, 59, 45, tzinfo=UTC))
    await host.start(CHANNEL, questions=1, seconds=60)
    host.clock.set(datetime(2026, 3, 2, 23, 59, 50, tzinfo=UTC))
    await host.answer("ada", correct=True)
    host.clock.set(datetime(2026, 3, 3, 0, 0, 5, tzinfo=UTC))
    await host.answer("bob", correct=True)
    await host.close_current()
    await host.start(CHANNEL, questions=1, seconds=10)
    await host.answer("ada", correct=False)
    await host.close_current()
    dashboard = host.service.repository.dashboard
    ada = await dashboard.member_record("test", "guild-1", "ada")
    bob = await dashboard.member_record("test", "guild-1", "bob")
    right = ada.points_per_day[0][1]
    assert right > 0
    assert ada.points_per_day == [(date(2026, 3, 2), right), (date(2026, 3, 3), 0)]
    assert [day for day, _ in bob.points_per_day] == [date(2026, 3, 3)]
    assert sorted(n for _, n, _ in ada.per_question) == [1, 1]
    assert sum(c for _, _, c in ada.per_question) == 1
    service = dashboard_service(host)
    _, member = await links_from_chat(host, user="ada")
    async with web_client(service, service.commands.links) as client:  # type: ignore[arg-type]
        html = await (await client.get(member)).text()
    assert re.search(r'class="big">2</span> days played', html)
    assert re.search(rf'class="big">{right}</span> points', html)
    assert await check_read_models(host.service.repository.engine) == ([], 0)


async def test_forget_me_refuses_earlier_links_and_empties_the_member_page(host: Host) -> None:
    await play_history(host)
    service = dashboard_service(host)
    _, member = await links_from_chat(host, user="ada")
    _, bob = await links_from_chat(host, user="bob")
    await service.handle_command(Command("forget-me", CHANNEL, "ada"))
    host.clock.advance(1)
    _, fresh = await links_from_chat(host, user="ada")
    async with web_client(service, service.commands.links) as client:  # type: ignore[arg-type]
        refused = await client.get(member)  # issued before: it would still last 24 h
        assert refused.status == 403
        assert "asked to be forgotten" in await refused.text()
        assert (await client.get(bob)).status == 200  # other members' links still open
        html = await (await client.get(fresh)).text()
    assert re.search(r'class="big">0</span> points', html)
    assert re.search(r'class="big">0</span> days played', html)
    assert await check_read_models(host.service.repository.engine) == ([], 0)


async def test_db_check_reports_damaged_member_rows_and_rebuild_repairs_them(
    host: Host,
) -> None:
    await play_history(host)
    engine = host.service.repository.engine
    async with engine.begin() as connection:
        await connection.execute(text("UPDATE member_days SET points = points + 1"))
        await connection.execute(
            text("DELETE FROM community_member_questions WHERE user_id = 'bob'")
        )
    lines, total = await check_read_models(engine)
    assert any(line.startswith("member_days ") for line in lines)
    assert any(line.startswith("community_member_questions ") for line in lines)
    # ada, bob, cy and far-member each played on one day; bob answered 3 questions here.
    assert total == 4 + 3
    await rebuild_read_models(engine)
    assert await check_read_models(engine) == ([], 0)


async def test_boards_read_in_several_statements_show_the_same_page(
    host: Host, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A community with more channels than one statement takes: its channel
    boards come in slices, and the page is the same."""
    await play_history(host)
    service = dashboard_service(host)
    community, _ = await links_from_chat(host)
    pages = {}
    for per_statement in (50, 1):
        monkeypatch.setattr(dashboard_store, "CHANNELS_PER_STATEMENT", per_statement)
        async with web_client(service, service.commands.links) as client:  # type: ignore[arg-type]
            pages[per_statement] = [
                rows_of(await (await client.get(f"{community}&period={period}")).text())
                for period in ("all", "week", "streaks")
            ]
    assert pages[1] == pages[50]
    assert len(pages[1][0]) == 3 + 3 + 2  # the community's board, chan-1's and chan-2's


async def test_cards_with_nothing_to_show_say_why(host: Host) -> None:
    # One closed question with two answers: too few for the hardest-questions card.
    await host.start(CHANNEL, questions=1, seconds=10)
    await host.answer("ada", correct=True)
    await host.answer("bob", correct=False)
    await host.close_current()
    service = dashboard_service(host)
    community, _ = await links_from_chat(host)
    questions = community.replace("?t=", "/questions?t=")
    async with web_client(service, service.commands.links) as client:  # type: ignore[arg-type]
        html = re.sub(r"\s+", " ", await (await client.get(questions + "&period=all")).text())
    hardest = html.split("<h2>Hardest questions</h2>")[1].split("</section>")[0]
    assert "No question has 3 answers in this period yet" in hardest
    assert "a question needs 3 answers in this period to be ranked" in html
    summary = re.sub(r"<[^>]+>", "", html.split('class="summary">')[1])
    assert summary.strip().startswith("1 closed question posts, 2 answers, 50% answered right.")


async def test_community_questions_count_on_the_questions_page_as_on_the_boards(
    host: Host,
) -> None:
    await accept_one(host)
    await host.start(CHANNEL, questions=1, seconds=10, bank="community")
    prompt = "Which collective sums gradients across ranks?"  # the submitted question
    await host.click("ada", "A")
    await host.click("bob", "B")
    await host.close_current()
    service = dashboard_service(host)
    community, _ = await links_from_chat(host)
    questions = community.replace("?t=", "/questions?t=")
    async with web_client(service, service.commands.links) as client:  # type: ignore[arg-type]
        html = re.sub(r"\s+", " ", await (await client.get(questions + "&period=all")).text())
    summary = re.sub(r"<[^>]+>", "", html.split('class="summary">')[1])
    assert summary.strip().startswith("1 closed question posts, 2 answers,")
    assert "0 answers" not in summary
    assert prompt in html, "the community question has its own line"


async def test_any_malformed_token_is_403_never_a_server_error(host: Host) -> None:
    service = dashboard_service(host)
    community, _ = await links_from_chat(host)
    base = community.split("?")[0]
    good = community.split("t=")[1].split("&")[0]
    hostile = [
        "é.é",  # not ASCII: once a 500 with a traceback
        good + "é",
        "%00.%00",
        "a" * 2000,
        "..",
        good.split(".")[0] + ".",
    ]
    async with web_client(service, service.commands.links) as client:  # type: ignore[arg-type]
        for token in hostile:
            response = await client.get(base, params={"t": token})
            assert response.status == 403, token
            assert "This link is not valid" in await response.text()


async def test_the_dashboard_speaks_the_community_language_or_the_browsers(host: Host) -> None:
    await play_history(host)
    service = dashboard_service(host)
    await host.command("config", key="language", value="de")
    community, member = await links_from_chat(host)
    async with web_client(service, service.commands.links) as client:  # type: ignore[arg-type]
        german = await (await client.get(community + "&period=all")).text()
        french = await (
            await client.get(community, headers={"Accept-Language": "fr-CH, fr;q=0.9, en;q=0.5"})
        ).text()
        mine = await (await client.get(member)).text()
        refused = await (await client.get(community.split("?")[0] + "?t=forged")).text()
    assert '<html lang="de">' in german
    assert "<h1>Bestenlisten</h1>" in german and "Pro Kanal" in german
    assert "<th>Mitglied</th>" in german and "Die ganze Community · Insgesamt" in german
    assert "Gezählt werden nur geschlossene Fragen." in german
    assert "Member ada" in german  # names are the platform's, never translated
    assert '<html lang="fr">' in french and "<h1>Classements</h1>" in french
    assert "<h1>Member ada</h1>" in mine and "Tage gespielt" in mine
    assert "Link ungültig" in refused and "<code>/quiz dashboard</code>" in refused
