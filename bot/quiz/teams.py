"""Team quizzes: dealing members into teams on their first answer.

The rule: the channel's members are ranked by their points here over the last
30 days (highest first, ties by member id) and dealt round-robin, the first to
Team 1, the second to Team 2, and so on. A member joins on their first answer:
into their dealt team if it is one of the smallest at that moment, else into
the smallest team (the lowest number among equals), so team sizes never differ
by more than one. Members who join mid-quiz, or have no recent points, go to
the smallest team."""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from datetime import timedelta

from bot.domain.records import PostInfo
from bot.domain.rules import TEAM_HISTORY_DAYS
from bot.quiz import texts
from bot.quiz.context import Context

QUIZZES_KEPT = 1_000  # team quizzes whose rosters stay in memory


def dealt(ranked: list[str], teams: int) -> dict[str, int]:
    """Round-robin on the ranked list: member → team (1-based)."""
    return {user: index % teams + 1 for index, user in enumerate(ranked)}


def choose_team(sizes: dict[int, int], planned: int | None) -> int:
    """The planned team if it is one of the smallest, else the smallest (lowest number)."""
    smallest = min(sizes.values())
    if planned is not None and sizes.get(planned) == smallest:
        return planned
    return min(team for team, size in sizes.items() if size == smallest)


class Teams:
    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self._rosters: OrderedDict[int, dict[str, int]] = OrderedDict()
        self._plans: dict[int, dict[str, int]] = {}
        self._locks: dict[int, asyncio.Lock] = {}

    async def joined(self, post: PostInfo, user_id: str) -> str:
        """Put a member who answered in a team, if this is a team quiz and they
        have none yet; the line that tells them (empty when nothing changed)."""
        if post.teams is None or post.quiz_id is None:
            return ""
        quiz_id = post.quiz_id
        roster = self._rosters.get(quiz_id)
        if roster is not None and user_id in roster:
            return ""
        # One member at a time per quiz, so two first answers see each other's team.
        async with self._locks.setdefault(quiz_id, asyncio.Lock()):
            roster = await self._roster(quiz_id)
            if user_id in roster:
                return ""
            sizes = dict.fromkeys(range(1, post.teams + 1), 0)
            for team in roster.values():
                sizes[team] = sizes.get(team, 0) + 1
            planned = None
            if post.sequence == 1:  # after that, a newcomer joins mid-quiz
                planned = (await self._plan(post)).get(user_id)
            team = await self.ctx.repository.teams.join(
                quiz_id, user_id, choose_team(sizes, planned)
            )
            roster[user_id] = team
        return texts.teams.your_team(team, post.teams)

    async def _roster(self, quiz_id: int) -> dict[str, int]:
        roster = self._rosters.get(quiz_id)
        if roster is None:
            roster = await self.ctx.repository.teams.members(quiz_id)
            self._rosters[quiz_id] = roster
            while len(self._rosters) > QUIZZES_KEPT:
                dropped, _ = self._rosters.popitem(last=False)
                self._plans.pop(dropped, None)
                self._locks.pop(dropped, None)
        return roster

    async def _plan(self, post: PostInfo) -> dict[str, int]:
        assert post.quiz_id is not None and post.teams is not None
        plan = self._plans.get(post.quiz_id)
        if plan is None:
            since = self.ctx.clock.now() - timedelta(days=TEAM_HISTORY_DAYS)
            ranked = await self.ctx.repository.teams.recent_points(
                post.channel_id, since, post.quiz_id
            )
            plan = self._plans[post.quiz_id] = dealt([user for user, _ in ranked], post.teams)
        return plan
