"""Member reports on questions, questions withdrawn from a community's draw,
and the reads of the item analysis (`question_analysis`) for /quiz health."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import delete, func, select

from bot.domain.item_analysis import ItemCounts
from bot.storage.base import Store, rowcount
from bot.storage.item_analysis import COUNT_COLUMNS, to_counts
from bot.storage.models import (
    Channel,
    Post,
    QuestionAnalysis,
    QuestionReport,
    ReviewSession,
    WithdrawnQuestion,
)
from bot.storage.sql import insert_for

OPEN = "open"


@dataclass(frozen=True)
class ReportInfo:
    id: int
    platform: str
    community: str
    channel: str
    question_id: str
    user_id: str
    reason: str
    text: str | None
    status: str
    created_at: datetime


def _info(row: QuestionReport) -> ReportInfo:
    return ReportInfo(
        row.id,
        row.platform,
        row.community,
        row.channel,
        row.question_id,
        row.user_id,
        row.reason,
        row.text,
        row.status,
        row.created_at,
    )


_ANALYSIS = QuestionAnalysis.__table__.c
_COUNTS = [_ANALYSIS[name] for name in COUNT_COLUMNS]


class ReportStore(Store):
    # -- reports ------------------------------------------------------------------

    async def post_question(self, post_id: int, platform: str, community: str) -> str | None:
        """The question a post of this community showed, once it has closed
        (reports are on revealed questions, in their own community)."""
        async with self._reads() as session:
            found = await session.execute(
                select(Post.question_id)
                .join(Channel, Channel.id == Post.channel_id)
                .where(
                    Post.id == post_id,
                    Post.closed_at.is_not(None),
                    Channel.platform == platform,
                    Channel.community == community,
                )
            )
            return found.scalar_one_or_none()

    async def card_question(
        self, session_id: int, step: int, platform: str, user_id: str
    ) -> str | None:
        """The question of the review card a member answered last, while its
        verdict is the latest (the session is still at `step`)."""
        async with self._reads() as session:
            found = await session.execute(
                select(ReviewSession.last_question_id).where(
                    ReviewSession.id == session_id,
                    ReviewSession.step == step,
                    ReviewSession.platform == platform,
                    ReviewSession.user_id == user_id,
                )
            )
            return found.scalar_one_or_none()

    async def report(
        self,
        *,
        platform: str,
        community: str,
        channel: str,
        question_id: str,
        user_id: str,
        reason: str,
        text: str | None,
        now: datetime,
        limit: int,
    ) -> int | None:
        """Store an open report; None when the member has `limit` open already
        (counted in the same transaction, so two quick forms cannot pass it)."""
        async with self._sessions.begin() as session:
            held = await session.execute(
                select(func.count())
                .select_from(QuestionReport)
                .where(
                    QuestionReport.platform == platform,
                    QuestionReport.community == community,
                    QuestionReport.user_id == user_id,
                    QuestionReport.status == OPEN,
                )
            )
            if int(held.scalar_one()) >= limit:
                return None
            row = QuestionReport(
                platform=platform,
                community=community,
                channel=channel,
                question_id=question_id,
                user_id=user_id,
                reason=reason,
                text=text,
                status=OPEN,
                created_at=now,
            )
            session.add(row)
            await session.flush()
            return row.id

    async def oldest_open(
        self, platform: str, community: str, after: int | None = None
    ) -> tuple[ReportInfo | None, int]:
        """The oldest open report (after a skipped one), and how many are open."""
        where = (
            QuestionReport.platform == platform,
            QuestionReport.community == community,
            QuestionReport.status == OPEN,
        )
        async with self._reads() as session:
            query = select(QuestionReport).where(*where).order_by(QuestionReport.id).limit(1)
            if after is not None:
                query = query.where(QuestionReport.id > after)
            found = (await session.execute(query)).scalar_one_or_none()
            total = await session.execute(
                select(func.count()).select_from(QuestionReport).where(*where)
            )
            return (_info(found) if found else None), int(total.scalar_one())

    async def resolve(
        self, platform: str, community: str, report_id: int, status: str, by: str, now: datetime
    ) -> ReportInfo | None:
        """Close an open report (once: a second click finds it closed);
        `removed` also withdraws its question from the community's draw."""
        async with self._sessions.begin() as session:
            row = await session.get(QuestionReport, report_id)
            if (
                row is None
                or row.platform != platform
                or row.community != community
                or row.status != OPEN
            ):
                return None
            row.status, row.resolved_by, row.resolved_at = status, by, now
            if status == "removed":
                await session.execute(
                    insert_for(self._dialect, WithdrawnQuestion)
                    .values(
                        platform=platform,
                        community=community,
                        question_id=row.question_id,
                        withdrawn_by=by,
                        withdrawn_at=now,
                    )
                    .on_conflict_do_nothing()
                )
            return _info(row)

    async def open_reports(self, platform: str, community: str) -> dict[str, int]:
        """Open reports per question in a community."""
        rows = await self._read_rows(
            select(QuestionReport.question_id, func.count())
            .where(
                QuestionReport.platform == platform,
                QuestionReport.community == community,
                QuestionReport.status == OPEN,
            )
            .group_by(QuestionReport.question_id)
        )
        return {question_id: int(count) for question_id, count in rows}

    async def forget_reporter(self, platform: str, user_id: str) -> None:
        async with self._sessions.begin() as session:
            await session.execute(
                delete(QuestionReport).where(
                    QuestionReport.platform == platform, QuestionReport.user_id == user_id
                )
            )

    # -- withdrawn questions ----------------------------------------------------------

    async def withdrawn(self, platform: str, community: str) -> set[str]:
        rows = await self._read_rows(
            select(WithdrawnQuestion.question_id).where(
                WithdrawnQuestion.platform == platform, WithdrawnQuestion.community == community
            )
        )
        return {question_id for (question_id,) in rows}

    async def restore(self, platform: str, community: str, question_id: str) -> bool:
        async with self._sessions.begin() as session:
            done = await session.execute(
                delete(WithdrawnQuestion).where(
                    WithdrawnQuestion.platform == platform,
                    WithdrawnQuestion.community == community,
                    WithdrawnQuestion.question_id == question_id,
                )
            )
            return bool(rowcount(done))

    # -- the analysis ---------------------------------------------------------------------

    async def analysis(self, platform: str, community: str, question_id: str) -> ItemCounts | None:
        rows = await self._read_rows(
            select(*_COUNTS).where(
                _ANALYSIS.platform == platform,
                _ANALYSIS.community == community,
                _ANALYSIS.question_id == question_id,
            )
        )
        return to_counts(rows[0]) if rows else None

    async def worst(
        self, platform: str, community: str, limit: int, also: Sequence[str] = ()
    ) -> dict[str, ItemCounts]:
        """The `limit` questions whose stored flags are worst (by the severity
        index), and the analysis of the questions in `also` (reported ones)."""
        where = (_ANALYSIS.platform == platform, _ANALYSIS.community == community)
        rows = list(
            await self._read_rows(
                select(_ANALYSIS.question_id, *_COUNTS)
                .where(*where, _ANALYSIS.severity > 0)
                .order_by(_ANALYSIS.severity.desc(), _ANALYSIS.question_id)
                .limit(limit)
            )
        )
        if also:
            rows += await self._read_rows(
                select(_ANALYSIS.question_id, *_COUNTS).where(
                    *where, _ANALYSIS.question_id.in_(list(also))
                )
            )
        return {row[0]: to_counts(row[1:]) for row in rows}

    async def analyses(
        self, platform: str, community: str, min_answers: int = 0
    ) -> dict[str, ItemCounts]:
        """Every question's analysis in a community (with at least `min_answers`)."""
        rows = await self._read_rows(
            select(_ANALYSIS.question_id, *_COUNTS).where(
                _ANALYSIS.platform == platform,
                _ANALYSIS.community == community,
                _ANALYSIS.answered >= min_answers,
            )
        )
        return {row[0]: to_counts(row[1:]) for row in rows}
