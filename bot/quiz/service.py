"""The quiz use cases: live quizzes, answers, closing and revealing, scores.

Platform-neutral: it talks to adapters only through `bot.chat`. State lives in
the database (deadlines included), so a restart resumes where it stopped.
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import timedelta
from functools import partial
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from bot.chat import (
    Adapter,
    Command,
    DeliveryError,
    Interaction,
    MessageRef,
    OutMessage,
    Target,
)
from bot.clock import Clock
from bot.quiz import render
from bot.quiz.bank import Catalog
from bot.quiz.delivery import (
    DAILY_RETRY,
    LIVE_PUBLISH_WINDOW,
    LIVE_RETRY,
    PUBLISH_LEASE,
    REVEAL_LEASE,
    retry_delay,
    within_deadline,
)
from bot.quiz.jobs import Jobs
from bot.quiz.rules import (
    DEFAULT_QUESTIONS,
    DEFAULT_SECONDS,
    LEADERBOARD_SIZE,
    MAX_DAILY_WINDOW_HOURS,
    MAX_GRACE_MINUTES,
    MAX_QUESTIONS,
    MAX_SECONDS,
    MIN_DAILY_WINDOW_HOURS,
    MIN_GRACE_MINUTES,
    MIN_QUESTIONS,
    MIN_SECONDS,
    Period,
    Scope,
    check_range,
    is_valid_id,
    period_window,
    points_for,
    shuffled_order,
    streak_board,
    streaks,
)
from bot.quiz.scheduler import Scheduler
from bot.storage.answer_writer import AnswerWriter
from bot.storage.records import ChannelInfo, NewAnswer, PostInfo, QuizInfo
from bot.storage.repository import Repository

log = logging.getLogger(__name__)

# Longest the timer loop sleeps without looking at the database, so deadlines
# set by another process sharing the database are noticed too.
MAX_IDLE_SECONDS = 30.0
POST_CACHE_SIZE = 10_000
# How long after closing a question its reveal is retried if the edit failed.
REVEAL_RETRY_WINDOW = timedelta(minutes=15)
# How long shutdown waits for timed work in flight (closes, posts) to finish.
DRAIN_SECONDS = 10.0
MODERATOR_COMMANDS = {
    "start": "start a quiz",
    "stop": "stop a quiz",
    "skip": "skip a question",
    "config": "change channel settings",
    "schedule": "change the schedule",
}
# Whole-number channel settings: key → (name in errors, channel column, limits).
NUMBER_SETTINGS = {
    "daily-window": (
        "daily-window (hours)",
        "daily_window_hours",
        MIN_DAILY_WINDOW_HOURS,
        MAX_DAILY_WINDOW_HOURS,
    ),
    "grace": ("grace (minutes)", "grace_minutes", MIN_GRACE_MINUTES, MAX_GRACE_MINUTES),
}
SCOPE_WORDS = {
    "channel": Scope.CHANNEL,
    "server": Scope.COMMUNITY,
    "workspace": Scope.COMMUNITY,
    "community": Scope.COMMUNITY,
}


@dataclass(frozen=True)
class Delivery:
    """How one try at posting a new question went."""

    delivered: bool
    problem: str | None = None
    retrying: bool = False  # a passing failure: the timer loop tries again

    @property
    def refused(self) -> bool:
        return not self.delivered and not self.retrying

    @classmethod
    def refusal(cls, problem: str) -> Delivery:
        return cls(delivered=False, problem=problem)


class QuizService:
    def __init__(
        self,
        repository: Repository,
        catalog: Catalog,
        clock: Clock,
        rng: random.Random | None = None,
    ) -> None:
        self.repository = repository
        self.answers = AnswerWriter(repository.answers)
        self.catalog = catalog
        self.clock = clock
        self.rng = rng or random.Random()
        self.adapters: dict[str, Adapter] = {}
        self._channels: dict[tuple[str, str], ChannelInfo] = {}
        self._posts: OrderedDict[int, PostInfo] = OrderedDict()
        self._wake = asyncio.Event()
        self._stopping = False
        self._quiz_end_listeners: list[Callable[[Target], None]] = []
        self.jobs = Jobs()
        self.scheduler = Scheduler(self)

    def register(self, adapter: Adapter) -> None:
        self.adapters[adapter.platform] = adapter

    def on_quiz_end(self, listener: Callable[[Target], None]) -> None:
        """Call `listener(channel)` whenever a live quiz ends, however it ended."""
        self._quiz_end_listeners.append(listener)

    def _quiz_ended(self, target: Target) -> None:
        for listener in self._quiz_end_listeners:
            listener(target)

    # -- entry points for adapters ----------------------------------------------

    async def handle_command(self, command: Command) -> OutMessage:
        """Run a `/quiz` command; the result is the private reply to its author."""
        if not _valid_ids(command.target, command.user_id):
            return render.malformed_id()
        try:
            return await self._dispatch(command)
        except Exception:
            log.exception("command %s failed in %s", command.name, command.target)
            return render.failure()

    async def handle_click(self, interaction: Interaction) -> OutMessage:
        """Record a button click; the result is the private reply to the clicker.

        When it returns, an answer that counted is committed; if storing failed,
        the reply says the answer did not count (clicking again is safe)."""
        if not _valid_ids(interaction.target, interaction.user_id):
            return render.malformed_id()
        try:
            return await self.answer(interaction)
        except Exception:
            log.exception("click %s failed in %s", interaction.custom_id, interaction.target)
            return render.answer_not_counted()

    async def _dispatch(self, command: Command) -> OutMessage:
        name = command.name
        # Anyone may look at the schedule; only changing it needs a moderator.
        showing_schedule = name == "schedule" and command.args.get("action", "show").lower() in (
            "show",
            "",
        )
        if name in MODERATOR_COMMANDS and not showing_schedule:
            channel = await self.channel(command.target)
            if not await command.by_moderator(channel.moderator_role):
                return render.not_moderator(MODERATOR_COMMANDS[name], channel.moderator_role)
        args = command.args
        if name == "start":
            return await self.start(
                command.target,
                command.user_id,
                questions=args.get("questions"),
                seconds=args.get("seconds"),
                bank=args.get("bank") or None,
                tag=args.get("tag") or None,
            )
        if name == "stop":
            return await self.stop(command.target)
        if name == "skip":
            return await self.skip(command.target)
        if name == "leaderboard":
            return await self.leaderboard(
                command.target, args.get("scope", "channel"), args.get("period", "week")
            )
        if name == "stats":
            return await self.stats(command.target, args.get("user") or command.user_id)
        if name == "forget-me":
            return render.forgotten(
                await self.forget_user(command.target.platform, command.user_id)
            )
        if name == "config":
            return await self.configure(command.target, args.get("key"), args.get("value"))
        if name == "schedule":
            return await self.scheduler.command(command.target, command.user_id, args)
        if name == "help":
            return render.help_message()
        return render.unknown_command(name)

    # -- channel settings -----------------------------------------------------------

    async def configure(self, target: Target, key: str | None, value: str | None) -> OutMessage:
        """`config show` (no key) or `config set <key> <value>`."""
        channel = await self.channel(target)
        if key is None:
            return render.channel_settings(channel)
        key = key.lower()
        if key not in render.CONFIG_KEYS:
            return render.unknown_setting(key)
        if value is None or not value.strip():
            return render.setting_needs_value(key)
        value = value.strip()
        if key in ("moderator-role", "moderator-group"):
            cleared = value.lower() in CLEAR_WORDS
            role = None if cleared else value.lstrip("@")
            channel = await self.update_channel(channel, moderator_role=role)
        elif key == "mentions":
            switch = ON_OFF.get(value.lower())
            if switch is None:
                return render.bad_value(f"mentions must be on or off (got {value})")
            channel = await self.update_channel(channel, mentions=switch)
        elif key == "timezone":
            if not _known_zone(value):
                return render.unknown_timezone(value)
            channel = await self.update_channel(channel, timezone=value)
        elif key in NUMBER_SETTINGS:
            label, column, low, high = NUMBER_SETTINGS[key]
            number = _as_int(value, 0)
            problem = (
                f"{label} must be a whole number (got {value})"
                if number is None
                else check_range(label, number, low, high)
            )
            if problem:
                return render.bad_value(problem)
            channel = await self.update_channel(channel, **{column: number})
        return render.setting_changed(key, channel)

    async def update_channel(
        self, channel: ChannelInfo, **values: str | bool | int | None
    ) -> ChannelInfo:
        updated = await self.repository.channels.update_channel(channel.id, **values)
        self._channels[(updated.target.platform, updated.target.channel)] = updated
        return updated

    async def delivery_failed(self, target: Target, error: DeliveryError) -> None:
        """Remember why the platform refused a post here, so timed posts stop
        and moderators are told (see `render.channel_settings`)."""
        if not error.permanent:
            return
        channel = await self.channel(target)
        await self.update_channel(channel, delivery_problem=str(error)[:300])

    # -- live quizzes -----------------------------------------------------------

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
    ) -> OutMessage:
        count = _as_int(questions, DEFAULT_QUESTIONS)
        limit = _as_int(seconds, DEFAULT_SECONDS)
        if count is None:
            return render.bad_value(f"questions must be a whole number (got {questions})")
        if limit is None:
            return render.bad_value(f"seconds must be a whole number (got {seconds})")
        problem = check_range("questions", count, MIN_QUESTIONS, MAX_QUESTIONS) or check_range(
            "seconds", limit, MIN_SECONDS, MAX_SECONDS
        )
        if problem:
            return render.bad_value(problem)
        if bank and bank not in self.catalog.banks:
            return render.unknown_bank(bank, sorted(self.catalog.banks))
        pool = self.catalog.pool(bank, tag)
        if not pool:
            return render.no_questions(bank, tag)

        channel = await self.channel(target)
        if await self.repository.quizzes.running_quiz(channel.id):
            return render.quiz_already_running()
        drawn = await self.repository.quizzes.draw(
            channel.id, pool, min(count, len(pool)), self.rng
        )
        quiz = await self.repository.quizzes.create_quiz(
            channel.id,
            drawn,
            seconds=limit,
            bank=bank,
            tag=tag,
            started_by=user_id,
            expected_players=expected_players,
            now=self.clock.now(),
        )
        if quiz is None:
            return render.quiz_already_running()
        outcome = await self._post_next(quiz, announce_failure=False)
        if outcome is not None and outcome.refused:
            return render.cannot_post(outcome.problem or "refused")
        if channel.delivery_problem is not None:
            await self.update_channel(channel, delivery_problem=None)
        if outcome is not None and outcome.retrying:
            return render.quiz_start_delayed(quiz.total, limit, outcome.problem or "no answer")
        return render.quiz_started(quiz.total, limit)

    async def stop(self, target: Target) -> OutMessage:
        channel = await self.channel(target)
        quiz = await self.repository.quizzes.running_quiz(channel.id)
        if quiz is None or not await self.repository.quizzes.end_quiz(
            quiz.id, "stopped", self.clock.now()
        ):
            return render.no_quiz_running()
        for post_id in await self.repository.posts.open_posts(quiz.id):
            await self.close_post(post_id)
        await self._post_scoreboard(quiz, channel.target, stopped=True)
        return render.quiz_stopped()

    async def skip(self, target: Target) -> OutMessage:
        channel = await self.channel(target)
        post_id = await self.repository.posts.open_post_in_channel(channel.id)
        if post_id is None:
            return render.no_quiz_running()
        await self.close_post(post_id)
        return render.question_skipped()

    async def _post_next(self, quiz: QuizInfo, *, announce_failure: bool = True) -> Delivery | None:
        """Post the quiz's next question, or finish it when none is left.

        Returns how the first delivery try went (None when nothing was posted).
        A passing failure is retried by the timer loop for about a minute; a
        refusal ends the quiz (and, unless `announce_failure` is false because
        the caller reports it, says so in the channel)."""
        if quiz.posted >= quiz.total:
            await self._finish(quiz)
            return None
        question = self.catalog.question(quiz.question_ids[quiz.posted])
        if question is None:
            # The bank changed under a running quiz: skip the missing question.
            log.warning(
                "question %s is gone; ending quiz %s", quiz.question_ids[quiz.posted], quiz.id
            )
            if await self.repository.quizzes.end_quiz(quiz.id, "failed", self.clock.now()):
                self._quiz_ended(await self._target_of(quiz))
            return Delivery.refusal("a question of this quiz is no longer in its bank")
        order = shuffled_order(len(question.options), self.rng)
        now = self.clock.now()
        post = await self.repository.quizzes.post_next(
            quiz.id,
            quiz.posted,
            option_order=order,
            correct_slot=order.index(question.answer_index),
            now=now,
            closes_at=now + timedelta(seconds=quiz.seconds),
            publish_by=now + LIVE_PUBLISH_WINDOW,
            publish_lease=now + PUBLISH_LEASE,
        )
        if post is None:
            return None  # another caller advanced this quiz
        outcome = await self.deliver(post, quiz.total)
        if outcome.refused:
            await self._live_post_failed(post, outcome.problem, announce=announce_failure)
        return outcome

    async def deliver(self, post: PostInfo, total: int | None) -> Delivery:
        """One try at sending a new post's question to its channel.

        A passing failure (timeout, 5xx, 429) plans the next try with backoff,
        until the post's `publish_by`; after that, or on a refusal, the caller
        decides what a post nobody saw means (a failed quiz, a skipped day)."""
        now = self.clock.now()
        if post.publish_attempts:
            # A retry: the question's time starts when it is finally shown.
            post = replace(post, posted_at=now, closes_at=now + (post.closes_at - post.posted_at))
        adapter = self.adapters.get(post.target.platform)
        view = self._view(post, total)
        if view is None:
            return Delivery.refusal("the question is no longer in its bank")
        try:
            if adapter is None:
                raise DeliveryError(f"no {post.target.platform} connection here")
            message = replace(
                render.question(view, post.target.platform),
                idempotency_key=f"qm-post-{post.id}",
            )
            ref = await within_deadline(adapter.send(post.target, message))
        except DeliveryError as error:
            problem = str(error) or type(error).__name__
            if error.permanent:
                log.warning("cannot post in %s: %s", post.target, problem)
                await self.delivery_failed(post.target, error)
                return Delivery.refusal(problem)
            return await self._plan_retry(post, problem)
        except Exception as error:
            log.exception("could not post question %s in %s", post.question_id, post.target)
            return await self._plan_retry(post, str(error) or type(error).__name__)
        await self.repository.posts.published(
            post.id, ref.message_id, post.posted_at, post.closes_at
        )
        self._remember(post, message_id=ref.message_id)
        self._wake.set()
        return Delivery(delivered=True)

    async def _plan_retry(self, post: PostInfo, problem: str) -> Delivery:
        attempt = post.publish_attempts + 1
        first, longest = LIVE_RETRY if post.kind == "live" else DAILY_RETRY
        retry_at = self.clock.now() + retry_delay(attempt, first, longest, self.rng)
        if post.publish_by is None or retry_at > post.publish_by:
            log.warning("giving up on post %s in %s: %s", post.id, post.target, problem)
            await self.repository.posts.publish_given_up(post.id)
            return Delivery.refusal(problem)
        log.info(
            "post %s in %s failed (%s); trying again at %s", post.id, post.target, problem, retry_at
        )
        await self.repository.posts.publish_failed(post.id, retry_at)
        self._wake.set()
        return Delivery(delivered=False, problem=problem, retrying=True)

    async def _live_post_failed(
        self, post: PostInfo, problem: str | None, *, announce: bool
    ) -> None:
        """A live question nobody will see: close it and end its quiz."""
        await self.repository.posts.claim_close(post.id, self.clock.now())
        if post.quiz_id is None or not await self.repository.quizzes.end_quiz(
            post.quiz_id, "failed", self.clock.now()
        ):
            return
        if announce:
            adapter = self.adapters.get(post.target.platform)
            try:
                if adapter is not None:
                    await within_deadline(
                        adapter.send(
                            post.target,
                            render.quiz_ended_undeliverable(post.sequence, problem or "refused"),
                        )
                    )
            except Exception as error:
                log.warning("could not say in %s that the quiz ended: %s", post.target, error)
        self._quiz_ended(post.target)

    async def _retry_delivery(self, post_id: int) -> None:
        """The timer loop's retry of a post that is not delivered yet (after a
        passing failure, or a crash between creating the post and sending it)."""
        now = self.clock.now()
        attempts = await self.repository.posts.claim_publish(post_id, now, now + PUBLISH_LEASE)
        if attempts is None:
            return  # delivered, given up, or taken by another process
        post = await self.repository.posts.post(post_id)
        if post is None:
            return
        total: int | None = None
        if post.quiz_id is not None:
            quiz = await self.repository.quizzes.quiz(post.quiz_id)
            if quiz is None or quiz.status != "running":
                await self.repository.posts.publish_given_up(post.id)
                await self.repository.posts.claim_close(post.id, now)
                return
            total = quiz.total
        if post.publish_by is not None and now > post.publish_by:
            outcome = Delivery.refusal("its time to be posted has passed")
            await self.repository.posts.publish_given_up(post.id)
        else:
            if post.kind == "daily":
                await self.close_older_dailies(post)
            outcome = await self.deliver(post, total)
        if outcome.refused:
            if post.kind == "live":
                await self._live_post_failed(post, outcome.problem, announce=True)
            else:
                await self.repository.posts.discard_post(post.id)

    async def close_older_dailies(self, post: PostInfo) -> None:
        """Today's daily question closes (and reveals) the channel's earlier ones."""
        for older in await self.repository.posts.open_daily_posts(post.channel_id, before=post.id):
            await self.close_post(older)

    async def _finish(self, quiz: QuizInfo) -> None:
        if not await self.repository.quizzes.end_quiz(quiz.id, "finished", self.clock.now()):
            return
        channel = await self._target_of(quiz)
        await self._post_scoreboard(quiz, channel, stopped=False)

    async def _post_scoreboard(self, quiz: QuizInfo, target: Target, *, stopped: bool) -> None:
        result = await self.repository.scores.quiz_result(quiz.id, LEADERBOARD_SIZE)
        adapter = self.adapters.get(target.platform)
        try:
            if adapter is not None:
                names = await self.names(target, [row.user_id for row in result.rows])
                message = render.scoreboard(result, target.platform, stopped=stopped, names=names)
                await within_deadline(adapter.send(target, message))
        except DeliveryError as error:
            log.warning("cannot post the scoreboard in %s: %s", target, error)
            await self.delivery_failed(target, error)
        except Exception:
            log.exception("could not post the scoreboard in %s", target)
        finally:
            self._quiz_ended(target)

    # -- answers ------------------------------------------------------------------

    async def answer(self, interaction: Interaction) -> OutMessage:
        parsed = render.parse_answer_custom_id(interaction.custom_id)
        if parsed is None:
            return render.unknown_question()
        post_id, slot = parsed
        post = await self._post(post_id)
        if (
            post is None
            or post.target.platform != interaction.target.platform
            or post.target.channel != interaction.target.channel
            or slot >= len(post.option_order)
        ):
            return render.unknown_question()
        now = self.clock.now()
        if post.closed_at is not None or now >= post.closes_at:
            return render.question_closed(post.correct_slot)

        live = post.kind == "live"
        correct = slot == post.correct_slot
        time_left = (post.closes_at - now).total_seconds()
        points = points_for(correct, live=live, time_left=time_left, time_limit=post.seconds)
        stored = await self.answers.record(
            NewAnswer(post, interaction.user_id, slot, correct, points, now)
        )
        if not stored:
            earlier = await self.repository.answers.answer_slot(post.id, interaction.user_id)
            if earlier is not None:
                return render.already_answered(earlier)
            return render.question_closed(post.correct_slot)

        if live and post.quiz_id is not None:
            await self._close_when_everyone_answered(post)
            return render.locked_in(slot)
        question = self.catalog.question(post.question_id)
        explanation = question.explanation if question else ""
        streak = None
        if post.kind == "daily":
            streak, _ = streaks(
                await self.repository.scores.daily_results(post.channel_id, interaction.user_id)
            )
        return render.daily_feedback(slot, correct, post.correct_slot, explanation, streak)

    async def _close_when_everyone_answered(self, post: PostInfo) -> None:
        if post.expected_players is None:
            return
        if await self.repository.answers.answer_count(post.id) >= post.expected_players:
            await self.repository.posts.close_early(post.id, self.clock.now())
            self._wake.set()

    # -- closing ------------------------------------------------------------------

    async def close_post(self, post_id: int) -> None:
        """Close a post once (whoever claims it), reveal the answer, and move its quiz on."""
        post = await self.repository.posts.post(post_id)
        if post is None or post.closed_at is not None or not self._serves(post.target):
            return
        if not await self.repository.posts.claim_close(post_id, self.clock.now()):
            return
        self._posts.pop(post_id, None)
        await self._reveal(post)
        if post.quiz_id is not None:
            await self._advance(post.quiz_id, after=post.sequence)

    async def _reveal(self, post: PostInfo) -> None:
        """Edit the question to show the answer, once: the caller that claims the
        reveal edits; a reveal that failed or was cut short is retried by a later
        tick (after a passing failure at once, after a crash once the claim is old)."""
        adapter = self.adapters.get(post.target.platform)
        if adapter is None or not adapter.connected or post.message_id is None:
            return  # another process serves this platform, or nothing was posted
        now = self.clock.now()
        if not await self.repository.posts.claim_reveal(post.id, now, now - REVEAL_LEASE):
            return  # someone else is revealing it, or it is revealed
        quiz = (
            await self.repository.quizzes.quiz(post.quiz_id) if post.quiz_id is not None else None
        )
        view = self._view(post, quiz.total if quiz else None)
        if view is not None:
            tally = await self.repository.answers.tally(post)
            first = [tally.first_correct_user] if tally.first_correct_user else []
            leaders = (
                await self.scheduler.streak_leaders(post.channel_id)
                if post.kind == "daily"
                else None
            )
            try:
                names = await self.names(post.target, first + [u for u, _ in leaders or []])
                await within_deadline(
                    adapter.edit(
                        MessageRef(post.target, post.message_id),
                        render.reveal(
                            view, post.correct_slot, tally, post.target.platform, names, leaders
                        ),
                    )
                )
            except DeliveryError as error:
                log.warning("cannot reveal post %s in %s: %s", post.id, post.target, error)
                if not error.permanent:
                    await self.repository.posts.release_reveal(post.id)
                    return  # try again on a later tick
            except Exception:
                log.exception("could not reveal post %s in %s; will retry", post.id, post.target)
                await self.repository.posts.release_reveal(post.id)
                return
        await self.repository.posts.mark_revealed(post.id, self.clock.now())

    async def _reveal_again(self, post_id: int) -> None:
        post = await self.repository.posts.post(post_id)
        if post is not None:
            await self._reveal(post)

    async def _advance(self, quiz_id: int, after: int | None = None) -> None:
        """Post the quiz's next question. `after` is the number of the question that
        just closed; if the quiz has moved past it, someone else already advanced."""
        quiz = await self.repository.quizzes.quiz(quiz_id)
        if quiz is None or quiz.status != "running":
            return
        if after is not None and quiz.posted != after:
            return
        if not self._serves(await self._target_of(quiz)):
            return  # left for when this platform (re)connects, or for another process
        await self._post_next(quiz)

    def _serves(self, target: Target) -> bool:
        """Whether this process can post on the target's platform right now."""
        adapter = self.adapters.get(target.platform)
        return adapter is not None and adapter.connected

    async def names(self, target: Target, user_ids: list[str]) -> dict[str, str] | None:
        """Display names for a channel post where mentions are off; None means mention."""
        channel = await self.channel(target)
        adapter = self.adapters.get(target.platform)
        if channel.mentions or adapter is None or not user_ids:
            return None
        try:
            return await within_deadline(adapter.display_names(target, user_ids))
        except Exception:
            log.warning("could not look up display names in %s", target, exc_info=True)
            return {}

    # -- timers -------------------------------------------------------------------

    async def tick(self) -> None:
        """Do everything that is due and wait for it (tests step time this way;
        the timer loop starts the same work without waiting for it)."""
        await asyncio.gather(*await self.start_due_work())

    async def start_due_work(self) -> list[asyncio.Task[None]]:
        """Start every due close, reveal retry, delivery retry, stalled quiz and
        schedule, each in its own task: one channel's hanging call never holds
        up another channel. Work already running is not started twice."""
        now = self.clock.now()
        platforms = self.platforms_here()
        # Look everything up before starting anything, so work started now
        # cannot make a quiz look stalled half-way through closing a question.
        stalled = await self.repository.quizzes.stalled_quizzes()
        due = await self.repository.posts.due_posts(now)
        unrevealed = await self.repository.posts.unrevealed_posts(
            now - REVEAL_RETRY_WINDOW, now - REVEAL_LEASE
        )
        undelivered = await self.repository.posts.due_publishes(now, platforms)
        schedules = await self.scheduler.due(now)
        tasks = [self.jobs.start(("reveal", p), partial(self._reveal_again, p)) for p in unrevealed]
        # A quiz's closes, retries and next questions share one key: one at a time.
        tasks += [self.jobs.start(self._job_key(p, q), partial(self.close_post, p)) for p, q in due]
        tasks += [
            self.jobs.start(self._job_key(p, q), partial(self._retry_delivery, p))
            for p, q in undelivered
        ]
        tasks += [self.jobs.start(("quiz", q), partial(self._advance, q)) for q in stalled]
        tasks += self.scheduler.start(schedules, now)
        return tasks

    @staticmethod
    def _job_key(post_id: int, quiz_id: int | None) -> tuple[str, int]:
        return ("quiz", quiz_id) if quiz_id is not None else ("post", post_id)

    async def run_timers(self) -> None:
        """Sleep until the next deadline (or a wake-up), then tick; until `shutdown`."""
        while not self._stopping:
            self._wake.clear()
            timeout = MAX_IDLE_SECONDS
            try:
                ticked_at = self.clock.now()
                await self.start_due_work()
                upcoming = [
                    when
                    for when in (
                        await self.repository.posts.next_deadline(),
                        await self.scheduler.next_fire(),
                        await self.repository.posts.next_publish_retry(self.platforms_here()),
                    )
                    if when is not None
                ]
                if upcoming:
                    deadline = min(upcoming)
                    if deadline <= ticked_at:
                        # Still due after a tick: its platform is not connected
                        # here yet; look again soon rather than spin.
                        timeout = 1.0
                    else:
                        # Came due while this tick ran (0 s): tick again at once.
                        wait = (deadline - self.clock.now()).total_seconds()
                        timeout = min(max(wait, 0.0), MAX_IDLE_SECONDS)
            except Exception:
                log.exception("timer tick failed; retrying")
                timeout = 1.0
            if not self._stopping:
                await self.clock.wait(self._wake, timeout)

    def wake(self) -> None:
        """Look at the timers again now (a schedule changed)."""
        self._wake.set()

    def shutdown(self) -> None:
        self._stopping = True
        self._wake.set()

    async def drain(self, seconds: float = DRAIN_SECONDS) -> None:
        """After `shutdown`: let timed work in flight finish, then store every
        answer still queued, so nothing acknowledged is lost on the way out."""
        await self.jobs.drain(seconds)
        await self.answers.drain()

    def platforms_here(self) -> list[str]:
        """The platforms this process can post on right now."""
        return [name for name, adapter in self.adapters.items() if adapter.connected]

    # -- scores -------------------------------------------------------------------

    async def leaderboard(self, target: Target, scope_word: str, period_word: str) -> OutMessage:
        scope = SCOPE_WORDS.get(scope_word.lower())
        if scope is None:
            return render.bad_value(f"scope must be channel or server (got {scope_word})")
        channel = await self.channel(target)
        if period_word.lower() == "streaks":
            board = streak_board(await self.scheduler.streaks(channel.id), LEADERBOARD_SIZE)
            streak_names = await self.names(target, [user for user, _ in board])
            return render.streak_board(board, target.platform, streak_names)
        try:
            period = Period(period_word.lower())
        except ValueError:
            return render.bad_value(
                f"period must be week, month, all or streaks (got {period_word})"
            )
        window = period_window(period, self.clock.now(), _zone(channel.timezone))
        rows = await self.repository.scores.leaderboard(
            platform=target.platform,
            community=target.community,
            channel_id=channel.id if scope is Scope.CHANNEL else None,
            window=window,
            limit=LEADERBOARD_SIZE,
        )
        names = await self.names(target, [row.user_id for row in rows])
        return render.leaderboard(rows, target.platform, scope, period, names)

    async def stats_view(self, target: Target, user_id: str) -> render.StatsView:
        totals = await self.repository.scores.user_totals(target.platform, user_id)
        channel = await self.channel(target)
        current, best = streaks(await self.repository.scores.daily_results(channel.id, user_id))
        best_anywhere = best
        for other in await self.repository.scores.daily_channels_of(target.platform, user_id):
            if other != channel.id:
                _, other_best = streaks(await self.repository.scores.daily_results(other, user_id))
                best_anywhere = max(best_anywhere, other_best)
        per_tag: dict[str, list[int]] = {}
        for question_id, answered, correct in totals.per_question:
            question = self.catalog.question(question_id)
            for tag in question.tags if question else []:
                counts = per_tag.setdefault(tag, [0, 0])
                counts[0] += answered
                counts[1] += correct
        return render.StatsView(
            user_id=user_id,
            answered=totals.answered,
            correct=totals.correct,
            points=totals.points,
            streak=current,
            best_streak=best,
            best_streak_anywhere=best_anywhere,
            per_tag=[(tag, n, c) for tag, (n, c) in sorted(per_tag.items())],
        )

    async def stats(self, target: Target, user_id: str) -> OutMessage:
        return render.stats(await self.stats_view(target, user_id), target.platform)

    async def forget_user(self, platform: str, user_id: str) -> int:
        return await self.repository.answers.forget_user(platform, user_id)

    # -- helpers ------------------------------------------------------------------

    async def channel(self, target: Target) -> ChannelInfo:
        key = (target.platform, target.channel)
        if key not in self._channels:
            self._channels[key] = await self.repository.channels.channel(target, self.clock.now())
        return self._channels[key]

    async def _target_of(self, quiz: QuizInfo) -> Target:
        for info in self._channels.values():
            if info.id == quiz.channel_id:
                return info.target
        return await self.repository.channels.channel_target(quiz.channel_id)

    async def _post(self, post_id: int) -> PostInfo | None:
        cached = self._posts.get(post_id)
        if cached is not None:
            return cached
        post = await self.repository.posts.post(post_id)
        if post is not None and post.closed_at is None:
            self._remember(post)
        return post

    def _remember(self, post: PostInfo, message_id: str | None = None) -> None:
        if message_id is not None:
            post = replace(post, message_id=message_id)
        self._posts[post.id] = post
        while len(self._posts) > POST_CACHE_SIZE:
            self._posts.popitem(last=False)

    def _view(self, post: PostInfo, total: int | None) -> render.QuestionView | None:
        question = self.catalog.question(post.question_id)
        bank = self.catalog.bank_of(post.question_id)
        if question is None or bank is None:
            return None
        return render.QuestionView(
            post_id=post.id,
            bank_title=bank.title,
            question=question,
            option_order=post.option_order,
            sequence=post.sequence,
            total=total,
            closes_at=post.closes_at,
            seconds=post.seconds,
        )


def _as_int(value: int | str | None, default: int) -> int | None:
    if value is None or value == "":
        return default
    if isinstance(value, int):
        return value
    try:
        return int(value.strip())
    except ValueError:  # "ten", "3.5", "--5", "²" (a digit int() refuses)
        return None


CLEAR_WORDS = {"none", "off", "-", "clear"}
ON_OFF = {"on": True, "off": False, "yes": True, "no": False, "true": True, "false": False}


def _valid_ids(target: Target, user_id: str) -> bool:
    """Ids arrive from outside: refuse empty, overlong or unprintable ones
    before anything is stored under them."""
    return all(is_valid_id(value) for value in (user_id, target.channel, target.community))


def _known_zone(name: str) -> bool:
    try:
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        return False
    return True


def _zone(name: str) -> ZoneInfo:
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        return ZoneInfo("UTC")
