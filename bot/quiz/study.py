"""The study loop: members' review cards kept from their answers, `/quiz review`
sessions, the reviews-due count for nudges, and the Anki export.

Cards add nothing to the click path: a post's answers are taken into the
cards when it closes (`apply_post`, a separate step after the close), and the
timer loop applies any post a crash left between the two (`apply_pending`).
A review answer only reschedules its card: no points, boards or streaks.
"""

from __future__ import annotations

import asyncio
import logging
from datetime import timedelta

from bot.chat import Attachment, Command, Interaction, OutMessage, Target
from bot.domain import spaced_repetition
from bot.domain.records import CardState, Recall, ReviewSessionInfo
from bot.domain.rules import shuffled_order, zone_or_utc
from bot.quiz import anki, buttons, texts
from bot.quiz.bank import Bank, Question
from bot.quiz.context import Context
from bot.quiz.surface.spec import ButtonRoute, CommandSpec, Kind, Option, Pressed, Variant
from bot.storage.cards import CardStore

log = logging.getLogger(__name__)

# A post closed this long ago with its cards not applied was left by a crash
# (the closer applies them at once); the timer loop then applies it.
APPLY_GRACE = timedelta(seconds=60)
# Due cards read at once when looking for the next one still in a bank.
DUE_PAGE = 25


class Study:
    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx

    @property
    def cards(self) -> CardStore:
        return self.ctx.repository.cards

    # -- answers into cards ------------------------------------------------------------

    async def apply_post(self, post_id: int) -> None:
        """After a close: the post's answers update their members' cards, once.
        A failure is logged and left for `apply_pending`."""
        try:
            await self.cards.apply_post(post_id, self.ctx.clock.now(), spaced_repetition.review)
        except Exception:
            log.exception("could not update review cards from post %s; will retry", post_id)

    async def apply_pending(self) -> None:
        """The timer loop's sweep for closed posts whose cards were not applied."""
        for post_id in await self.cards.pending_posts(self.ctx.clock.now() - APPLY_GRACE):
            await self.apply_post(post_id)

    async def due_count(self, platform: str, user_id: str) -> int:
        return await self.cards.due_count(platform, user_id, self.ctx.clock.now())

    # -- /quiz review --------------------------------------------------------------------

    async def start_review(
        self, target: Target, user_id: str, count_word: str | None
    ) -> OutMessage:
        count = spaced_repetition.review_count(count_word)
        if count is None:
            return texts.study.review_count_problem(
                str(count_word),
                spaced_repetition.MIN_REVIEW_COUNT,
                spaced_repetition.MAX_REVIEW_COUNT,
            )
        # Answers to a question still open (today's daily) count at once here.
        await self.cards.apply_open_answers(target.platform, user_id, spaced_repetition.review)
        now = self.ctx.clock.now()
        found = await self._next_card(target.platform, user_id)
        if found is None:
            return texts.study.nothing_to_review(await self._next_review(target, user_id))
        _, bank, question = found
        order = shuffled_order(len(question.options), self.ctx.rng)
        correct_slot = order.index(question.answer_index)
        session_id = await self.cards.start_session(
            target, user_id, count, question.id, order, correct_slot, now
        )
        view = texts.study.ReviewCardView(
            session_id=session_id,
            step=0,
            bank_title=bank.title,
            question=question,
            option_order=order,
            number=1,
            limit=count,
            due=await self.due_count(target.platform, user_id),
        )
        return texts.study.study_card(view, self.ctx.channels.connections.dialect(target))

    async def answer(self, interaction: Interaction, pressed: Pressed) -> OutMessage:
        """A click on a review card: rate it, then show the next one (or the end)."""
        session_id, step, slot = pressed.numbers
        review = await self.cards.session(session_id)
        if review is None:
            return texts.study.review_ended()
        if (
            review.target.platform != interaction.target.platform
            or review.user_id != interaction.user_id
        ):
            return texts.study.review_not_yours()
        if review.step != step:
            return texts.study.review_already_answered()
        await self.ctx.questions.ensure([review.question_id or ""])
        question = self.ctx.questions.question(review.question_id or "")
        if question is None or review.remaining <= 0:
            return texts.study.review_ended()
        if slot >= len(review.option_order):
            return texts.questions.unknown_question()
        now = self.ctx.clock.now()
        correct = slot == review.correct_slot
        recall = Recall(
            question_id=question.id,
            correct=correct,
            seconds_taken=max(0.0, (now - review.shown_at).total_seconds()),
            time_limit=spaced_repetition.REVIEW_SECONDS,
            at=now,
        )
        if await self.cards.answer_card(review, recall, spaced_repetition.review) is None:
            return texts.study.review_already_answered()
        verdict = texts.study.review_verdict(
            self.ctx.channels.connections.dialect(review.target),
            question,
            review.option_order,
            slot,
            review.correct_slot,
        )
        return await self._next_step(review, interaction.target, verdict)

    async def _next_step(
        self, review: ReviewSessionInfo, target: Target, verdict: str
    ) -> OutMessage:
        platform, user_id = review.target.platform, review.user_id
        step, left = review.step + 1, review.remaining - 1
        report = texts.study.report_card_button(review.id, step)
        found = await self._next_card(platform, user_id) if left > 0 else None
        if found is None:
            await self.cards.show_next(review.id, None, [], 0, self.ctx.clock.now())
            next_review = await self._next_review(target, user_id)
            return texts.study.review_done(verdict, step, next_review, report)
        _, bank, question = found
        order = shuffled_order(len(question.options), self.ctx.rng)
        correct_slot = order.index(question.answer_index)
        await self.cards.show_next(
            review.id, question.id, order, correct_slot, self.ctx.clock.now()
        )
        view = texts.study.ReviewCardView(
            session_id=review.id,
            step=step,
            bank_title=bank.title,
            question=question,
            option_order=order,
            number=step + 1,
            limit=step + left,
            due=await self.due_count(platform, user_id),
        )
        return texts.study.study_card(
            view, self.ctx.channels.connections.dialect(review.target), verdict, report
        )

    async def _next_card(
        self, platform: str, user_id: str
    ) -> tuple[CardState, Bank, Question] | None:
        """The most overdue card whose question is still in a loaded bank (a
        file bank or the member's community bank)."""
        due = await self.cards.due_cards(platform, user_id, self.ctx.clock.now(), DUE_PAGE)
        await self.ctx.questions.ensure(card.question_id for card in due)
        for card in due:
            question = self.ctx.questions.question(card.question_id)
            bank = self.ctx.questions.bank_of(card.question_id)
            if question is not None and bank is not None:
                return card, bank, question
        return None

    async def _next_review(self, target: Target, user_id: str) -> str | None:
        """When the member's next card is due, in the channel's zone."""
        due = await self.cards.next_due(target.platform, user_id)
        if due is None:
            return None
        channel = await self.ctx.channels.channel(target)
        return texts.study.review_time(due.astimezone(zone_or_utc(channel.timezone)))

    # -- /quiz export --------------------------------------------------------------------

    async def export(self, target: Target, user_id: str, which_word: str | None) -> OutMessage:
        which = (which_word or "missed").strip().lower() or "missed"
        if which not in texts.study.EXPORT_CHOICES:
            return texts.study.export_choice_problem(str(which_word))
        count, data = await self.package(target.platform, user_id, every=which == "all")
        if not count:
            return texts.study.nothing_to_export(which)
        return texts.study.export_ready(
            which, count, Attachment(texts.study.export_file_name(which), data)
        )

    async def package(self, platform: str, user_id: str, *, every: bool) -> tuple[int, bytes]:
        """The member's missed (or every answered) question as `.apkg` bytes,
        and how many questions it holds (0: nothing to export)."""
        await self.cards.apply_open_answers(platform, user_id, spaced_repetition.review)
        chosen: list[tuple[Bank, Question]] = []
        cards = await self.cards.cards(platform, user_id, missed_only=not every)
        await self.ctx.questions.ensure(card.question_id for card in cards)
        for card in cards:
            question = self.ctx.questions.question(card.question_id)
            bank = self.ctx.questions.bank_of(card.question_id)
            if question is not None and bank is not None:
                chosen.append((bank, question))
        if not chosen:
            return 0, b""
        stamp = self.ctx.clock.now().timestamp()
        # genanki writes a SQLite file and a zip: off the event loop.
        return len(chosen), await asyncio.to_thread(anki.package, chosen, stamp)


async def _review(study: Study, command: Command) -> OutMessage:
    return await study.start_review(command.target, command.user_id, command.args.get("count"))


async def _export(study: Study, command: Command) -> OutMessage:
    return await study.export(command.target, command.user_id, command.args.get("which"))


COUNT = Option(
    "count",
    Kind.NUMBER,
    minimum=spaced_repetition.MIN_REVIEW_COUNT,
    maximum=spaced_repetition.MAX_REVIEW_COUNT,
)
WHICH = Option(
    "questions", Kind.CHOICE, arg="which", choices=("missed", "all"), about="questions_kind"
)
COMMANDS = (
    CommandSpec("review", Study, _review, (Variant(("review",), (COUNT,)),)),
    CommandSpec("export", Study, _export, (Variant(("export",), (WHICH,)),)),
)
BUTTONS = (ButtonRoute(buttons.CARD, Study, Study.answer),)
