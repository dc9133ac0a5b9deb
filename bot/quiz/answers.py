"""The click path: check a button click against its post, store the answer
(group-committed), reply privately, and close a live question early once
everyone expected has answered. A question's "Hint" button is here too: the
hint changes what the answer earns."""

from __future__ import annotations

from bot.chat import Interaction, OutMessage
from bot.domain.records import NewAnswer, PostInfo
from bot.domain.rules import half_points, points_for
from bot.quiz import buttons, texts
from bot.quiz.bank import Question
from bot.quiz.context import Context
from bot.quiz.posting import Posting
from bot.quiz.surface.spec import ButtonRoute, Pressed
from bot.quiz.teams import Teams
from bot.storage.answer_writer import AnswerWriter


class Answers:
    def __init__(
        self,
        ctx: Context,
        writer: AnswerWriter,
        posting: Posting,
    ) -> None:
        self.ctx = ctx
        self.writer = writer
        self.posting = posting
        self.teams = Teams(ctx)

    @staticmethod
    def _labels(post: PostInfo, question: Question | None) -> list[str]:
        if question is None:
            return [texts.common.letter(slot) for slot in range(len(post.option_order))]
        return texts.common.slot_labels(question, post.option_order)

    async def _question(self, post: PostInfo) -> Question | None:
        await self.ctx.questions.ensure([post.question_id])
        return self.ctx.questions.question(post.question_id)

    async def _open_post(self, interaction: Interaction, post_id: int) -> PostInfo | None:
        post = await self.posting.post(post_id)
        if (
            post is None
            or post.target.platform != interaction.target.platform
            or post.target.channel != interaction.target.channel
        ):
            return None
        return post

    async def answer(self, interaction: Interaction, pressed: Pressed) -> OutMessage:
        post_id, slot = pressed.number("post"), pressed.number("slot")
        post = await self._open_post(interaction, post_id)
        if post is None or slot >= len(post.option_order):
            return texts.questions.unknown_question()
        now = self.ctx.clock.now()
        question = await self._question(post)  # once: the labels and the reply read it
        labels = self._labels(post, question)
        if post.closed_at is not None or now >= post.closes_at:
            return texts.questions.question_closed(labels[post.correct_slot])

        live = post.kind == "live"
        correct = slot == post.correct_slot
        time_left = (post.closes_at - now).total_seconds()
        # Study mode: the same points however fast (no speed bonus). The post
        # carries the mode, so a click reads no channel row.
        speed = live and not post.study
        points = points_for(correct, live=speed, time_left=time_left, time_limit=post.seconds)
        # Only a question with a hint can have had it taken: no read otherwise.
        hinted = bool(question and question.hint) and await self.ctx.repository.answers.hint_taken(
            post.id, interaction.user_id
        )
        if hinted:
            points = half_points(points)
        stored = await self.writer.record(
            NewAnswer(post, interaction.user_id, slot, correct, points, now, hinted)
        )
        if not stored:
            earlier = await self.ctx.repository.answers.answer_slot(post.id, interaction.user_id)
            if earlier is not None:
                return texts.questions.already_answered(labels[earlier])
            return texts.questions.question_closed(labels[post.correct_slot])

        team_line = ""
        if live and post.quiz_id is not None:
            team_line = await self.teams.joined(post, interaction.user_id)
            await self._close_when_everyone_answered(post)
            if not post.study:
                return texts.teams.with_team(
                    texts.questions.locked_in(labels[slot], hinted), team_line
                )
        explanation = question.explanation if question else ""
        streak = due = None
        if post.kind == "daily":
            # The nudge: a daily answer is a good moment to mention due reviews.
            streak, due = await self.ctx.repository.answers.streak_and_due(
                post.channel_id, post.target.platform, interaction.user_id, now
            )
        reply = texts.questions.daily_feedback(
            labels[slot],
            correct,
            labels[post.correct_slot],
            explanation,
            streak,
            due,
            points=points,
            hinted=hinted,
        )
        return texts.teams.with_team(reply, team_line)

    async def hint(self, interaction: Interaction, pressed: Pressed) -> OutMessage:
        """The question's hint, privately; the member's answer then earns half."""
        post = await self._open_post(interaction, pressed.number("post"))
        if post is None:
            return texts.questions.unknown_question()
        question = await self._question(post)
        if question is None or not question.hint:
            return texts.questions.no_hint()
        labels = self._labels(post, question)
        if post.closed_at is not None or self.ctx.clock.now() >= post.closes_at:
            return texts.questions.question_closed(labels[post.correct_slot])
        answers = self.ctx.repository.answers
        if await answers.answer_slot(post.id, interaction.user_id) is not None:
            return texts.questions.hint_after_answer()
        await answers.take_hint(post.id, interaction.user_id, self.ctx.clock.now())
        dialect = self.ctx.channels.connections.dialect(post.target)
        return texts.questions.hint(question.hint, dialect)

    async def _close_when_everyone_answered(self, post: PostInfo) -> None:
        if post.expected_players is None:
            return
        if await self.ctx.repository.answers.answer_count(post.id) >= post.expected_players:
            await self.ctx.repository.posts.close_early(post.id, self.ctx.clock.now())
            self.ctx.wake()


BUTTONS = (
    ButtonRoute(buttons.ANSWER, Answers, Answers.answer),
    ButtonRoute(buttons.HINT, Answers, Answers.hint),
)
