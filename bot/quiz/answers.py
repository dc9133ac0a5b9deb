"""The click path: check a button click against its post, store the answer
(group-committed), reply privately, and close a live question early once
everyone expected has answered."""

from __future__ import annotations

from bot.chat import Interaction, OutMessage
from bot.domain.records import NewAnswer, PostInfo
from bot.domain.rules import points_for
from bot.quiz import buttons, texts
from bot.quiz.context import Context
from bot.quiz.posting import Posting
from bot.quiz.scores import Scores
from bot.quiz.study import Study
from bot.quiz.surface.spec import ButtonRoute, Pressed
from bot.storage.answer_writer import AnswerWriter


class Answers:
    def __init__(
        self,
        ctx: Context,
        writer: AnswerWriter,
        posting: Posting,
        scores: Scores,
        study: Study,
    ) -> None:
        self.ctx = ctx
        self.study = study
        self.writer = writer
        self.posting = posting
        self.scores = scores

    async def answer(self, interaction: Interaction, pressed: Pressed) -> OutMessage:
        post_id, slot = pressed.number("post"), pressed.number("slot")
        post = await self.posting.post(post_id)
        if (
            post is None
            or post.target.platform != interaction.target.platform
            or post.target.channel != interaction.target.channel
            or slot >= len(post.option_order)
        ):
            return texts.questions.unknown_question()
        now = self.ctx.clock.now()
        if post.closed_at is not None or now >= post.closes_at:
            return texts.questions.question_closed(post.correct_slot)

        live = post.kind == "live"
        correct = slot == post.correct_slot
        time_left = (post.closes_at - now).total_seconds()
        points = points_for(correct, live=live, time_left=time_left, time_limit=post.seconds)
        stored = await self.writer.record(
            NewAnswer(post, interaction.user_id, slot, correct, points, now)
        )
        if not stored:
            earlier = await self.ctx.repository.answers.answer_slot(post.id, interaction.user_id)
            if earlier is not None:
                return texts.questions.already_answered(earlier)
            return texts.questions.question_closed(post.correct_slot)

        if live and post.quiz_id is not None:
            await self._close_when_everyone_answered(post)
            return texts.questions.locked_in(slot)
        await self.ctx.questions.ensure([post.question_id])
        question = self.ctx.questions.question(post.question_id)
        explanation = question.explanation if question else ""
        streak = due = None
        if post.kind == "daily":
            # The nudge: a daily answer is a good moment to mention due reviews.
            streak = await self.scores.current_streak(post.channel_id, interaction.user_id)
            due = await self.study.due_count(post.target.platform, interaction.user_id)
        return texts.questions.daily_feedback(
            slot, correct, post.correct_slot, explanation, streak, due
        )

    async def _close_when_everyone_answered(self, post: PostInfo) -> None:
        if post.expected_players is None:
            return
        if await self.ctx.repository.answers.answer_count(post.id) >= post.expected_players:
            await self.ctx.repository.posts.close_early(post.id, self.ctx.clock.now())
            self.ctx.wake()


BUTTONS = (ButtonRoute(buttons.ANSWER, Answers, Answers.answer),)
