"""Leaderboards and statistics: `/quiz leaderboard`, `/quiz stats`, daily
streaks, and forgetting a member's answers."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from datetime import datetime

from bot.chat import Command, OutMessage, Target
from bot.clock import Clock
from bot.domain.rules import (
    LEADERBOARD_SIZE,
    STREAK_LEADERS,
    Period,
    Scope,
    period_key,
    zone_or_utc,
)
from bot.i18n import speaking
from bot.quiz import texts
from bot.quiz.channels import ChannelSettings
from bot.quiz.questions import Questions
from bot.quiz.study import Study
from bot.quiz.surface.spec import CommandSpec, Kind, Option, Variant
from bot.storage.scores import ScoreStore

SCOPE_WORDS = {
    "channel": Scope.CHANNEL,
    "server": Scope.COMMUNITY,
    "workspace": Scope.COMMUNITY,
    "community": Scope.COMMUNITY,
}


class Scores:
    def __init__(
        self,
        store: ScoreStore,
        channels: ChannelSettings,
        questions: Questions,
        clock: Clock,
        study: Study,
        forget_member: Callable[[str, str, datetime], Awaitable[int]],
    ) -> None:
        self.study = study
        # Every store that holds something of a member (Repository.forget_member).
        self.forget_member = forget_member
        self.store = store
        self.channels = channels
        self.questions = questions
        self.clock = clock

    async def leaderboard(self, target: Target, scope_word: str, period_word: str) -> OutMessage:
        scope = SCOPE_WORDS.get(scope_word.lower())
        if scope is None:
            return texts.common.not_one_of("scope", ("channel", "server"), scope_word)
        channel = await self.channels.channel(target)
        if period_word.lower() == "streaks":
            board = await self.store.streak_board(channel.id, LEADERBOARD_SIZE)
            streak_names = await self.channels.names(target, [user for user, _ in board])
            with speaking(await self.channels.language(target)):  # public: the channel's
                return texts.boards.streak_board(
                    board, self.channels.connections.dialect(target), streak_names
                )
        try:
            period = Period(period_word.lower())
        except ValueError:
            return texts.common.not_one_of(
                "period", ("week", "month", "all", "streaks"), period_word
            )
        rows = await self.store.leaderboard(
            platform=target.platform,
            community=target.community,
            channel_id=channel.id if scope is Scope.CHANNEL else None,
            period=period,
            key=period_key(period, self.clock.now(), zone_or_utc(channel.timezone)),
            limit=LEADERBOARD_SIZE,
        )
        names = await self.channels.names(target, [row.user_id for row in rows])
        with speaking(await self.channels.language(target)):  # public: the channel's language
            return texts.boards.leaderboard(
                rows, self.channels.connections.dialect(target), scope, period, names
            )

    async def stats_view(
        self, target: Target, user_id: str, *, own: bool = True
    ) -> texts.boards.StatsView:
        """What this community saw of the member: nothing from other servers or
        workspaces (a member of both must not show one to the other). Due
        reviews are the member's own, across communities: shown only to them."""
        # Four independent reads, side by side: one round trip's wait, not four.
        totals, channel, here, due = await asyncio.gather(
            self.store.community_totals(target.platform, target.community, user_id),
            self.channels.channel(target),
            self.store.member_streaks(target.platform, user_id, target.community),
            self.study.due_count(target.platform, user_id) if own else _nothing(),
        )
        current, best = here.get(channel.id, (0, 0))
        best_anywhere = max((other for _, other in here.values()), default=0)
        per_tag: dict[str, list[int]] = {}
        await self.questions.ensure(question_id for question_id, _, _ in totals.per_question)
        for question_id, answered, correct in totals.per_question:
            question = self.questions.question(question_id)
            for tag in question.tags if question else []:
                counts = per_tag.setdefault(tag, [0, 0])
                counts[0] += answered
                counts[1] += correct
        return texts.boards.StatsView(
            user_id=user_id,
            answered=totals.answered,
            correct=totals.correct,
            points=totals.points,
            streak=current,
            best_streak=best,
            best_streak_anywhere=best_anywhere,
            per_tag=[(tag, n, c) for tag, (n, c) in sorted(per_tag.items())],
            reviews_due=due,
        )

    async def stats(self, target: Target, user_id: str, *, own: bool = True) -> OutMessage:
        return texts.boards.stats(
            await self.stats_view(target, user_id, own=own),
            self.channels.connections.dialect(target),
        )

    async def current_streak(self, channel_id: int, user_id: str) -> int:
        """The member's daily streak in the channel now (feedback after a daily answer)."""
        return await self.store.streak(channel_id, user_id)

    async def streak_leaders(self, channel_id: int) -> list[tuple[str, int]]:
        return await self.store.streak_leaders(channel_id, STREAK_LEADERS)

    async def forget_user(self, platform: str, user_id: str) -> int:
        return await self.forget_member(platform, user_id, self.clock.now())


async def _leaderboard(scores: Scores, command: Command) -> OutMessage:
    args = command.args
    return await scores.leaderboard(
        command.target, args.get("scope", "channel"), args.get("period", "week")
    )


async def _stats(scores: Scores, command: Command) -> OutMessage:
    subject = command.args.get("user") or command.user_id
    return await scores.stats(command.target, subject, own=subject == command.user_id)


async def _forget_me(scores: Scores, command: Command) -> OutMessage:
    forgotten = await scores.forget_user(command.target.platform, command.user_id)
    return texts.boards.forgotten(forgotten)


SCOPE = Option(
    "scope", Kind.CHOICE, choices=("channel", "server"), aliases=("workspace", "community")
)
PERIOD = Option("period", Kind.CHOICE, choices=("week", "month", "all", "streaks"))
COMMANDS = (
    CommandSpec("leaderboard", Scores, _leaderboard, (Variant(("leaderboard",), (SCOPE, PERIOD)),)),
    CommandSpec("stats", Scores, _stats, (Variant(("stats",), (Option("user", Kind.MEMBER),)),)),
    CommandSpec("forget-me", Scores, _forget_me, (Variant(("forget-me",)),)),
)


async def _nothing() -> None:
    return None
