"""The timer loop: sleep until the next deadline (or a wake-up), then start
every due close, reveal retry, delivery retry, stalled quiz and schedule."""

from __future__ import annotations

import asyncio
import logging
from datetime import datetime, timedelta
from functools import partial

from bot.clock import Clock
from bot.quiz.connections import Connections
from bot.quiz.context import Wakeup
from bot.quiz.delivery import HANDOVER, REVEAL_LEASE
from bot.quiz.jobs import Jobs
from bot.quiz.live import LiveQuizzes
from bot.quiz.posting import REVEAL_RETRY_WINDOW, Posting
from bot.quiz.scheduler import Scheduler
from bot.quiz.study import Study
from bot.storage.answer_writer import AnswerWriter
from bot.storage.repository import Repository

log = logging.getLogger(__name__)

# Longest the timer loop sleeps without looking at the database, so deadlines
# set by another process sharing the database are noticed too: on a shared
# database, a process that dies (kill -9) leaves its open questions and daily
# posts to the others, who find them within SHARED_IDLE_SECONDS of their time.
MAX_IDLE_SECONDS = 30.0
SHARED_IDLE_SECONDS = 5.0
# How long shutdown waits for timed work in flight (closes, posts) to finish.
DRAIN_SECONDS = 10.0
# A close a tick started is still in flight for a while; a post due this long
# before the tick and still open was not closed (a failure): look again soon.
IN_HAND = timedelta(seconds=1)
# Shortest sleep between two ticks: deadlines closer together than this are
# closed by one tick (a tick reads every kind of timer, so one per deadline
# would cost a busy process more than the closes themselves).
MIN_SLEEP_SECONDS = 0.2
# The sweeps for work a crash or a failure left behind (stalled quizzes, reveals
# to retry, half-counted closes, cards not applied) run at most this often in
# the loop: a busy process ticks several times a second for its deadlines, and
# each sweep is a query of its own (on every process sharing the database).
SWEEP_SECONDS = 1.0


class Timers:
    def __init__(
        self,
        repository: Repository,
        clock: Clock,
        connections: Connections,
        jobs: Jobs,
        posting: Posting,
        live: LiveQuizzes,
        scheduler: Scheduler,
        study: Study,
        answer_writer: AnswerWriter,
        wakeup: Wakeup,
    ) -> None:
        self.repository = repository
        self.clock = clock
        self.connections = connections
        self.jobs = jobs
        self.posting = posting
        self.live = live
        self.scheduler = scheduler
        self.study = study
        self.answer_writer = answer_writer
        self._wake = wakeup
        self._stopping = False
        self.idle_seconds = SHARED_IDLE_SECONDS if repository.shared else MAX_IDLE_SECONDS
        # Alone on its database, a process takes every post as its own at once
        # (those a restart left behind included).
        self.handover = HANDOVER if repository.shared else timedelta(0)
        self._swept_at: datetime | None = None

    async def tick(self) -> None:
        """Do everything that is due and wait for it (tests step time this way;
        the timer loop starts the same work without waiting for it)."""
        await asyncio.gather(*await self.start_due_work())
        await self.scheduler.settle()

    async def start_due_work(self, *, sweep: bool = True) -> list[asyncio.Task[None]]:
        """Start every due close, delivery retry and schedule and, with `sweep`,
        every reveal retry, stalled quiz, half-counted close and card update,
        each in its own task: one channel's hanging call never holds up another
        channel. Work already running is not started twice."""
        now = self.clock.now()
        platforms = self.connections.platforms_here()
        posts = self.repository.posts
        # Look everything up before starting anything, so work started now
        # cannot make a quiz look stalled half-way through closing a question.
        stalled = (
            await self.repository.quizzes.stalled_quizzes(now - self.handover) if sweep else []
        )
        due = await posts.due_posts(now, self.handover)
        unrevealed = (
            await posts.unrevealed_posts(
                now - REVEAL_RETRY_WINDOW, now - REVEAL_LEASE, now - self.handover
            )
            if sweep
            else []
        )
        undelivered = await posts.due_publishes(now, platforms)
        jobs, live = self.jobs, self.live
        tasks = [
            jobs.start(("reveal", p), partial(self.posting.reveal_again, p)) for p in unrevealed
        ]
        # A quiz's closes, retries and next questions share one key: one at a time.
        tasks += [jobs.start(_job_key(p, q), partial(live.close_post, p)) for p, q in due]
        tasks += [
            jobs.start(_job_key(p, q), partial(self._retry_delivery, p, q)) for p, q in undelivered
        ]
        tasks += [jobs.start(("quiz", q), partial(live.advance, q)) for q in stalled]
        if sweep:
            # Closes a crash left half counted, and review cards left unapplied
            # (the cards read the answers, not the boards, so neither waits).
            tasks.append(jobs.start(("closes",), self.posting.finish_unfinished))
            tasks.append(jobs.start(("cards",), self.study.apply_pending))
        # Due schedules are read and fired page by page as posts go out.
        tasks.append(self.scheduler.start_fan_out())
        return tasks

    async def _retry_delivery(self, post_id: int, quiz_id: int | None) -> None:
        if quiz_id is not None:
            await self.live.retry_delivery(post_id)
        else:
            await self.scheduler.retry_delivery(post_id)

    async def run(self) -> None:
        """Sleep until the next deadline (or a wake-up), then tick; until `shutdown`."""
        while not self._stopping:
            self._wake.planned = None  # awake: every wake-up counts
            self._wake.event.clear()
            timeout = self.idle_seconds
            try:
                ticked_at = self.clock.now()
                await self.start_due_work(sweep=self._sweep_due(ticked_at))
                upcoming = [
                    when
                    for when in (
                        # Not the posts this tick is closing: their jobs are in
                        # flight, and looking again before they end would only
                        # put off every close due meanwhile.
                        await self.repository.posts.next_deadline(
                            self.handover, (ticked_at - IN_HAND, ticked_at)
                        ),
                        await self.scheduler.next_fire(),
                        await self.repository.posts.next_publish_retry(
                            self.connections.platforms_here()
                        ),
                    )
                    if when is not None
                ]
                if upcoming:
                    deadline = min(upcoming)
                    if deadline <= ticked_at:
                        # Still due after a tick: its platform is not connected
                        # here yet, or a close due over IN_HAND ago failed or is
                        # slow; look again soon rather than spin.
                        timeout = 1.0
                    else:
                        # Came due while this tick ran: tick again after the
                        # shortest sleep.
                        wait = (deadline - self.clock.now()).total_seconds()
                        timeout = min(max(wait, MIN_SLEEP_SECONDS), self.idle_seconds)
            except Exception:
                log.exception("timer tick failed; retrying")
                timeout = 1.0
            if not self._stopping:
                self._wake.planned = self.clock.now() + timedelta(seconds=timeout)
                await self.clock.wait(self._wake.event, timeout)

    def _sweep_due(self, now: datetime) -> bool:
        """Whether this tick of the loop sweeps (see SWEEP_SECONDS)."""
        last = self._swept_at
        if last is not None and last <= now < last + timedelta(seconds=SWEEP_SECONDS):
            return False
        self._swept_at = now
        return True

    def wake(self) -> None:
        """Look at the timers again now (a deadline or schedule changed)."""
        self._wake.event.set()

    def shutdown(self) -> None:
        self._stopping = True
        self._wake.event.set()

    async def drain(self, seconds: float = DRAIN_SECONDS) -> None:
        """After `shutdown`: let timed work in flight finish, then store every
        answer still queued, so nothing acknowledged is lost on the way out."""
        await self.jobs.drain(seconds)
        await self.answer_writer.drain()


def _job_key(post_id: int, quiz_id: int | None) -> tuple[str, int]:
    return ("quiz", quiz_id) if quiz_id is not None else ("post", post_id)
