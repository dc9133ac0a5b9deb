"""Member submissions and their review: `/quiz submit` (a form), the queue
moderators work through with `/quiz submissions`, and `/quiz remove-question`.

A submission is checked by the bank schema (`bank.Question`), so a question
that reaches the queue could have come from a bank file. An accepted one joins
its community's bank (`questions.COMMUNITY_BANK`) and is drawn there like any
other question. Who may review is decided by the command table (commands.py);
this module trusts its callers on that."""

from __future__ import annotations

import logging
import re
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from pydantic import ValidationError

from bot.chat import Command, FormReply, FormSubmission, Interaction, OutMessage, Target
from bot.clock import Clock
from bot.i18n import DEFAULT, speaking
from bot.quiz import buttons, texts
from bot.quiz.bank import Question
from bot.quiz.connections import Connections
from bot.quiz.delivery import within_deadline
from bot.quiz.questions import Questions
from bot.quiz.surface.spec import ButtonRoute, CommandSpec, FormRoute, Option, Pressed, Variant
from bot.storage.submissions import SubmissionInfo, SubmissionStore, submission_id

log = logging.getLogger(__name__)

MAX_PENDING = 10  # per member and community
MAX_REASON = 500
_TAG_SEPARATORS = re.compile(r"[\s,;]+")
# A placeholder id for validating: the real one (`community-<n>`) comes with the row.
_CHECK_ID = "community-new"


def parse_submission(values: Mapping[str, str]) -> tuple[dict[str, Any] | None, dict[str, str]]:
    """The form's values as a bank question (its fields, without an id), or the
    problems by form field. Options are one per line; the answer is a letter;
    tags are separated by commas, semicolons or spaces."""
    errors: dict[str, str] = {}
    for spec in texts.submissions.submission_fields():
        if len(values.get(spec.key, "").strip()) > spec.max_length:
            errors[spec.key] = texts.submissions.too_long(spec.max_length)
    if errors:
        return None, errors
    options = [line.strip() for line in values.get("options", "").splitlines() if line.strip()]
    answer = values.get("answer", "").strip().rstrip(".)").upper()
    tags = [tag for tag in _TAG_SEPARATORS.split(values.get("tags", "").lower()) if tag]
    raw = {
        "id": _CHECK_ID,
        "prompt": values.get("prompt", ""),
        "options": options,
        "answer": answer,
        "explanation": values.get("explanation", ""),
        "tags": tags,
    }
    try:
        question = Question.model_validate(raw)
    except ValidationError as error:
        return None, _field_errors(error)
    return question.model_dump(mode="json", exclude={"id"}), {}


def _field_errors(error: ValidationError) -> dict[str, str]:
    """Pydantic's problems, each under the form field it is about."""
    found: dict[str, str] = {}
    for item in error.errors():
        loc = item["loc"]
        message = item["msg"].removeprefix("Value error, ")
        if loc and loc[0] in ("prompt", "options", "answer", "explanation", "tags"):
            key = str(loc[0])
            if len(loc) > 1 and isinstance(loc[1], int):
                message = f"{'option' if key == 'options' else 'tag'} {loc[1] + 1}: {message}"
        elif message.startswith("option"):
            key = "options"
        else:
            key = "answer"
        found.setdefault(key, texts.submissions.field_problem(key, message))
    return found


class Submissions:
    def __init__(
        self,
        store: SubmissionStore,
        questions: Questions,
        connections: Connections,
        clock: Clock,
        language: Callable[[Target], Awaitable[str]] | None = None,
    ) -> None:
        self.store = store
        self.questions = questions
        self.connections = connections
        self.clock = clock
        # The community's language: an author not in the exchange hears it in that.
        self.language = language

    # -- members ------------------------------------------------------------------

    async def open_form(self, command: Command) -> OutMessage:
        """`/quiz submit`: the form, unless the member's queue is full already."""
        target = command.target
        pending = await self.store.pending_count(target.platform, target.community, command.user_id)
        if pending >= MAX_PENDING:
            return texts.submissions.too_many_pending(MAX_PENDING)
        return texts.submissions.submission_form()

    async def reopen(self, click: Interaction, draft: int) -> OutMessage:
        """The form again, filled with what the member typed last time."""
        target = click.target
        values = await self.store.draft(draft, target.platform, target.community, click.user_id)
        return texts.submissions.submission_form(values)

    async def submitted(self, form: FormSubmission) -> FormReply:
        target = form.target
        question, errors = parse_submission(form.values)
        if question is None:
            draft = None
            if not form.inline_errors:  # the form has closed: keep what was typed
                draft = await self.store.save_draft(
                    platform=target.platform,
                    community=target.community,
                    channel=target.channel,
                    author_id=form.user_id,
                    # Only the form's own fields, each cut to what its box holds.
                    values={
                        spec.key: form.values.get(spec.key, "")[: spec.max_length]
                        for spec in texts.submissions.submission_fields()
                    },
                    now=self.clock.now(),
                )
            return FormReply(errors, texts.submissions.submission_problems(errors, draft))
        saved = await self.store.submit(
            platform=target.platform,
            community=target.community,
            channel=target.channel,
            author_id=form.user_id,
            author_name=(form.display_name or "")[:100] or None,
            question=question,
            now=self.clock.now(),
            limit=MAX_PENDING,
        )
        if saved is None:
            full = texts.submissions.too_many_pending(MAX_PENDING)
            return FormReply({"prompt": full.text}, full)
        return FormReply({}, texts.submissions.submission_queued(saved.id))

    # -- moderators ---------------------------------------------------------------

    async def queue(
        self, target: Target, *, after: int | None = None, note: str = ""
    ) -> OutMessage:
        """The oldest pending submission (after a skipped one), ready to review."""
        found = await self.store.next_pending(target.platform, target.community, after)
        if found is None:
            return texts.submissions.queue_empty(note)
        total = await self.store.pending_total(target.platform, target.community)
        dialect = self.connections.dialect(target)
        return texts.submissions.submission_card(found, total, dialect, note)

    async def accept(self, click: Interaction, number: int) -> OutMessage:
        target = click.target
        done = await self.store.review(
            target.platform,
            target.community,
            number,
            accept=True,
            reviewer=click.user_id,
            reason=None,
            now=self.clock.now(),
        )
        if done is None:
            return await self.queue(target, note=texts.submissions.already_reviewed())
        self.questions.changed(target)
        with speaking(await self._language(target)):
            accepted = texts.submissions.author_accepted(done, self.connections.dialect(target))
        await self._tell_author(done, accepted)
        return await self.queue(target, note=texts.submissions.accepted_note(done))

    def reject_form(self, number: int) -> OutMessage:
        return texts.submissions.reject_form(number)

    async def reject(self, form: FormSubmission, number: int) -> FormReply:
        target = form.target
        reason = " ".join(form.values.get("reason", "").split())[:MAX_REASON] or None
        done = await self.store.review(
            target.platform,
            target.community,
            number,
            accept=False,
            reviewer=form.user_id,
            reason=reason,
            now=self.clock.now(),
        )
        if done is None:
            return FormReply(
                {}, await self.queue(target, note=texts.submissions.already_reviewed())
            )
        with speaking(await self._language(target)):
            rejected = texts.submissions.author_rejected(done, self.connections.dialect(target))
        await self._tell_author(done, rejected)
        return FormReply({}, await self.queue(target, note=texts.submissions.rejected_note(done)))

    async def skip(self, click: Interaction, number: int) -> OutMessage:
        return await self.queue(click.target, after=number)

    async def remove(self, target: Target, user_id: str, question_id: str | None) -> OutMessage:
        """`/quiz remove-question ID`: out of the community bank (drawn no more)."""
        wanted = (question_id or "").strip()
        number = submission_id(wanted) if not wanted.isdigit() else int(wanted[:18])
        removed = None
        if number is not None:
            removed = await self.store.remove(
                target.platform, target.community, number, by=user_id, now=self.clock.now()
            )
        if removed is None:
            return texts.submissions.not_a_community_question(wanted)
        self.questions.changed(target)
        return texts.submissions.question_removed(removed.question_id)

    async def _language(self, target: Target) -> str:
        return DEFAULT if self.language is None else await self.language(target)

    async def _tell_author(self, submission: SubmissionInfo, message: OutMessage) -> None:
        """A private word to the author; a closed DM is logged, not retried (the
        review itself stands)."""
        adapter = self.connections.get(submission.platform)
        if adapter is None:
            return
        where = Target(submission.platform, submission.community, submission.channel)
        try:
            await within_deadline(adapter.send_direct(where, submission.author_id, message))
        except Exception as error:
            log.info("could not tell %s about their submission: %s", submission.author_id, error)


async def _submit(submissions: Submissions, command: Command) -> OutMessage:
    return await submissions.open_form(command)


async def _queue(submissions: Submissions, command: Command) -> OutMessage:
    return await submissions.queue(command.target)


async def _remove(submissions: Submissions, command: Command) -> OutMessage:
    return await submissions.remove(command.target, command.user_id, command.args.get("id"))


async def _clicked(submissions: Submissions, click: Interaction, pressed: Pressed) -> OutMessage:
    number = pressed.number("submission")
    if pressed.verb == "edit":
        return await submissions.reopen(click, number)
    if pressed.verb == "accept":
        return await submissions.accept(click, number)
    if pressed.verb == "reject":
        return submissions.reject_form(number)
    return await submissions.skip(click, number)


async def _submitted(submissions: Submissions, form: FormSubmission, _: Pressed) -> FormReply:
    return await submissions.submitted(form)


async def _rejected(submissions: Submissions, form: FormSubmission, pressed: Pressed) -> FormReply:
    return await submissions.reject(form, pressed.number("submission"))


def _authors_edit(pressed: Pressed) -> bool:
    return pressed.verb == "edit"  # the author's own draft: anyone, for their own


COMMANDS = (
    CommandSpec("submit", Submissions, _submit, (Variant(("submit",)),)),
    # The community's bank: its moderators, not one channel's (community_wide).
    CommandSpec(
        "submissions",
        Submissions,
        _queue,
        (Variant(("submissions",)),),
        moderator=True,
        community_wide=True,
    ),
    CommandSpec(
        "remove-question",
        Submissions,
        _remove,
        (Variant(("remove-question",), (Option("id", required=True),)),),
        moderator=True,
        community_wide=True,
    ),
)
# Review buttons and the reject form need the moderators of `/quiz submissions`.
BUTTONS = (ButtonRoute(buttons.SUBMISSION, Submissions, _clicked, "submissions", _authors_edit),)
FORMS = (
    FormRoute(buttons.SUBMIT, Submissions, _submitted),
    FormRoute(buttons.REJECT, Submissions, _rejected, "submissions"),
)
