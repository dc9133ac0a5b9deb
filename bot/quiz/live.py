"""Live quizzes: `/quiz start|stop|skip`, posting each next question when the
previous one closes, and the scoreboard at the end."""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import timedelta

from bot.chat import Command, OutMessage, Target
from bot.domain.records import PostInfo, QuizInfo
from bot.domain.rules import (
    DEFAULT_QUESTIONS,
    DEFAULT_SECONDS,
    LEADERBOARD_SIZE,
    MAX_QUESTIONS,
    MAX_SECONDS,
    MAX_TEAMS,
    MIN_QUESTIONS,
    MIN_SECONDS,
    MIN_TEAMS,
    as_int,
    in_range,
    reading_seconds,
    shuffled_order,
)
from bot.quiz import texts
from bot.quiz.context import Context
from bot.quiz.delivery import LIVE_PUBLISH_WINDOW, PUBLISH_LEASE
from bot.quiz.posting import Delivery, Posting
from bot.quiz.surface.options import BANK, TAG
from bot.quiz.surface.spec import CommandSpec, Kind, Option, Variant

log = logging.getLogger(__name__)


class LiveQuizzes:
    def __init__(
        self,
        ctx: Context,
        posting: Posting,
    ) -> None:
        self.ctx = ctx
        self.posting = posting
        self._quiz_end_listeners: list[Callable[[Target], None]] = []

    def on_quiz_end(self, listener: Callable[[Target], None]) -> None:
        """Call `listener(channel)` whenever a live quiz ends, however it ended."""
        self._quiz_end_listeners.append(listener)

    def _quiz_ended(self, target: Target) -> None:
        for listener in self._quiz_end_listeners:
            listener(target)

    # -- commands -----------------------------------------------------------------

    async def start(
        self,
        target: Target,
        user_id: str,
        *,
        questions: int | str | None = None,
        seconds: int | str | None = None,
        bank: str | None = None,
        tag: str | None = None,
        expected_players: int | None = None,
        teams: int | str | None = None,
    ) -> OutMessage:
        count = as_int(questions, DEFAULT_QUESTIONS)
        limit = as_int(seconds, DEFAULT_SECONDS)
        team_count = as_int(teams, 0)
        if count is None:
            return texts.common.not_whole_number("questions", questions)
        if limit is None:
            return texts.common.not_whole_number("seconds", seconds)
        if not in_range(count, MIN_QUESTIONS, MAX_QUESTIONS):
            return texts.common.out_of_range("questions", count, MIN_QUESTIONS, MAX_QUESTIONS)
        if not in_range(limit, MIN_SECONDS, MAX_SECONDS):
            return texts.common.out_of_range("seconds", limit, MIN_SECONDS, MAX_SECONDS)
        if team_count is None or (team_count and not in_range(team_count, MIN_TEAMS, MAX_TEAMS)):
            return texts.teams.teams_out_of_range(teams, MIN_TEAMS, MAX_TEAMS)
        if not self.ctx.questions.known_bank(bank):
            return texts.live.unknown_bank(bank or "", self.ctx.questions.bank_names())
        language = await self.ctx.channels.language(target)
        pool = await self.ctx.questions.pool(target, bank, tag, language)
        if not pool:
            return texts.live.no_questions(bank, tag)

        quizzes = self.ctx.repository.quizzes
        channel = await self.ctx.channels.channel(target)
        if await quizzes.running_quiz(channel.id):
            return texts.live.quiz_already_running()
        drawn = await quizzes.draw(channel.id, pool, min(count, len(pool)), self.ctx.rng)
        quiz = await quizzes.create_quiz(
            channel.id,
            drawn,
            seconds=limit,
            bank=bank,
            tag=tag,
            started_by=user_id,
            expected_players=expected_players,
            now=self.ctx.clock.now(),
            teams=team_count or None,
        )
        if quiz is None:
            return texts.live.quiz_already_running()
        plan = texts.live.QuizPlan(
            quiz.total,
            limit,
            self._reading_times(channel.reading_time, drawn),
            team_count or None,
            channel.study,
        )
        outcome = await self._post_next(quiz, announce_failure=False)
        if outcome is not None and outcome.refused:
            return texts.common.cannot_post(outcome.problem or "refused")
        if channel.delivery_problem is not None:
            await self.ctx.channels.update_channel(channel, delivery_problem=None)
        if outcome is not None and outcome.retrying:
            return texts.live.quiz_start_delayed(plan, outcome.problem or "no answer")
        return texts.live.quiz_started(plan)

    def _reading_times(self, on: bool, question_ids: list[str]) -> list[int] | None:
        """Each drawn question's seconds to read, when the channel has reading time on."""
        if not on:
            return None
        return [self._reading(question_id) for question_id in question_ids]

    def _reading(self, question_id: str) -> int:
        question = self.ctx.questions.question(question_id)
        return 0 if question is None else reading_seconds(question.prompt, *question.options)

    async def stop(self, target: Target) -> OutMessage:
        channel = await self.ctx.channels.channel(target)
        quizzes = self.ctx.repository.quizzes
        quiz = await quizzes.running_quiz(channel.id)
        if quiz is None or not await quizzes.end_quiz(quiz.id, "stopped", self.ctx.clock.now()):
            return texts.live.no_quiz_running()
        for post_id in await self.ctx.repository.posts.open_posts(quiz.id):
            await self.close_post(post_id)
        await self._post_scoreboard(quiz, channel.target, stopped=True)
        return texts.live.quiz_stopped()

    async def skip(self, target: Target) -> OutMessage:
        channel = await self.ctx.channels.channel(target)
        post_id = await self.ctx.repository.posts.open_post_in_channel(channel.id)
        if post_id is None:
            return texts.live.no_quiz_running()
        await self.close_post(post_id)
        return texts.live.question_skipped()

    # -- moving on ----------------------------------------------------------------

    async def close_post(self, post_id: int) -> None:
        """Close a post (see `Posting.close`); a live quiz's then moves on to its
        next question. Daily posts close through here too: they have no quiz."""
        post = await self.posting.close(post_id)
        if post is not None and post.quiz_id is not None:
            await self.advance(post.quiz_id, after=post.sequence)

    async def advance(self, quiz_id: int, after: int | None = None) -> None:
        """Post the quiz's next question. `after` is the number of the question that
        just closed; if the quiz has moved past it, someone else already advanced."""
        quiz = await self.ctx.repository.quizzes.quiz(quiz_id)
        if quiz is None or quiz.status != "running":
            return
        if after is not None and quiz.posted != after:
            return
        if not self.ctx.connections.serves(await self.ctx.channels.target_of(quiz.channel_id)):
            return  # left for when this platform (re)connects, or for another process
        await self._post_next(quiz)

    async def _post_next(self, quiz: QuizInfo, *, announce_failure: bool = True) -> Delivery | None:
        """Post the quiz's next question, or finish it when none is left.

        Returns how the first delivery try went (None when nothing was posted).
        A passing failure is retried by the timer loop for about a minute; a
        refusal ends the quiz (and, unless `announce_failure` is false because
        the caller reports it, says so in the channel)."""
        if quiz.posted >= quiz.total:
            await self._finish(quiz)
            return None
        await self.ctx.questions.ensure([quiz.question_ids[quiz.posted]])
        question = self.ctx.questions.question(quiz.question_ids[quiz.posted])
        if question is None:
            # The bank changed under a running quiz: skip the missing question.
            log.warning(
                "question %s is gone; ending quiz %s", quiz.question_ids[quiz.posted], quiz.id
            )
            if await self.ctx.repository.quizzes.end_quiz(quiz.id, "failed", self.ctx.clock.now()):
                self._quiz_ended(await self.ctx.channels.target_of(quiz.channel_id))
            return Delivery.refusal(texts.questions.QUIZ_QUESTION_GONE)
        order = shuffled_order(len(question.options), self.ctx.rng)
        now = self.ctx.clock.now()
        channel = await self.ctx.channels.channel(
            await self.ctx.channels.target_of(quiz.channel_id)
        )
        seconds = quiz.seconds
        if channel.reading_time:
            seconds += reading_seconds(question.prompt, *question.options)
        post = await self.ctx.repository.quizzes.post_next(
            quiz,
            channel,
            option_order=order,
            correct_slot=order.index(question.answer_index),
            now=now,
            closes_at=now + timedelta(seconds=seconds),
            seconds=seconds,
            publish_by=now + LIVE_PUBLISH_WINDOW,
            publish_lease=now + PUBLISH_LEASE,
        )
        if post is None:
            return None  # another caller advanced this quiz
        outcome = await self.posting.deliver(post, quiz.total)
        if outcome.refused:
            await self._post_failed(post, outcome.problem, announce=announce_failure)
        return outcome

    async def retry_delivery(self, post_id: int) -> None:
        """The timer loop's next try at a live question not delivered yet."""
        post = await self.posting.claim_retry(post_id)
        if post is None or post.quiz_id is None:
            return
        quiz = await self.ctx.repository.quizzes.quiz(post.quiz_id)
        if quiz is None or quiz.status != "running":
            await self.ctx.repository.posts.publish_given_up(post.id)
            await self.ctx.repository.posts.claim_close(post.id, self.ctx.clock.now())
            return
        outcome = await self.posting.give_up_if_late(post) or await self.posting.deliver(
            post, quiz.total
        )
        if outcome.refused:
            await self._post_failed(post, outcome.problem, announce=True)

    async def _post_failed(self, post: PostInfo, problem: str | None, *, announce: bool) -> None:
        """A live question nobody will see: close it and end its quiz."""
        await self.ctx.repository.posts.claim_close(post.id, self.ctx.clock.now())
        if post.quiz_id is None or not await self.ctx.repository.quizzes.end_quiz(
            post.quiz_id, "failed", self.ctx.clock.now()
        ):
            return
        if announce:
            try:
                await self.ctx.channels.announce(
                    post.target,
                    "that the quiz ended",
                    lambda _dialect, _names: texts.live.quiz_ended_undeliverable(
                        post.sequence, problem or "refused"
                    ),
                )
            except Exception as error:
                log.warning("could not say in %s that the quiz ended: %s", post.target, error)
        self._quiz_ended(post.target)

    async def _finish(self, quiz: QuizInfo) -> None:
        if not await self.ctx.repository.quizzes.end_quiz(
            quiz.id, "finished", self.ctx.clock.now()
        ):
            return
        channel = await self.ctx.channels.target_of(quiz.channel_id)
        await self._post_scoreboard(quiz, channel, stopped=False)

    async def _post_scoreboard(self, quiz: QuizInfo, target: Target, *, stopped: bool) -> None:
        result = await self.ctx.repository.scores.quiz_result(quiz.id, LEADERBOARD_SIZE)
        teams = None
        if quiz.teams:
            # Kept with the quiz: the team results as the scoreboard shows them.
            teams = await self.ctx.repository.teams.board(quiz.id, quiz.teams)
            await self.ctx.repository.teams.keep_results(quiz.id, teams)
        try:
            await self.ctx.channels.announce(
                target,
                "the scoreboard",
                lambda dialect, names: texts.boards.scoreboard(
                    result, dialect, stopped=stopped, names=names, teams=teams
                ),
                [row.user_id for row in result.rows],
            )
        except Exception:
            log.exception("could not post the scoreboard in %s", target)
        finally:
            self._quiz_ended(target)


async def _start(live: LiveQuizzes, command: Command) -> OutMessage:
    args = command.args
    return await live.start(
        command.target,
        command.user_id,
        questions=args.get("questions"),
        seconds=args.get("seconds"),
        bank=args.get("bank") or None,
        tag=args.get("tag") or None,
        teams=args.get("teams") or None,
    )


async def _stop(live: LiveQuizzes, command: Command) -> OutMessage:
    return await live.stop(command.target)


async def _skip(live: LiveQuizzes, command: Command) -> OutMessage:
    return await live.skip(command.target)


QUESTIONS = Option("questions", Kind.NUMBER, minimum=MIN_QUESTIONS, maximum=MAX_QUESTIONS)
SECONDS = Option("seconds", Kind.NUMBER, minimum=MIN_SECONDS, maximum=MAX_SECONDS)
# Typed as `teams=3` (a number in place would read as questions or seconds); the
# handler checks the range so `teams=9` gets its one line.
TEAMS = Option(
    "teams", Kind.NUMBER, minimum=MIN_TEAMS, maximum=MAX_TEAMS, keyword=True, positional=False
)
COMMANDS = (
    CommandSpec(
        "start",
        LiveQuizzes,
        _start,
        (Variant(("start",), (QUESTIONS, SECONDS, BANK, TAG, TEAMS)),),
        moderator=True,
    ),
    CommandSpec("stop", LiveQuizzes, _stop, (Variant(("stop",)),), moderator=True),
    CommandSpec("skip", LiveQuizzes, _skip, (Variant(("skip",)),), moderator=True),
)
