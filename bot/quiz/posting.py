"""Posting a question and closing it, for live quizzes and daily questions alike.

Delivery: one try at sending, and on a passing failure the next try planned
with backoff (the timer loop makes it). Closing: whoever claims the close in
the database reveals the answer by editing the message, once.
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from bot.chat import DeliveryError, MessageRef, ReadsBack
from bot.domain.records import PostInfo, RevealClaim
from bot.i18n import speaking
from bot.quiz import texts
from bot.quiz.context import Context
from bot.quiz.delivery import (
    DAILY_RETRY,
    LIVE_RETRY,
    PUBLISH_LEASE,
    REVEAL_LEASE,
    retry_delay,
    within_deadline,
)
from bot.quiz.scores import Scores
from bot.quiz.study import Study
from bot.storage.lanes import in_background

log = logging.getLogger(__name__)

POST_CACHE_SIZE = 10_000
# How long after closing a question its reveal is retried if the edit failed.
REVEAL_RETRY_WINDOW = timedelta(minutes=15)
# A close still counting this long after it was claimed was left by a crash
# (or its process is slow): the timer loop's sweep finishes it.
FINISH_GRACE = timedelta(seconds=30)


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


class PostCache:
    """Open posts the answer path reads on every click, newest kept (bounded)."""

    def __init__(self, size: int = POST_CACHE_SIZE) -> None:
        self.size = size
        self._posts: OrderedDict[int, PostInfo] = OrderedDict()

    def get(self, post_id: int) -> PostInfo | None:
        return self._posts.get(post_id)

    def remember(self, post: PostInfo) -> None:
        self._posts[post.id] = post
        while len(self._posts) > self.size:
            self._posts.popitem(last=False)

    def forget(self, post_id: int) -> None:
        self._posts.pop(post_id, None)


class Posting:
    def __init__(
        self,
        ctx: Context,
        scores: Scores,
        study: Study,
    ) -> None:
        self.ctx = ctx
        self.study = study
        self.scores = scores
        self.cache = PostCache()
        self._finishing: set[int] = set()  # closes being counted by this process

    async def post(self, post_id: int) -> PostInfo | None:
        """The post (cached while open: every click reads it)."""
        cached = self.cache.get(post_id)
        if cached is not None:
            return cached
        post = await self.ctx.repository.posts.post(post_id)
        if post is not None and post.closed_at is None:
            self.cache.remember(post)
        return post

    async def view(self, post: PostInfo, total: int | None) -> texts.questions.QuestionView | None:
        await self.ctx.questions.ensure([post.question_id])
        question = self.ctx.questions.question(post.question_id)
        bank = self.ctx.questions.bank_of(post.question_id)
        if question is None or bank is None:
            return None
        return texts.questions.QuestionView(
            post_id=post.id,
            bank_title=bank.title,
            question=question,
            option_order=post.option_order,
            sequence=post.sequence,
            total=total,
            closes_at=post.closes_at,
            seconds=post.seconds,
            review=texts.health.review_note(post.review_share, post.review_of, post.zone),
        )

    # -- delivery -----------------------------------------------------------------

    async def deliver(self, post: PostInfo, total: int | None) -> Delivery:
        """One try at sending a new post's question to its channel.

        A passing failure (timeout, 5xx, 429) plans the next try with backoff,
        until the post's `publish_by`; after that, or on a refusal, the caller
        decides what a post nobody saw means (a failed quiz, a skipped day)."""
        now = self.ctx.clock.now()
        if post.publish_attempts:
            # A retry: the question's time starts when it is finally shown.
            post = replace(post, posted_at=now, closes_at=now + (post.closes_at - post.posted_at))
        adapter = self.ctx.connections.get(post.target.platform)
        view = await self.view(post, total)
        if view is None:
            return Delivery.refusal(texts.questions.QUESTION_GONE)
        try:
            if adapter is None:
                raise DeliveryError(f"no {post.target.platform} connection here")
            # The adapter lays the message out (its closing line) in the same language.
            with speaking(await self.ctx.channels.language(post.target)):
                message = replace(
                    texts.questions.question(view, adapter.dialect),
                    idempotency_key=f"qm-post-{post.id}",
                )
                ref = await within_deadline(adapter.send(post.target, message))
        except DeliveryError as error:
            problem = str(error) or type(error).__name__
            if error.permanent:
                log.warning("cannot post in %s: %s", post.target, problem)
                await self.ctx.channels.delivery_failed(post.target, error)
                return Delivery.refusal(problem)
            return await self._plan_retry(post, problem)
        except Exception as error:
            log.exception("could not post question %s in %s", post.question_id, post.target)
            return await self._plan_retry(post, str(error) or type(error).__name__)
        await self.ctx.repository.posts.published(
            post.id, ref.message_id, post.posted_at, post.closes_at
        )
        self.cache.remember(replace(post, message_id=ref.message_id))
        self.ctx.wake(post.closes_at)
        return Delivery(delivered=True)

    async def _plan_retry(self, post: PostInfo, problem: str) -> Delivery:
        attempt = post.publish_attempts + 1
        first, longest = LIVE_RETRY if post.kind == "live" else DAILY_RETRY
        retry_at = self.ctx.clock.now() + retry_delay(attempt, first, longest, self.ctx.rng)
        if post.publish_by is None or retry_at > post.publish_by:
            log.warning("giving up on post %s in %s: %s", post.id, post.target, problem)
            await self.ctx.repository.posts.publish_given_up(post.id)
            return Delivery.refusal(problem)
        log.info(
            "post %s in %s failed (%s); trying again at %s", post.id, post.target, problem, retry_at
        )
        await self.ctx.repository.posts.publish_failed(post.id, retry_at)
        self.ctx.wake(retry_at)
        return Delivery(delivered=False, problem=problem, retrying=True)

    async def claim_retry(self, post_id: int) -> PostInfo | None:
        """Take a post that is not delivered yet for the timer loop's next try
        (after a passing failure, or a crash between creating and sending it);
        None if it was delivered, given up, or taken by another process."""
        now = self.ctx.clock.now()
        if await self.ctx.repository.posts.claim_publish(post_id, now, now + PUBLISH_LEASE) is None:
            return None
        return await self.ctx.repository.posts.post(post_id)

    async def give_up_if_late(self, post: PostInfo) -> Delivery | None:
        """A refusal once the post's time to be posted has passed, else None."""
        if post.publish_by is not None and self.ctx.clock.now() > post.publish_by:
            await self.ctx.repository.posts.publish_given_up(post.id)
            return Delivery.refusal(texts.questions.POST_TOO_LATE)
        return None

    # -- closing and revealing -----------------------------------------------------

    async def close(self, post_id: int) -> PostInfo | None:
        """Close a post once (whoever claims it), reveal the answer and count
        its answers; the post if this caller closed it (its owner then moves
        on), else None."""
        post = await self.ctx.repository.posts.post(post_id)
        if (
            post is None
            or post.closed_at is not None
            or not self.ctx.connections.serves(post.target)
        ):
            return None
        closed_at = self.ctx.clock.now()
        # The reveal is claimed with the close: until the closer holds it, the
        # timer loop's sweep may claim it instead and show it after the next
        # question is up.
        if not await self.ctx.repository.posts.start_close(post_id, closed_at, reveal=True):
            return None
        await self.closed(post, closed_at)
        # Its answers then reach the boards a slice at a time, and the cards
        # after them; a crash in between leaves the post to the timer loop's sweeps.
        await self.count_answers(post_id)
        return post

    async def closed(self, post: PostInfo, closed_at: datetime) -> None:
        """After this caller closed the post and claimed its reveal: reveal it
        (its answers are counted by `count_answers`, next)."""
        if self.ctx.metrics is not None and closed_at >= post.closes_at:
            # Closed by its deadline (not early, by skip or all answered): how late.
            lag = (closed_at - post.closes_at).total_seconds()
            self.ctx.metrics.timer_lag.labels("close").observe(lag)
        self.cache.forget(post.id)
        await self.reveal(post, claimed=True)

    async def count_answers(self, post_id: int) -> None:
        """After a close: its answers onto the boards, then into the cards, in the
        database's background lane (behind members' clicks, wherever it runs)."""
        with in_background():
            await self.finish_close(post_id)
            await self.study.apply_post(post_id)

    async def finish_close(self, post_id: int) -> None:
        """Count a closed post's answers on the boards (once, whoever else is
        counting it too); a failure is logged and left for the sweep."""
        if post_id in self._finishing:
            return
        self._finishing.add(post_id)
        try:
            await self.ctx.repository.posts.finish_close(post_id)
        except Exception:
            log.exception("could not count the answers of post %s; will retry", post_id)
        finally:
            self._finishing.discard(post_id)

    async def finish_unfinished(self) -> None:
        """The timer loop's sweep for closes a crash (here or in another
        process) left half counted."""
        before = self.ctx.clock.now() - FINISH_GRACE
        for post_id in await self.ctx.repository.posts.unfinished_closes(before):
            await self.finish_close(post_id)

    async def reveal(self, post: PostInfo, *, claimed: bool = False) -> None:
        """Edit the question to show the answer, once: the caller that claims the
        reveal (or `claimed` it with the close) edits; a reveal that failed or
        was cut short is retried by a later tick (after a passing failure at
        once, after a crash once the claim is old)."""
        adapter = self.ctx.connections.get(post.target.platform)
        posts = self.ctx.repository.posts
        if adapter is None or not adapter.connected or post.message_id is None:
            if claimed and post.message_id is not None:
                await posts.release_reveal(
                    post.id, self._reveal_free_since()
                )  # for whoever serves it
            return  # another process serves this platform, or nothing was posted
        now = self.ctx.clock.now()
        if claimed:  # by the close's own transaction: nobody edited it before
            claim = RevealClaim(again=False)
        else:
            taken = await posts.claim_reveal(post.id, now, now - REVEAL_LEASE)
            if taken is None:
                return  # someone else is revealing it, or it is revealed
            claim = taken
        total = post.quiz_total
        if total is None and post.quiz_id is not None:
            quiz = await self.ctx.repository.quizzes.quiz(post.quiz_id)
            total = quiz.total if quiz else None
        view = await self.view(post, total)
        if view is not None:
            tally = await self.ctx.repository.answers.tally(post)
            first = [tally.first_correct_user] if tally.first_correct_user else []
            leaders = (
                await self.scores.streak_leaders(post.channel_id) if post.kind == "daily" else None
            )
            points = await self.ctx.repository.answers.points(post.id, texts.questions.POINTS_SHOWN)
            teams = (
                await self.ctx.repository.teams.board(post.quiz_id, post.teams)
                if post.quiz_id is not None and post.teams
                else None
            )
            try:
                names = await self.ctx.channels.names(
                    post.target,
                    first + [u for u, _ in leaders or []] + [row.user_id for row in points.top],
                )
                with speaking(await self.ctx.channels.language(post.target)):
                    ref = MessageRef(post.target, post.message_id)
                    revealed = texts.questions.reveal(
                        view,
                        post.correct_slot,
                        tally,
                        adapter.dialect,
                        names,
                        leaders,
                        points,
                        teams,
                    )
                    # An earlier try may have made this very edit before it died or
                    # lost the reply: sent again, it would be a second reveal.
                    shown = (
                        claim.again
                        and isinstance(adapter, ReadsBack)
                        and await within_deadline(adapter.shows(ref, revealed))
                    )
                    if claim.again:
                        # Rare (a crash, a lost reply): worth a line when it happens.
                        log.warning(
                            "post %s in %s: taking over its reveal; %s",
                            post.id,
                            post.target,
                            "already shown, not edited again" if shown else "editing it",
                        )
                    if not shown:
                        await within_deadline(adapter.edit(ref, revealed))
            except DeliveryError as error:
                log.warning("cannot reveal post %s in %s: %s", post.id, post.target, error)
                if not error.permanent:
                    await posts.release_reveal(post.id, self._reveal_free_since())
                    return  # try again on a later tick
            except Exception:
                log.exception("could not reveal post %s in %s; will retry", post.id, post.target)
                await posts.release_reveal(post.id, self._reveal_free_since())
                return
        await posts.mark_revealed(post.id, self.ctx.clock.now())

    def _reveal_free_since(self) -> datetime:
        # A claim dated this far back is free for the next tick to take.
        return self.ctx.clock.now() - REVEAL_LEASE - timedelta(microseconds=1)

    async def reveal_again(self, post_id: int) -> None:
        post = await self.ctx.repository.posts.post(post_id)
        if post is not None:
            await self.reveal(post)
