"""Team quizzes: who plays for which team, the points that deal the teams, and
the team board (kept with the quiz once it ends)."""

from __future__ import annotations

from dataclasses import asdict
from datetime import datetime

from sqlalchemy import func, or_, select, update

from bot.domain.records import TeamRow
from bot.storage.base import Store
from bot.storage.models import Answer, Post, Quiz, QuizTeamMember


class TeamStore(Store):
    async def members(self, quiz_id: int) -> dict[str, int]:
        async with self._reads() as session:
            rows = await session.execute(
                select(QuizTeamMember.user_id, QuizTeamMember.team).where(
                    QuizTeamMember.quiz_id == quiz_id
                )
            )
            return {user: int(team) for user, team in rows}

    async def join(self, quiz_id: int, user_id: str, team: int) -> int:
        """Put the member in `team` unless they are in one already; their team."""
        async with self._sessions.begin() as session:
            await session.execute(
                self._insert(QuizTeamMember)
                .values(quiz_id=quiz_id, user_id=user_id, team=team)
                .on_conflict_do_nothing()
            )
            found = await session.execute(
                select(QuizTeamMember.team).where(
                    QuizTeamMember.quiz_id == quiz_id, QuizTeamMember.user_id == user_id
                )
            )
            return int(found.scalar_one())

    async def recent_points(
        self, channel_id: int, since: datetime, quiz_id: int
    ) -> list[tuple[str, int]]:
        """Each member's points in the channel since `since`, leaving out this
        quiz's own answers, highest first (ties by member id)."""
        points = func.sum(Answer.points)
        rows = await self._read_rows(
            select(Answer.user_id, points)
            .join(Post, Post.id == Answer.post_id)
            .where(
                Answer.channel_id == channel_id,
                Answer.answered_at >= since,
                or_(Post.quiz_id.is_(None), Post.quiz_id != quiz_id),
            )
            .group_by(Answer.user_id)
            .order_by(points.desc(), Answer.user_id)
        )
        return [(user, int(total)) for user, total in rows]

    async def board(self, quiz_id: int, teams: int) -> list[TeamRow]:
        """Every team's members and points in the quiz, best average first."""
        total = func.coalesce(func.sum(Answer.points), 0)
        rows = await self._read_rows(
            select(QuizTeamMember.team, QuizTeamMember.user_id, total)
            .select_from(QuizTeamMember)
            .outerjoin(Post, Post.quiz_id == QuizTeamMember.quiz_id)
            .outerjoin(
                Answer,
                (Answer.post_id == Post.id) & (Answer.user_id == QuizTeamMember.user_id),
            )
            .where(QuizTeamMember.quiz_id == quiz_id)
            .group_by(QuizTeamMember.team, QuizTeamMember.user_id)
        )
        members = dict.fromkeys(range(1, teams + 1), 0)
        points = dict.fromkeys(range(1, teams + 1), 0)
        for team, _, earned in rows:
            members[int(team)] = members.get(int(team), 0) + 1
            points[int(team)] = points.get(int(team), 0) + int(earned)
        board = [TeamRow(team, members[team], points[team]) for team in members]
        return sorted(board, key=lambda row: (-row.average, row.team))

    async def keep_results(self, quiz_id: int, board: list[TeamRow]) -> None:
        async with self._sessions.begin() as session:
            await session.execute(
                update(Quiz)
                .where(Quiz.id == quiz_id)
                .values(team_results=[asdict(row) for row in board])
            )

    async def results(self, quiz_id: int) -> list[TeamRow] | None:
        async with self._reads() as session:
            found = await session.execute(select(Quiz.team_results).where(Quiz.id == quiz_id))
            kept = found.scalar_one_or_none()
            return None if kept is None else [TeamRow(**row) for row in kept]
