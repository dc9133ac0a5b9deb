"""The study loop through the service, on a fake clock: review cards kept from
quiz and daily answers (FSRS), `/quiz review`, nudges, forget-me and the Anki
export. The adapters' side is in test_discord.py and test_slack.py."""

from __future__ import annotations

import io
import re
import sqlite3
import tempfile
import zipfile
from datetime import UTC, datetime, timedelta
from pathlib import Path

from bot.chat import Interaction, OutMessage, Target
from bot.domain.records import NewAnswer
from bot.domain.spaced_repetition import review as _review
from bot.quiz.bank import Question
from bot.quiz.service import QuizService
from bot.quiz.study import APPLY_GRACE
from tests.conftest import CHANNEL, Host, restart, run_until, shown_options
from tests.test_submissions import button, submit
from tests.test_submissions import click as moderator_click

NEXT_REVIEW = re.compile(r"Next review: (\w{3} \d\d \w{3} \d\d:\d\d)")


# -- helpers ------------------------------------------------------------------------


async def quiz_round(host: Host, answers: dict[str, bool], *, after: float = 0.0) -> Question:
    """A one-question live quiz: each member answers right or wrong `after`
    seconds into the question, then it closes. Returns the question."""
    await host.start(questions=1, seconds=30)
    question = host.question_of(host.current())
    host.clock.advance(after)
    for user, correct in answers.items():
        await host.answer(user, correct=correct)
    await host.close_current()
    return question


async def review(host: Host, user: str, target: Target = CHANNEL, **args: str) -> OutMessage:
    return await host.command("review", target, user=user, moderator=False, options=args)


def question_on(host: Host, card: OutMessage) -> Question:
    [question] = [
        q
        for question_id in host.catalog.pool()
        if (q := host.catalog.question(question_id)) is not None and q.prompt in card.text
    ]
    return question


def letter_for(host: Host, card: OutMessage, *, correct: bool) -> str:
    question = question_on(host, card)
    right = question.options[question.answer_index]
    shown = shown_options(card)
    return next(letter for letter, text in shown.items() if (text == right) == correct)


async def click_card(
    host: Host, card: OutMessage, user: str, letter: str, target: Target = CHANNEL
) -> OutMessage:
    [button] = [b for b in card.buttons if b.label == letter]
    return await host.service.handle_click(Interaction(target, user, button.custom_id))


def next_review(message: OutMessage) -> datetime:
    found = NEXT_REVIEW.search(message.text)
    assert found, message.text
    return datetime.strptime(f"2026 {found[1]}", "%Y %a %d %b %H:%M").replace(tzinfo=UTC)


# -- FSRS through the service ----------------------------------------------------------


async def test_a_wrong_answer_is_due_in_minutes_and_a_right_one_days_later(host: Host) -> None:
    start = host.clock.now()
    await quiz_round(host, {"ana": False, "bo": True}, after=0)
    nothing = await review(host, "ana")
    assert nothing.text.startswith("Nothing to review. Next review: ")
    assert next_review(nothing) - start == timedelta(minutes=10)
    # Right at once is Easy; right later than the first fifth of the time is Good.
    easy = next_review(await review(host, "bo"))
    assert easy - start == timedelta(days=8)
    await quiz_round(host, {"dee": True}, after=10)
    good = next_review(await review(host, "dee"))
    assert timedelta(days=1) < good - host.clock.now() < timedelta(days=3)

    host.clock.set(start + timedelta(minutes=10))
    card = await review(host, "ana")
    assert card.buttons and all(b.custom_id.startswith("qm:r:") for b in card.buttons)
    assert "Card 1 of at most 10 · 1 due" in (card.footer or "")


async def test_a_second_right_answer_is_due_later_still(host: Host) -> None:
    await quiz_round(host, {"bo": True}, after=10)
    first_due = next_review(await review(host, "bo"))
    first_interval = first_due - host.clock.now()
    host.clock.set(first_due + timedelta(minutes=1))  # shown to the minute
    card = await review(host, "bo")
    host.clock.advance(10)  # past the Easy fifth of a review card's 30 seconds
    done = await click_card(host, card, "bo", letter_for(host, card, correct=True))
    assert "is right!" in done.text
    assert "Review done: 1 card." in done.text
    assert next_review(done) - host.clock.now() > first_interval * 2


async def test_due_cards_come_most_overdue_first_up_to_the_count(host: Host) -> None:
    first = await quiz_round(host, {"ana": False})
    host.clock.advance(60)
    second = await quiz_round(host, {"ana": False})
    host.clock.advance(3600)

    card = await review(host, "ana", count="1")
    assert question_on(host, card) == first
    assert "Card 1 of at most 1 · 2 due" in (card.footer or "")
    done = await click_card(host, card, "ana", letter_for(host, card, correct=False))
    assert "the answer is" in done.text and "Review done: 1 card." in done.text
    # No more cards: only the button that reports a problem with the one just answered.
    assert [b.label for b in done.buttons] == ["Report a problem"]

    card = await review(host, "ana")
    assert question_on(host, card) == second  # the first is due again only in 10 minutes


async def test_an_answer_shows_the_verdict_and_the_next_card(host: Host) -> None:
    first = await quiz_round(host, {"ana": False})
    second = await quiz_round(host, {"ana": False})
    host.clock.advance(3600)
    card = await review(host, "ana")
    wrong = letter_for(host, card, correct=False)
    following = await click_card(host, card, "ana", wrong)
    assert following.text.startswith(f"❌ {wrong} is not it")
    assert first.explanation in following.text
    assert question_on(host, following) == second
    assert "Card 2 of at most 10" in (following.footer or "")
    done = await click_card(host, following, "ana", letter_for(host, following, correct=True))
    assert "is right!" in done.text and "Review done: 2 cards." in done.text


async def test_bad_counts_are_refused_clearly(host: Host) -> None:
    await quiz_round(host, {"ana": False})
    for bad in ("0", "51", "lots"):
        reply = await review(host, "ana", count=bad)
        assert reply.text.startswith("The number of cards must be a whole number from 1 to 50")
        assert not reply.buttons


async def test_nothing_to_review_yet_says_so(host: Host) -> None:
    reply = await review(host, "newcomer")
    assert reply.text.startswith("Nothing to review yet.")


async def test_the_next_review_is_shown_in_the_channels_zone(host: Host) -> None:
    await host.command("config", key="timezone", value="Asia/Tokyo")
    await quiz_round(host, {"ana": False})
    reply = await review(host, "ana")
    # 09:00 UTC answer, due 09:10 UTC, which is 18:10 in Tokyo.
    assert reply.text == "Nothing to review. Next review: Mon 02 Mar 18:10"


# -- review answers change no scores; clicks are checked -------------------------------


async def test_review_answers_change_no_points_leaderboards_or_streaks(host: Host) -> None:
    await quiz_round(host, {"ana": False, "bo": True})
    before = (await host.stats("ana"), await host.leaderboard())
    host.clock.advance(3600)
    card = await review(host, "ana")
    await click_card(host, card, "ana", letter_for(host, card, correct=True))
    assert (await host.stats("ana"), await host.leaderboard()) == before


async def test_clicks_by_another_member_twice_or_after_a_restart(host: Host) -> None:
    await quiz_round(host, {"ana": False})
    await quiz_round(host, {"ana": False})
    host.clock.advance(3600)
    card = await review(host, "ana")
    right = letter_for(host, card, correct=True)

    refused = await click_card(host, card, "eve", right)
    assert refused.text.startswith("This review card belongs to someone else")

    later = restart(host)
    following = await click_card(later, card, "ana", right)
    assert "is right!" in following.text and following.buttons
    again = await click_card(later, card, "ana", right)
    assert again.text.startswith("You already answered this card")
    unknown = await later.service.handle_click(Interaction(CHANNEL, "ana", "qm:r:999999:0:0"))
    assert unknown.text.startswith("This review has ended")


async def test_stats_and_the_daily_reply_say_how_many_reviews_are_due(host: Host) -> None:
    await quiz_round(host, {"ana": False})
    await quiz_round(host, {"ana": False})
    host.clock.advance(3600)
    stats = await host.command("stats", user="ana", moderator=False)
    assert "📚 2 reviews are due: `/quiz review`" in stats.text

    await host.command("schedule", action="daily", time="12:00")
    await run_until(host, host.clock.now().replace(hour=12, minute=1))
    reply = await host.click("ana", host.correct_letter())
    assert "📚 2 reviews are due" in reply.text


async def test_a_missed_daily_question_can_be_reviewed_the_same_day(host: Host) -> None:
    await host.command("schedule", action="daily", time="10:00")
    await run_until(host, host.clock.now().replace(hour=10, minute=0))
    daily = host.question_of(host.current())
    await host.click("ana", host.wrong_letter())
    host.clock.advance(15 * 60)  # the daily question stays open until tomorrow
    card = await review(host, "ana")
    assert question_on(host, card) == daily
    # Its close tomorrow does not count the same answer a second time.
    await run_until(host, host.clock.now() + timedelta(days=1, hours=1))
    [stored] = await host.service.repository.cards.cards("test", "ana", missed_only=False)
    assert (stored.reviews, stored.misses) == (1, 1)


async def test_forget_me_removes_the_members_cards(host: Host) -> None:
    await quiz_round(host, {"ana": False, "bo": False})
    host.clock.advance(3600)
    await host.command("forget-me", user="ana", moderator=False)
    assert (await review(host, "ana")).text.startswith("Nothing to review yet.")
    assert (await review(host, "bo")).buttons


# -- cards are applied once, even across a crash ---------------------------------------


async def test_a_post_closed_by_a_process_that_died_before_its_cards_is_applied_once(
    host: Host,
) -> None:
    await host.start(questions=1, seconds=30)
    sent = host.current()
    await host.answer("ana", correct=False)
    post_id = int(sent.message.buttons[0].custom_id.split(":")[2])
    # The close commits, then the process dies before the cards step.
    posts = host.service.repository.posts
    assert await posts.claim_close(post_id, host.clock.now())
    assert (await review(host, "ana")).text.startswith("Nothing to review yet.")

    host.clock.advance(APPLY_GRACE.total_seconds() + 1)
    later = restart(host)
    await later.service.tick()
    await later.service.tick()
    study = later.service.study
    assert not await study.cards.apply_post(post_id, later.clock.now(), _review)
    [card] = await later.service.repository.cards.cards("test", "ana", missed_only=False)
    assert (card.reviews, card.misses) == (1, 1)


async def test_answers_stored_while_applying_are_not_lost_or_doubled(host: Host) -> None:
    await host.start(questions=1, seconds=30)
    post = await host.service.posting.post(
        int(host.current().message.buttons[0].custom_id.split(":")[2])
    )
    assert post is not None
    now = host.clock.now()
    stored = await host.service.repository.answers.record_answers(
        [NewAnswer(post, user, 0, post.correct_slot == 0, 0, now) for user in ("a", "b", "c")]
    )
    assert stored == [True, True, True]
    await host.close_current()
    cards = host.service.repository.cards
    for user in ("a", "b", "c"):
        [card] = await cards.cards("test", user, missed_only=False)
        assert card.reviews == 1


# -- the Anki export ---------------------------------------------------------------------


def open_package(data: bytes) -> list[tuple[str, str, str]]:
    """(guid, fields, tags) of each note in an .apkg: a zip holding a SQLite collection."""
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        assert "collection.anki2" in archive.namelist()
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "collection.anki2"
            path.write_bytes(archive.read("collection.anki2"))
            connection = sqlite3.connect(path)
            try:
                rows = connection.execute("SELECT guid, flds, tags FROM notes ORDER BY guid")
                return [(str(g), str(f), str(t)) for g, f, t in rows]
            finally:
                connection.close()


def deck_names(data: bytes) -> set[str]:
    import json

    with zipfile.ZipFile(io.BytesIO(data)) as archive, tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "c.anki2"
        path.write_bytes(archive.read("collection.anki2"))
        connection = sqlite3.connect(path)
        try:
            [decks] = connection.execute("SELECT decks FROM col").fetchone()
        finally:
            connection.close()
    return {deck["name"] for deck in json.loads(decks).values()}


async def test_export_packs_the_missed_questions_with_stable_guids(host: Host) -> None:
    missed = await quiz_round(host, {"ana": False})
    known = await quiz_round(host, {"ana": True})
    reply = await host.command("export", user="ana", moderator=False)
    assert reply.attachment is not None and reply.attachment.filename == "quizmaster-missed.apkg"
    assert "1 question you missed" in reply.text

    [(guid, fields, tags)] = open_package(reply.attachment.data)
    prompt, options, answer, explanation = fields.split("\x1f")
    assert prompt == missed.prompt.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    assert options.startswith("<b>A.</b> ")
    right = missed.options[missed.answer_index]
    assert answer.startswith(f"<b>{missed.answer}.</b> ") and right[:20] in answer
    assert explanation
    assert set(missed.tags) <= set(tags.split())
    bank = host.catalog.bank_of(missed.id)
    assert bank is not None and bank.title in deck_names(reply.attachment.data)

    every = await host.command("export", user="ana", moderator=False, which="all")
    assert every.attachment is not None and every.attachment.filename == "quizmaster-all.apkg"
    notes = open_package(every.attachment.data)
    assert len(notes) == 2 and guid in {g for g, _, _ in notes}
    assert any(known.prompt[:20] in fields for _, fields, _ in notes)

    host.clock.advance(86400)
    again = await host.command("export", user="ana", moderator=False, which="all")
    assert again.attachment is not None
    assert [g for g, _, _ in open_package(again.attachment.data)] == [g for g, _, _ in notes]


async def test_export_with_nothing_to_export_or_a_bad_choice(host: Host) -> None:
    await quiz_round(host, {"ana": True})
    none = await host.command("export", user="ana", moderator=False)
    assert none.text.startswith("No missed questions to export yet.") and none.attachment is None
    bad = await host.command("export", user="ana", moderator=False, which="everything")
    assert bad.text == "Export `missed` (the default) or `all`, not `everything`."


def test_typed_review_and_export_commands() -> None:
    from bot.quiz.surface.grammar import UsageError, parse

    assert parse("review").args == {}
    assert parse("review 5").args == {"count": "5"}
    assert parse("export").args == {}
    assert parse("export all").args == {"which": "all"}
    for bad in ("review 5 6", "export missed all"):
        try:
            parse(bad)
        except UsageError:
            continue
        raise AssertionError(f"{bad!r} parsed")


async def test_a_review_click_with_a_malformed_member_id_is_refused(service: QuizService) -> None:
    reply = await service.handle_click(Interaction(CHANNEL, "bad id", "qm:r:1:0:0"))
    assert "malformed" in reply.text


async def test_a_new_review_ends_the_members_earlier_one(host: Host) -> None:
    await quiz_round(host, {"ana": False})
    await quiz_round(host, {"ana": False})
    host.clock.advance(3600)
    old = await review(host, "ana")
    new = await review(host, "ana")
    stale = await click_card(host, old, "ana", old.buttons[0].label)
    assert stale.text.startswith("This review has ended")
    assert (await click_card(host, new, "ana", new.buttons[0].label)).buttons


async def test_cards_follow_the_member_to_other_channels_of_the_platform(host: Host) -> None:
    missed = await quiz_round(host, {"ana": False})
    host.clock.advance(3600)
    elsewhere = Target(CHANNEL.platform, "another-community", "another-channel")
    card = await review(host, "ana", elsewhere)
    assert question_on(host, card) == missed
    following = await click_card(host, card, "ana", letter_for(host, card, correct=True), elsewhere)
    assert "Review done: 1 card." in following.text


async def test_the_terminal_saves_an_exported_deck_and_types_letters_for_review_cards(
    host: Host, tmp_path: Path
) -> None:
    from bot.adapters.console.adapter import CONSOLE_TARGET, LOCAL_USER, ConsoleAdapter
    from bot.chat import Command

    shown = io.StringIO()
    console = ConsoleAdapter(shown, save_to=tmp_path)
    host.service.register(console)
    await host.command("start", CONSOLE_TARGET, user=LOCAL_USER, questions=1, seconds=30)
    assert console.open_question is not None
    click = console.click_for("A")
    assert click is not None
    await host.service.handle_click(click)
    await host.service.stop(CONSOLE_TARGET)

    export = Command("export", CONSOLE_TARGET, LOCAL_USER, args={"which": "all"})
    await console.reply_private(export, await host.service.handle_command(export))
    saved = tmp_path / "quizmaster-all.apkg"
    assert f"Saved {saved}" in shown.getvalue()
    assert len(open_package(saved.read_bytes())) == 1

    host.clock.advance(30 * 86400)
    start = Command("review", CONSOLE_TARGET, LOCAL_USER)
    await console.reply_private(start, await host.service.handle_command(start))
    assert console.open_card is not None and "Type one of A, B" in shown.getvalue()
    typed = console.click_for("a")
    assert typed is not None and typed.custom_id.startswith("qm:r:")
    await console.reply_private(typed, await host.service.handle_click(typed))
    # No letters left: only `!`, which reports the card just answered.
    assert set(console.open_card or {}) == {"!"}
    assert "Review done: 1 card." in shown.getvalue()


# -- community questions ------------------------------------------------------------


async def test_a_missed_community_question_is_reviewed_and_exported(host: Host) -> None:
    """Cards find their questions in the community bank too, also in a process
    that never drew them (after a restart)."""
    await submit(host)
    await moderator_click(host, button(await host.command("submissions"), "Accept"))
    await host.start(questions=1, seconds=30, bank="community")
    shown = shown_options(host.current().message)
    wrong = next(letter for letter, text in shown.items() if text != "all_reduce")
    assert (await host.click("ana", wrong)).text.startswith("Locked in")
    await host.close_current()
    host.clock.advance(3600)

    later = restart(host)
    card = await review(later, "ana")
    assert "Which collective sums gradients" in card.text
    assert card.title == "Review · Community questions"
    right = next(letter for letter, text in shown_options(card).items() if text == "all_reduce")
    done = await click_card(later, card, "ana", right)
    assert "is right!" in done.text and "Review done: 1 card." in done.text

    exported = await restart(later).command("export", user="ana", moderator=False)
    assert exported.attachment is not None
    [(_, fields, tags)] = open_package(exported.attachment.data)
    assert fields.startswith("Which collective sums gradients") and "community" in tags.split()
    assert deck_names(exported.attachment.data) >= {"Community questions"}


async def test_the_terminal_says_when_an_export_cannot_be_saved_and_keeps_going(
    host: Host, tmp_path: Path
) -> None:
    from bot.adapters.console.adapter import CONSOLE_TARGET, LOCAL_USER, ConsoleAdapter
    from bot.chat import Command

    shown = io.StringIO()
    not_a_folder = tmp_path / "a-file"
    not_a_folder.write_text("")  # saving into it fails, even for root
    console = ConsoleAdapter(shown, save_to=not_a_folder)
    host.service.register(console)
    await host.command("start", CONSOLE_TARGET, user=LOCAL_USER, questions=1, seconds=30)
    click = console.click_for("A")
    assert click is not None
    await host.service.handle_click(click)
    await host.service.stop(CONSOLE_TARGET)

    export = Command("export", CONSOLE_TARGET, LOCAL_USER, args={"which": "all"})
    await console.reply_private(export, await host.service.handle_command(export))
    assert f"Could not save {not_a_folder / 'quizmaster-all.apkg'}" in shown.getvalue()
    # The channel still answers: the next command is handled as ever.
    stats = Command("stats", CONSOLE_TARGET, LOCAL_USER)
    await console.reply_private(stats, await host.service.handle_command(stats))
    assert "answered" in shown.getvalue().split("Could not save")[1].lower()
