"""Timed posts: the daily question and the weekly leaderboard, per channel.

A schedule stores the moderator's rule (local time, zone, days) and its next
fire time. Whoever claims a due schedule in the database (one conditional
UPDATE) posts it, so two bot processes on one database never both post, and a
restart knows what it missed.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from datetime import date, datetime, time, timedelta
from functools import partial

from bot.chat import Command, OutMessage, Target
from bot.domain.records import PostInfo, ScheduleInfo
from bot.domain.rules import LEADERBOARD_SIZE, Window, reading_seconds, shuffled_order, week_key
from bot.domain.schedule_rules import (
    DAY_NAMES,
    Rule,
    ScheduleError,
    catch_up,
    format_days,
    next_fire,
    parse_days,
    parse_time,
    parse_weekday,
    parse_zone,
)
from bot.quiz import texts
from bot.quiz.context import Context
from bot.quiz.delivery import PUBLISH_LEASE
from bot.quiz.jobs import Jobs
from bot.quiz.posting import Posting
from bot.quiz.scores import Scores
from bot.quiz.surface.options import SCHEDULE_BANK, SCHEDULE_TAG, TIME, TIMEZONE
from bot.quiz.surface.spec import CommandSpec, Kind, Option, Variant

log = logging.getLogger(__name__)

DAILY, LEADERBOARD = "daily", "leaderboard"
KINDS = (DAILY, LEADERBOARD)
# Each `/quiz schedule` action and the options it cannot do without.
ACTIONS: dict[str, tuple[str, ...]] = {
    DAILY: ("time",),
    LEADERBOARD: ("day", "time"),
    "show": (),
    "off": (),
}
ALL_DAYS = frozenset(range(7))
# A page of due schedules, and the moment it was read at.
Page = tuple[datetime, list[ScheduleInfo]]
# Due posts in flight at once; the adapters pace each platform's rate limits.
# Also the most slots claimed ahead of their sending (each is sent within its
# publish lease even at a platform's slowest pace).
CONCURRENT_POSTS = 50
# Due schedules read at a time by a fan-out; the next page is read while the
# posts of this one are still going out.
FAN_OUT_PAGE = 100
# Missed slots looked back over after downtime before giving up on catching up.
MAX_MISSED_SLOTS = 1000


class Scheduler:
    def __init__(
        self,
        ctx: Context,
        posting: Posting,
        scores: Scores,
        jobs: Jobs,
    ) -> None:
        self.ctx = ctx
        self.posting = posting
        self.scores = scores
        self.jobs = jobs
        self._slots = asyncio.Semaphore(CONCURRENT_POSTS)
        self._firing: set[asyncio.Task[None]] = set()  # schedules the fan-outs started
        self._counting: set[asyncio.Task[None]] = set()  # closes they count in the background

    # -- commands ------------------------------------------------------------------

    async def command(self, target: Target, user_id: str, args: Mapping[str, str]) -> OutMessage:
        """`/quiz schedule daily|leaderboard|show|off …`; the caller checked who may."""
        action = (args.get("action") or "show").lower()
        if action not in ACTIONS:
            return texts.settings.unknown_schedule_action(action)
        missing = [option for option in ACTIONS[action] if not args.get(option)]
        if missing:
            return texts.settings.schedule_needs(missing[0])
        try:
            if action == DAILY:
                return await self._set_daily(target, user_id, args)
            if action == LEADERBOARD:
                return await self._set_leaderboard(target, user_id, args)
            if action == "off":
                return await self._turn_off(target, args.get("which"))
        except ScheduleError as problem:
            return texts.settings.schedule_problem(str(problem))
        return await self.show(target)

    async def show(self, target: Target) -> OutMessage:
        channel = await self.ctx.channels.channel(target)
        found = await self.ctx.repository.schedules.schedules_of(channel.id)
        return texts.settings.schedule_list([self._view(schedule) for schedule in found], channel)

    async def _set_daily(self, target: Target, user_id: str, args: Mapping[str, str]) -> OutMessage:
        channel = await self.ctx.channels.channel(target)
        rule = Rule(
            at=parse_time(args["time"]),
            zone=parse_zone(args.get("timezone") or channel.timezone),
            days=parse_days(args["days"]) if args.get("days") else ALL_DAYS,
        )
        bank, tag = args.get("bank") or None, args.get("tag") or None
        if not self.ctx.questions.known_bank(bank):
            return texts.live.unknown_bank(bank or "", self.ctx.questions.bank_names())
        if not await self.ctx.questions.pool(target, bank, tag):
            return texts.live.no_questions(bank, tag)
        return await self._save(target, user_id, DAILY, rule, bank, tag)

    async def _set_leaderboard(
        self, target: Target, user_id: str, args: Mapping[str, str]
    ) -> OutMessage:
        channel = await self.ctx.channels.channel(target)
        rule = Rule(
            at=parse_time(args["time"]),
            zone=parse_zone(args.get("timezone") or channel.timezone),
            days=frozenset({parse_weekday(args["day"])}),
        )
        return await self._save(target, user_id, LEADERBOARD, rule, None, None)

    async def _save(
        self,
        target: Target,
        user_id: str,
        kind: str,
        rule: Rule,
        bank: str | None,
        tag: str | None,
    ) -> OutMessage:
        channel = await self.ctx.channels.channel(target)
        now = self.ctx.clock.now()
        view = texts.settings.ScheduleView(
            kind=kind,
            at_time=rule.at.strftime("%H:%M"),
            zone=rule.zone.key,
            days=format_days(rule.days),
            bank=bank,
            tag=tag,
            next_fire=next_fire(now, rule).astimezone(rule.zone),
        )
        await self.ctx.repository.schedules.set_schedule(
            channel.id,
            kind,
            at_time=view.at_time,
            zone=view.zone,
            days=sorted(rule.days),
            bank=bank,
            tag=tag,
            next_fire=view.next_fire,
            created_by=user_id,
            now=now,
        )
        self.ctx.wake()
        return texts.settings.schedule_saved(view)

    async def _turn_off(self, target: Target, which: str | None) -> OutMessage:
        kinds = list(KINDS) if not which or which.lower() in ("all", "both") else [which.lower()]
        if kinds[0] not in KINDS:
            return texts.settings.not_a_schedule(which or "")
        channel = await self.ctx.channels.channel(target)
        removed = await self.ctx.repository.schedules.delete_schedules(channel.id, kinds)
        return texts.settings.schedules_off(kinds, removed)

    def _view(self, schedule: ScheduleInfo) -> texts.settings.ScheduleView:
        zone = parse_zone(schedule.zone)
        return texts.settings.ScheduleView(
            kind=schedule.kind,
            at_time=schedule.at_time,
            zone=schedule.zone,
            days=format_days(frozenset(schedule.days)),
            bank=schedule.bank,
            tag=schedule.tag,
            next_fire=schedule.next_fire.astimezone(zone),
        )

    # -- timers -------------------------------------------------------------------

    async def next_fire(self) -> datetime | None:
        """When the earliest schedule this process can post is due."""
        return await self.ctx.repository.schedules.next_schedule_fire(
            self.ctx.connections.platforms_here()
        )

    def start_fan_out(self) -> asyncio.Task[None]:
        """Fire every due schedule (see `_fan_out`); a fan-out already running
        is not started twice. The task ends once the last due schedule has been
        started; `settle` waits for them all to finish."""
        return self.jobs.start(("fan-out",), self._fan_out)

    async def settle(self) -> None:
        """Wait for every schedule the fan-outs started, and the counting of
        the posts they closed (tests step time this way)."""
        while self._firing or self._counting:
            await asyncio.gather(*self._firing, *self._counting)

    def _count_in_background(self, post_id: int) -> None:
        """Count a closed post's answers in a job of its own (the timer loop
        drains them at shutdown; a crash leaves the post to its sweeps)."""
        task = self.jobs.start(("count", post_id), partial(self.posting.count_answers, post_id))
        self._counting.add(task)
        task.add_done_callback(self._counting.discard)

    async def _fan_out(self) -> None:
        """A bounded pipeline over the due schedules: each one is claimed, drawn,
        created and sent in its own task, at most CONCURRENT_POSTS at once, and
        the next page of due schedules is read while the current one is still
        in flight. So one schedule's database work overlaps others' sends, the
        platform always has the next post waiting, and no more than
        CONCURRENT_POSTS slots are ever claimed ahead of their sending."""
        platforms = self.ctx.connections.platforms_here()

        async def due_page(after: tuple[datetime, int] | None) -> Page:
            now = self.ctx.clock.now()
            found = await self.ctx.repository.schedules.due_schedules(
                now, platforms, limit=FAN_OUT_PAGE, after=after
            )
            return now, found

        now, page = await due_page(None)
        while page:
            # Read the next page while this one's schedules wait for slots, so
            # a freed slot is never left idle behind a query.
            following = (
                asyncio.ensure_future(due_page((page[-1].next_fire, page[-1].id)))
                if len(page) == FAN_OUT_PAGE
                else None
            )
            try:
                for schedule in page:
                    await self._slots.acquire()
                    self._fire_in_slot(schedule, now)
            except BaseException:
                if following is not None:
                    following.cancel()
                raise
            if following is None:
                return
            now, page = await following

    def _fire_in_slot(self, schedule: ScheduleInfo, now: datetime) -> None:
        """Start firing one schedule in the slot the caller acquired; the slot is
        freed when that work ends, however it ends."""
        key = ("schedule", schedule.id)
        if self.jobs.running(key):
            # Still at work from an earlier fan-out (a hanging call, say).
            self._slots.release()
            return
        task = self.jobs.start(key, partial(self._fire, schedule, now))
        self._firing.add(task)
        task.add_done_callback(self._fired)

    def _fired(self, task: asyncio.Task[None]) -> None:
        self._firing.discard(task)
        self._slots.release()

    async def _fire(self, schedule: ScheduleInfo, now: datetime) -> None:
        try:
            rule = _rule_of(schedule)
        except ScheduleError:
            log.error("schedule %s has a rule I cannot read; removing it", schedule.id)
            await self.ctx.repository.schedules.delete_schedules(
                schedule.channel.id, [schedule.kind]
            )
            return
        slot, following = _latest_slot(schedule.next_fire, now, rule)
        metrics = self.ctx.metrics
        if metrics is not None:
            lag = (self.ctx.clock.now() - schedule.next_fire).total_seconds()
            metrics.timer_lag.labels("schedule").observe(max(lag, 0.0))
        grace = timedelta(minutes=schedule.channel.grace_minutes)
        if schedule.kind == DAILY and catch_up(slot, now, grace):
            # Claimed together with creating the post (see `_post_daily`).
            await self._post_daily(schedule, (schedule.next_fire, following), slot + grace)
            return
        if not await self.ctx.repository.schedules.claim_schedule(
            schedule.id, schedule.next_fire, following
        ):
            return  # another process claimed it
        if not catch_up(slot, now, grace):
            log.info(
                "skipping %s in %s: due at %s, past the grace window",
                schedule.kind,
                schedule.channel.target,
                slot,
            )
            return
        await self._post_weekly(schedule, slot.astimezone(rule.zone).date())

    async def _post_daily(
        self, schedule: ScheduleInfo, claim: tuple[datetime, datetime], publish_by: datetime
    ) -> None:
        """Claim the slot, draw the question and create its post in one
        transaction, then send it. A passing failure is retried until
        `publish_by` (the end of the grace window); a crash after the claim
        leaves the post for the next start."""
        channel = schedule.channel
        language = await self.ctx.channels.language(channel.target)
        pool = await self.ctx.questions.pool(channel.target, schedule.bank, schedule.tag, language)
        if not pool:
            log.warning("no questions for the daily post in %s", channel.target)
            await self.ctx.repository.schedules.claim_schedule(schedule.id, *claim)
            return
        now = self.ctx.clock.now()
        made = await self.ctx.repository.schedules.post_daily(
            channel.id,
            pool,
            self.ctx.rng,
            self._layout,
            now=now,
            closes_at=now + timedelta(hours=channel.daily_window_hours),
            publish_by=max(publish_by, now),
            publish_lease=now + PUBLISH_LEASE,
            claim=(schedule.id, *claim),
            reading=self.reading_time if channel.reading_time else None,
        )
        if made is None:
            return  # another process claimed this slot
        # Today's question closed yesterday's in its transaction: reveal it
        # (with streaks), send today's, and count yesterday's answers in the
        # background, so this fan-out slot goes to the next channel.
        for older in made.older_closed:
            post = await self.posting.post(older)
            if post is not None:
                await self.posting.closed(post, now)
        if (await self.posting.deliver(made.post, None)).refused:
            # Never seen by anyone: it must not break (or extend) a streak.
            await self.ctx.repository.posts.discard_post(made.post.id)
        for older in made.older_closed:
            self._count_in_background(older)

    def reading_time(self, question_id: str) -> int:
        """Seconds to read a drawn question (its prompt and options)."""
        question = self.ctx.questions.question(question_id)
        return 0 if question is None else reading_seconds(question.prompt, *question.options)

    def _layout(self, question_id: str) -> tuple[list[int], int]:
        """A drawn question's shuffled option order and the slot of its answer."""
        question = self.ctx.questions.question(question_id)
        if question is None:  # the pool comes from these questions, which cached it
            raise LookupError(f"question {question_id} is not in the question banks")
        order = shuffled_order(len(question.options), self.ctx.rng)
        return order, order.index(question.answer_index)

    async def retry_delivery(self, post_id: int) -> None:
        """The timer loop's next try at a daily question not delivered yet."""
        post = await self.posting.claim_retry(post_id)
        if post is None:
            return
        outcome = await self.posting.give_up_if_late(post)
        if outcome is None:
            await self.close_older_dailies(post)
            outcome = await self.posting.deliver(post, None)
        if outcome.refused:
            await self.ctx.repository.posts.discard_post(post.id)

    async def close_older_dailies(self, post: PostInfo) -> None:
        """Today's daily question closes (and reveals) the channel's earlier ones."""
        for older in await self.ctx.repository.posts.open_daily_posts(
            post.channel_id, before=post.id
        ):
            await self.posting.close(older)

    async def _post_weekly(self, schedule: ScheduleInfo, local_day: date) -> None:
        target, zone = schedule.channel.target, parse_zone(schedule.zone)
        week_start = local_day - timedelta(days=local_day.weekday() + 7)
        window = Window(
            datetime.combine(week_start, time(0), zone),
            datetime.combine(week_start + timedelta(days=7), time(0), zone),
        )
        rows = await self.ctx.repository.scores.past_week_board(
            schedule.channel.id, week_key(week_start), LEADERBOARD_SIZE
        )
        leaders = await self.scores.streak_leaders(schedule.channel.id)
        scores = await self.ctx.repository.scores.question_scores(schedule.channel.id, window)
        hardest = min(scores, key=lambda s: (s.correct / s.answered, -s.answered), default=None)
        if hardest:
            await self.ctx.questions.ensure([hardest.question_id])
        question = self.ctx.questions.question(hardest.question_id) if hardest else None
        hard = (
            texts.boards.Hardest(question.prompt, hardest.correct, hardest.answered)
            if hardest and question
            else None
        )
        await self.ctx.channels.announce(
            target,
            "the weekly leaderboard",
            lambda dialect, names: texts.boards.weekly_leaderboard(
                rows, week_start, leaders, hard, dialect, names
            ),
            [row.user_id for row in rows] + [user for user, _ in leaders],
        )


def _rule_of(schedule: ScheduleInfo) -> Rule:
    return Rule(
        at=parse_time(schedule.at_time),
        zone=parse_zone(schedule.zone),
        days=frozenset(schedule.days),
    )


def _latest_slot(due: datetime, now: datetime, rule: Rule) -> tuple[datetime, datetime]:
    """The last slot at or before `now` (starting from the stored `due` one),
    and the first slot after `now`: after downtime only the latest missed slot
    may still be posted, and never more than once."""
    slot = due
    for _ in range(MAX_MISSED_SLOTS):
        following = next_fire(slot, rule)
        if following > now:
            return slot, following
        slot = following
    return slot, next_fire(now, rule)


async def _schedule(scheduler: Scheduler, command: Command) -> OutMessage:
    return await scheduler.command(command.target, command.user_id, command.args)


def _showing(args: Mapping[str, str]) -> bool:
    return args.get("action", "show").lower() in ("show", "")


DAYS = Option("days")
FULL_DAY_NAMES = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
DAY = Option(
    "day",
    Kind.CHOICE,
    required=True,
    choices=DAY_NAMES,
    aliases=FULL_DAY_NAMES,
    placeholder="day",
)
WHICH = Option("which", Kind.CHOICE, choices=("daily", "leaderboard"))
COMMANDS = (
    CommandSpec(
        "schedule",
        Scheduler,
        _schedule,
        (
            Variant(
                ("schedule", "daily"),
                (TIME, TIMEZONE, DAYS, SCHEDULE_BANK, SCHEDULE_TAG),
                {"action": DAILY},
            ),
            Variant(("schedule", "leaderboard"), (DAY, TIME, TIMEZONE), {"action": LEADERBOARD}),
            Variant(("schedule", "show"), fixed={"action": "show"}),
            Variant(("schedule", "off"), (WHICH,), {"action": "off"}),
        ),
        moderator=True,
        open_to_all=_showing,  # anyone may look at the schedule; changing it needs a moderator
        bare={"action": "show"},
    ),
)
