"""Member submissions and moderator review through the quiz service, on SQLite
and PostgreSQL: the queue, the pending limit, accept/reject/skip, the author
told, the community bank drawn like any other and only in its own community,
and removal. The platforms' forms are tested in test_discord.py and test_slack.py."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml

from bot.chat import Command, FormSubmission, Interaction, OutMessage, Target
from bot.quiz import buttons, texts
from bot.quiz.bank import load_banks
from bot.quiz.submissions import MAX_PENDING, parse_submission
from bot.quiz.surface.grammar import ParsedCommand, UsageError, parse
from bot.storage.db import open_database
from bot.storage.repository import Repository
from tests.conftest import CHANNEL, OTHER_CHANNEL, Host, restart, run_until, shown_options
from tests.test_cli import run_cli

ELSEWHERE = Target("test", "guild-2", "chan-9")


def values(
    prompt: str = "Which collective sums gradients across ranks?", **extra: str
) -> dict[str, str]:
    return {
        "prompt": prompt,
        "options": "all_reduce\nbroadcast\nscatter",
        "answer": "a",
        "explanation": "all_reduce leaves the sum on every rank.",
        "tags": "Collectives, ddp",
        **extra,
    }


async def submit(host: Host, user: str = "author", target: Target = CHANNEL, **given: Any) -> Any:
    form = FormSubmission(
        target, user, buttons.SUBMIT_FORM, values(**given), display_name=user, inline_errors=True
    )
    return await host.service.handle_form(form)


def button(message: OutMessage, label: str) -> str:
    [found] = [b.custom_id for b in message.buttons if b.label == label]
    return found


async def click(
    host: Host, custom_id: str, *, moderator: bool = True, user: str = "mod"
) -> OutMessage:
    async def check(_role: str | None) -> bool:
        return moderator

    return await host.service.handle_click(
        Interaction(CHANNEL, user, custom_id, moderator_check=check)
    )


async def test_a_member_opens_the_form_and_a_valid_question_is_queued(host: Host) -> None:
    opened = await host.command("submit", user="author", moderator=False)
    assert opened.form is not None and opened.form.form_id == buttons.SUBMIT_FORM
    assert [field.key for field in opened.form.fields] == [
        "prompt",
        "options",
        "answer",
        "explanation",
        "tags",
    ]
    reply = await submit(host)
    assert not reply.errors
    assert reply.message is not None and "waiting for a moderator" in reply.message.text
    card = await host.command("submissions")
    assert "Which collective sums gradients" in card.text
    assert "A. all_reduce ✅" in card.text and "<@author>" in card.text
    assert [b.label for b in card.buttons] == ["Accept", "Reject", "Skip"]


async def test_a_bad_question_is_refused_with_the_problem_per_field(host: Host) -> None:
    reply = await submit(host, options="only one", answer="Q", tags="bad_tag!")
    assert set(reply.errors) == {"options", "answer", "tags"}
    assert "at least two" in reply.errors["options"]
    assert "A to E" in reply.errors["answer"]
    # A letter past the options is the bank schema's own check.
    late = await submit(host, answer="E")
    assert "names no option" in late.errors["answer"]
    duplicate = await submit(host, options="same\nsame")
    assert "unique" in duplicate.errors["options"]
    assert "No submissions" in (await host.command("submissions")).text


async def test_a_closed_form_keeps_what_was_typed_for_the_author_only(host: Host) -> None:
    form = FormSubmission(CHANNEL, "author", buttons.SUBMIT_FORM, values(answer="Z"))
    reply = await host.service.handle_form(form)
    assert reply.message is not None and "Edit my question" in reply.message.text
    edit = button(reply.message, "Edit my question")
    reopened = await host.service.handle_click(Interaction(CHANNEL, "author", edit))
    assert reopened.form is not None
    typed = {field.key: field.value for field in reopened.form.fields}
    assert typed["answer"] == "Z" and typed["prompt"].startswith("Which collective")
    stranger = await host.service.handle_click(Interaction(CHANNEL, "someone", edit))
    assert stranger.form is not None and all(not f.value for f in stranger.form.fields)


async def test_at_most_ten_pending_per_member(host: Host) -> None:
    for number in range(MAX_PENDING):
        assert not (await submit(host, prompt=f"Question number {number}?")).errors
    refused = await submit(host, prompt="One too many?")
    assert refused.message is not None and "10 questions waiting" in refused.message.text
    opened = await host.command("submit", user="author", moderator=False)
    assert opened.form is None and "10 questions waiting" in opened.text
    # Another member, and the same member in another community, still may.
    assert not (await submit(host, user="other")).errors
    assert not (await submit(host, target=ELSEWHERE)).errors


async def test_simultaneous_submits_by_one_member_stop_at_ten_pending(host: Host) -> None:
    """Twenty submits at once (on PostgreSQL, on several connections): each
    counts the pending ones and adds its own in one transaction, so no two see
    the same room for one more."""
    store = host.service.repository.submissions
    question = {"prompt": "Which collective?", "options": ["a", "b"], "answer": 0}
    results = await asyncio.gather(
        *(
            store.submit(
                platform="test",
                community="guild-1",
                channel="chan-1",
                author_id="eager",
                author_name=None,
                question={**question, "prompt": f"Question {number}?"},
                now=host.clock.now(),
                limit=MAX_PENDING,
            )
            for number in range(2 * MAX_PENDING)
        )
    )
    assert sum(result is not None for result in results) == MAX_PENDING
    assert await store.pending_count("test", "guild-1", "eager") == MAX_PENDING


async def test_accepted_questions_are_drawn_in_their_community_only(host: Host) -> None:
    await submit(host)
    card = await host.command("submissions")
    after = await click(host, button(card, "Accept"))
    assert "community-" in after.text and "No submissions" in after.text
    [(where, author, told)] = host.adapter.direct
    assert author == "author" and where == CHANNEL and "was accepted" in told.text

    await host.start(CHANNEL, questions=1, bank="community")
    assert "Which collective sums gradients" in host.current(CHANNEL).message.text
    assert "Community questions" in host.current(CHANNEL).message.text
    # Another channel of the community draws it too, by tag, ...
    await host.start(OTHER_CHANNEL, questions=1, bank="community", tag="collectives")
    # ... but another community has no such question.
    elsewhere = await host.command("start", ELSEWHERE, bank="community")
    assert elsewhere.text == texts.live.no_questions("community", None).text
    everything = await host.service.questions.pool(ELSEWHERE, None, None)
    assert not [q for q in everything if q.startswith("community-")]


async def test_an_answer_to_a_community_question_counts(host: Host) -> None:
    await submit(host)
    await click(host, button(await host.command("submissions"), "Accept"))
    await host.start(CHANNEL, questions=1, bank="community")
    sent = host.current(CHANNEL)
    letter = next(k for k, v in host_options(sent.message).items() if v == "all_reduce")
    assert (await host.click("player", letter)).text.startswith("Locked in")
    await host.close_current()
    assert (await host.stats("player")).correct == 1


def host_options(message: OutMessage) -> dict[str, str]:
    return shown_options(message)


async def test_reject_with_a_reason_and_skip(host: Host) -> None:
    await submit(host, user="first", prompt="First question?")
    await submit(host, user="second", prompt="Second question?")
    card = await host.command("submissions")
    assert "First question?" in card.text and "(2 pending)" in card.text
    skipped = await click(host, button(card, "Skip"))
    assert "Second question?" in skipped.text
    again = await click(host, button(skipped, "Skip"))
    assert "First question?" in again.text  # round to the oldest

    opened = await click(host, button(card, "Reject"))
    assert opened.form is not None and opened.form.form_id.startswith(buttons.REJECT_FORM)
    form = FormSubmission(
        CHANNEL,
        "mod",
        opened.form.form_id,
        {"reason": "Too close to   pdt-01."},
        moderator_check=_yes,
    )
    reply = await host.service.handle_form(form)
    assert reply.message is not None and "Rejected submission" in reply.message.text
    assert "Second question?" in reply.message.text
    [(_, author, told)] = host.adapter.direct
    assert author == "first" and "not accepted" in told.text
    assert "Too close to pdt-01." in told.text
    # A second review of the same submission changes nothing.
    late = await click(host, button(card, "Accept"))
    assert "already reviewed" in late.text
    assert len(host.adapter.direct) == 1


async def _yes(_role: str | None) -> bool:
    return True


async def test_non_moderators_cannot_review_or_remove(host: Host) -> None:
    await submit(host)
    refused = await host.command("submissions", user="member", moderator=False)
    assert refused.text.startswith(texts.common.not_moderator("review submissions").text[:20])
    card = await host.command("submissions")
    for label in ("Accept", "Reject", "Skip"):
        reply = await click(host, button(card, label), moderator=False, user="member")
        assert "moderator" in reply.text and reply.form is None
    form = FormSubmission(CHANNEL, "member", f"{buttons.REJECT_FORM}:1", {"reason": "no"})
    reply = await host.service.handle_form(form)
    assert reply.message is not None and "moderator" in reply.message.text
    removed = await host.command(
        "remove-question", user="member", moderator=False, id="community-1"
    )
    assert "moderator" in removed.text
    assert "(1 pending)" in (await host.command("submissions")).text


async def test_a_moderator_removes_a_community_question(host: Host) -> None:
    await submit(host)
    accepted = await click(host, button(await host.command("submissions"), "Accept"))
    question_id = next(word for word in accepted.text.split() if word.startswith("community-"))
    # Not from another community, and not a bank file's question.
    other = await host.service.handle_command(_command("remove-question", ELSEWHERE, question_id))
    assert "not a question of this community" in other.text
    assert "not a question" in (await host.command("remove-question", id="pdt-01")).text
    assert "Removed" in (await host.command("remove-question", id=question_id)).text
    reply = await host.command("start", bank="community")
    assert reply.text == texts.live.no_questions("community", None).text


def _command(name: str, target: Target, question_id: str) -> Any:
    return Command(name, target, "mod", is_moderator=True, args={"id": question_id})


def test_the_form_is_checked_by_the_bank_schema() -> None:
    question, errors = parse_submission(values(answer=" b) "))
    assert not errors and question is not None
    assert question["answer"] == "B" and question["tags"] == ["collectives", "ddp"]
    assert question["options"] == ["all_reduce", "broadcast", "scatter"]
    _, errors = parse_submission(values(prompt=" ", explanation="x" * 999))
    assert set(errors) == {"prompt"} and "empty" in errors["prompt"]
    _, errors = parse_submission(values(explanation="x" * 1001))
    assert set(errors) == {"explanation"}
    _, errors = parse_submission(values(options="x\n" * 2000))
    assert "At most 1600 characters" in errors["options"]


def test_bank_files_cannot_take_the_community_bank_or_its_ids(tmp_path: Path) -> None:
    def bank(bank_id: str, question_id: str) -> dict[str, Any]:
        question = {
            "id": question_id,
            "prompt": "Which?",
            "options": ["One", "Two"],
            "answer": "A",
            "explanation": "One.",
        }
        return {"id": bank_id, "title": "T", "questions": [question]}

    (tmp_path / "a.yaml").write_text(yaml.safe_dump(bank("community", "fine-1")))
    (tmp_path / "b.yaml").write_text(yaml.safe_dump(bank("other", "community-1")))
    catalog, problems = load_banks([tmp_path], log_problems=False)
    assert catalog.banks == {}
    assert "reserved for the community's own bank" in str(problems[0])
    assert "reserved for community questions" in str(problems[1])


async def accept_one(host: Host, target: Target = CHANNEL, **given: Any) -> str:
    """Submit and accept a question; its question id."""
    await submit(host, target=target, **given)
    card = await host.service.handle_command(
        Command("submissions", target, "mod", is_moderator=True)
    )
    custom_id = button(card, "Accept")
    accepted = await host.service.handle_click(
        Interaction(target, "mod", custom_id, moderator_check=_yes)
    )
    return next(word.rstrip(":") for word in accepted.text.split() if word.startswith("community-"))


async def test_a_daily_schedule_draws_the_community_bank(host: Host) -> None:
    await accept_one(host)
    saved = await host.command("schedule", action="daily", time="10:00", bank="community")
    assert "daily 10:00" in saved.text, saved.text
    posted = await run_until(host, host.clock.now() + timedelta(hours=2))
    [(_, sent)] = posted
    assert "Which collective sums gradients" in sent.message.text
    # Another community cannot schedule it: it has no community questions.
    elsewhere = await host.command(
        "schedule", ELSEWHERE, action="daily", time="10:00", bank="community"
    )
    assert elsewhere.text == texts.live.no_questions("community", None).text


async def test_a_community_question_is_revealed_after_a_restart(host: Host) -> None:
    await accept_one(host)
    await host.start(CHANNEL, questions=1, bank="community")
    # A new process knows nothing of the community bank until it reads a post of it.
    deadline = host.current(CHANNEL).message.deadline
    assert deadline is not None
    after = restart(host)
    after.clock.set(deadline)
    await after.service.tick()
    [(_, revealed)] = after.adapter.edits
    assert "all_reduce leaves the sum on every rank." in revealed.text


async def test_the_command_line_lists_and_exports_community_banks_with_authors(
    tmp_path: Path,
) -> None:
    assert run_cli("db", "upgrade", cwd=tmp_path).returncode == 0
    database = open_database(f"sqlite+aiosqlite:///{tmp_path / 'data' / 'quizmaster.db'}")
    try:
        store = Repository(database).submissions
        question, _ = parse_submission(values())
        assert question is not None
        made = await store.submit(
            platform="slack",
            community="T0TEAM",
            channel="C1",
            author_id="U0AUTHOR",
            author_name="ada",
            question=question,
            now=datetime.now(UTC),
            limit=MAX_PENDING,
        )
        assert made is not None
        await store.review(
            "slack",
            "T0TEAM",
            made.id,
            accept=True,
            reviewer="U0MOD",
            reason=None,
            now=datetime.now(UTC),
        )
    finally:
        await database.dispose()
    listing = run_cli("questions", "list", cwd=tmp_path)
    assert "community\t1 questions\tCommunity questions (slack T0TEAM)" in listing.stdout
    exported = json.loads(run_cli("questions", "export", "--format", "json", cwd=tmp_path).stdout)
    [bank] = [b for b in exported["banks"] if b["id"] == "community"]
    assert (bank["platform"], bank["community"]) == ("slack", "T0TEAM")
    [entry] = bank["questions"]
    assert entry["id"] == made.question_id and entry["author"] == "U0AUTHOR"
    assert entry["options"][entry["answer"]] == "all_reduce"


def test_the_commands_typed_as_text() -> None:
    assert parse("submit") == ParsedCommand("submit")
    assert parse("/quiz submissions") == ParsedCommand("submissions")
    assert parse("remove-question community-3") == ParsedCommand(
        "remove-question", {"id": "community-3"}
    )
    for wrong in ("remove-question", "remove-question a b", "submit now"):
        with pytest.raises(UsageError):
            parse(wrong)


async def test_a_draft_keeps_only_the_forms_fields_cut_to_their_boxes(host: Host) -> None:
    typed = {**values(), "prompt": "x" * 5000, "extra": "y" * 5000}
    reply = await host.service.handle_form(
        FormSubmission(CHANNEL, "author", buttons.SUBMIT_FORM, typed)
    )
    assert reply.message is not None and "At most 1000 characters" in reply.message.text
    reopened = await host.service.handle_click(
        Interaction(CHANNEL, "author", button(reply.message, "Edit my question"))
    )
    assert reopened.form is not None
    shown = {field.key: field.value for field in reopened.form.fields}
    assert set(shown) == {"prompt", "options", "answer", "explanation", "tags"}
    assert shown["prompt"] == "x" * 1000


async def test_the_list_of_community_questions_kept_per_community_is_bounded(
    host: Host, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A bot in thousands of servers keeps the lists of the most recently drawn
    communities only; one left out is read again when it next draws."""
    monkeypatch.setattr("bot.quiz.questions.POOL_CACHE_SIZE", 2)
    questions = host.service.questions
    store = questions.store
    reads: list[str] = []
    original = store.community_bank

    async def counted(platform: str, community: str) -> Any:
        reads.append(community)
        return await original(platform, community)

    monkeypatch.setattr(store, "community_bank", counted)
    for community in ("g-1", "g-2", "g-3", "g-3", "g-1"):
        await questions.pool(Target("test", community, "c"), None, None)
    assert reads == ["g-1", "g-2", "g-3", "g-1"]
    assert len(questions._pools) == 2


async def test_forget_me_removes_a_members_submissions_and_their_name(host: Host) -> None:
    await submit(host, prompt="Which collective gathers a tensor from every rank?")
    accept = button(await host.command("submissions"), "Accept")
    assert "Accepted" in (await click(host, accept)).text
    await submit(host, prompt="Which collective sends one rank's tensor to all?")

    reply = await host.command("forget-me", user="author", moderator=False)
    assert "your submissions" in reply.text
    assert "No submissions" in (await host.command("submissions")).text
    [kept] = await host.service.repository.submissions.community_bank("test", CHANNEL.community)
    assert kept.question["prompt"].startswith("Which collective gathers")
    assert kept.author_id == "" and kept.author_name is None
