"""What each dashboard page shows, assembled from the read models: plain data
for the templates. Only closed questions appear (the close transaction counts
answers), so a page never tells anyone how an open question is going."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from datetime import date

from bot.chat import Target
from bot.domain.records import ChannelInfo, RankRow
from bot.domain.rules import (
    LEADERBOARD_SIZE,
    Period,
    period_key,
    period_window,
    zone_or_utc,
)
from bot.i18n import N_, t
from bot.quiz import texts
from bot.quiz.bank import LETTERS
from bot.quiz.service import QuizService
from bot.web import charts

log = logging.getLogger(__name__)

BOARD_PERIODS = ("week", "month", "all", "streaks")
QUESTION_PERIODS = ("week", "month", "all")
PERIOD_TITLES = {
    "week": N_("This week"),
    "month": N_("This month"),
    "all": N_("All time"),
    "streaks": N_("Daily streaks"),
}
HARDEST = 10
# A question needs this many answers in the period to count among the hardest.
HARDEST_MIN_ANSWERS = 3
NAME_SECONDS = 2.0
NAME_TTL = 600.0
NAME_CACHE_SIZE = 20_000

# Due reviews for a member (platform, community, member) → count. The member
# page shows its section only when one is given (`due_reviews` in a running bot).
ReviewCounts = Callable[[str, str, str], Awaitable[int | None]]


def due_reviews(service: QuizService) -> ReviewCounts:
    """The study loop's due cards of a member (cards are per platform, so the
    community does not narrow them)."""

    async def count(platform: str, community: str, user_id: str) -> int | None:
        return await service.repository.cards.due_count(platform, user_id, service.clock.now())

    return count


@dataclass(frozen=True)
class BoardRow:
    rank: int
    name: str
    points: int
    correct: int
    answered: int
    current: int = 0  # streak boards
    best: int = 0


@dataclass(frozen=True)
class Board:
    title: str
    rows: list[BoardRow]
    streaks: bool = False


@dataclass(frozen=True)
class CommunityPage:
    period: str
    community_board: Board | None
    chart: charts.BarChart | None
    channels: list[Board]


@dataclass(frozen=True)
class QuestionLine:
    question_id: str
    prompt: str
    tags: list[str]
    answered: int
    correct: int
    share: float
    split: charts.VoteSplit
    options: list[tuple[str, str, int, bool]]  # letter, text, votes, right
    flags: list[str] = field(default_factory=list)  # question health's, worst first


@dataclass(frozen=True)
class QuestionHealthPage:
    """One question's item analysis: its numbers, flags and the option shares by group."""

    question_id: str
    prompt: str
    summary: list[str]
    flags: list[tuple[str, str]]  # flag, reason
    chart: charts.BarChart | None
    options: list[tuple[str, str, bool]]  # letter, text, right


@dataclass(frozen=True)
class QuestionsPage:
    period: str
    posts: int
    answered: int
    correct: int
    questions: list[QuestionLine]
    hardest: list[QuestionLine]
    tag_chart: charts.BarChart | None
    hardest_chart: charts.BarChart | None

    @property
    def share(self) -> float:
        return self.correct / self.answered if self.answered else 0.0


@dataclass(frozen=True)
class StreakLine:
    channel: str
    current: int
    best: int


@dataclass(frozen=True)
class MemberPage:
    name: str
    answered: int
    correct: int
    points: int
    points_chart: charts.LineChart | None
    tag_chart: charts.BarChart | None
    tags: list[tuple[str, int, int]]
    streaks: list[StreakLine]
    due_reviews: int | None = None
    reviews_enabled: bool = False
    days_active: int = 0

    @property
    def share(self) -> float:
        return self.correct / self.answered if self.answered else 0.0


@dataclass
class _NameCache:
    """Display names looked up on the platform, kept a while: a page shows the
    same members again and again, and each look-up may be a platform call."""

    names: dict[tuple[str, str], tuple[float, str]] = field(default_factory=dict)

    def get(self, platform: str, user_id: str) -> str | None:
        found = self.names.get((platform, user_id))
        if found is None or found[0] < time.monotonic():
            return None
        return found[1]

    def put(self, platform: str, user_id: str, name: str) -> None:
        if len(self.names) >= NAME_CACHE_SIZE:
            self.names.clear()  # rare; simpler than an LRU for a page cache
        self.names[(platform, user_id)] = (time.monotonic() + NAME_TTL, name)


class DashboardViews:
    def __init__(self, service: QuizService, reviews: ReviewCounts | None = None) -> None:
        self.service = service
        self.reviews = reviews
        self._names = _NameCache()

    # -- the community ---------------------------------------------------------------

    async def community(self, platform: str, community: str, period: str) -> CommunityPage:
        store = self.service.repository.dashboard
        channels = await store.community_channels(platform, community)
        target = Target(platform, community, _any_channel(channels))
        if period == "streaks":
            streaks = await store.streak_boards([c.id for c in channels], LEADERBOARD_SIZE)
            users = [user for rows in streaks.values() for user, _, _ in rows]
            names = await self.names(target, users)
            streak_boards = [
                Board(
                    _channel_title(channel),
                    [
                        BoardRow(rank, names[user], 0, 0, 0, current, best)
                        for rank, (user, current, best) in enumerate(streaks[channel.id], 1)
                    ],
                    streaks=True,
                )
                for channel in channels
            ]
            return CommunityPage(period, None, None, streak_boards)
        chosen = Period(period)
        now = self.service.clock.now()
        # Each channel's week and month in its own zone, as in chat; the
        # community's in UTC (its rows add up each channel's own periods).
        keys = {c.id: period_key(chosen, now, zone_or_utc(c.timezone)) for c in channels}
        wide, per_channel = await store.boards(
            platform,
            community,
            chosen,
            keys,
            period_key(chosen, now, zone_or_utc("UTC")),
            LEADERBOARD_SIZE,
        )
        users = [row.user_id for rows in (wide, *per_channel.values()) for row in rows]
        names = await self.names(target, users)
        top = _rank_rows(wide, names)
        chart = charts.bar_chart(
            t("Points of the top ten"), [(row.name, row.points, f"{row.points:,}") for row in top]
        )
        boards = [
            Board(_channel_title(channel), _rank_rows(per_channel[channel.id], names))
            for channel in channels
        ]
        title = t("The whole community · {period}", period=t(PERIOD_TITLES[period]))
        return CommunityPage(period, Board(title, top), chart, boards)

    # -- the questions ---------------------------------------------------------------

    async def questions(self, platform: str, community: str, period: str) -> QuestionsPage:
        now = self.service.clock.now()
        since = period_window(Period(period), now, zone_or_utc("UTC")).start
        rows = await self.service.repository.dashboard.question_votes(platform, community, since)
        # Community questions too, not only the bank files' (as /quiz stats reads them).
        questions = self.service.questions
        await questions.ensure(row.question_id for row in rows)
        flagged = await self._flags(platform, community)
        lines: list[QuestionLine] = []
        per_tag: dict[str, list[int]] = {}
        for row in rows:
            question_id, answered, correct = row.question_id, row.answered, row.correct
            question = questions.question(question_id)
            if question is None or answered == 0:
                continue  # a question no longer in any bank has no text to show
            votes = list(row.options[: len(question.options)])
            options = [
                (LETTERS[i], text, votes[i], i == question.answer_index)
                for i, text in enumerate(question.options)
            ]
            lines.append(
                QuestionLine(
                    question_id,
                    question.prompt,
                    list(question.tags),
                    answered,
                    correct,
                    correct / answered,
                    charts.vote_split(votes, question.answer_index, LETTERS),
                    options,
                    flagged.get(question_id, []),
                )
            )
            for tag in question.tags:
                tally = per_tag.setdefault(tag, [0, 0])
                tally[0] += answered
                tally[1] += correct
        lines.sort(key=lambda line: (line.share, -line.answered, line.question_id))
        hardest = [line for line in lines if line.answered >= HARDEST_MIN_ANSWERS][:HARDEST]
        tag_rows = sorted(per_tag.items(), key=lambda item: (item[1][1] / item[1][0], item[0]))
        tag_chart = None
        if tag_rows:
            tag_chart = charts.bar_chart(
                t("Share answered right, per tag"),
                [(tag, c / n, f"{c / n:.0%}") for tag, (n, c) in tag_rows],
                full=1.0,
                tones=[charts.share_tone(c / n) for _, (n, c) in tag_rows],
            )
        hardest_chart = None
        if hardest:
            hardest_chart = charts.bar_chart(
                t("Hardest questions: share answered right"),
                # Labelled by id: the list under the charts gives each prompt in full.
                [(line.question_id, line.share, f"{line.share:.0%}") for line in hardest],
                full=1.0,
                tones=[charts.share_tone(line.share) for line in hardest],
            )
        return QuestionsPage(
            period,
            sum(row.posts for row in rows),
            # Every answer counts in the totals, as on the leaderboards, even one
            # to a question whose text is gone (it has no line of its own).
            sum(row.answered for row in rows),
            sum(row.correct for row in rows),
            sorted(lines, key=lambda line: line.question_id),
            hardest,
            tag_chart,
            hardest_chart,
        )

    async def _flags(self, platform: str, community: str) -> dict[str, list[str]]:
        """Each flagged question's flags (all time: flags judge the question)."""
        judged = await self.service.health.every_question(platform, community)
        return {
            item.question_id: [texts.health.flag_name(f) for f in item.found] for item in judged
        }

    async def question_health(
        self, platform: str, community: str, question_id: str
    ) -> QuestionHealthPage | None:
        question = self.service.catalog.question(question_id)
        if question is None:
            return None
        judged = await self.service.health.judge(Target(platform, community, ""), question_id)
        counts = judged.counts
        summary = [line for line in texts.health.analysis_summary(judged).splitlines()]
        summary = [line for line in summary if not line.startswith("⚑")]
        chart = None
        if counts is not None and counts.answered:
            rows: list[tuple[str, float, str]] = []
            tones: list[str] = []
            groups = (
                (t("all"), counts.votes, counts.answered),
                (t("strongest 27 %"), counts.upper_votes, counts.upper_answered),
                (t("weakest 27 %"), counts.lower_votes, counts.lower_answered),
            )
            for index in range(len(question.options)):
                letter = texts.health.option_label(question, index)
                for name, votes, total in groups:
                    share = votes[index] / total if total else 0.0
                    rows.append((f"{letter} · {name}", share, f"{share:.0%}" if total else "–"))
                    tones.append("good" if index == question.answer_index else "plain")
            chart = charts.bar_chart(
                t("Who chose each option: everyone, the strongest and the weakest 27 %"),
                rows,
                full=1.0,
                tones=tones,
            )
        return QuestionHealthPage(
            question_id,
            question.prompt,
            summary,
            [(texts.health.flag_name(f), texts.health.finding_reason(f)) for f in judged.found],
            chart,
            [
                (texts.health.option_label(question, i), text, i == question.answer_index)
                for i, text in enumerate(question.options)
            ],
        )

    # -- the member --------------------------------------------------------------------

    async def member(self, platform: str, community: str, user_id: str) -> MemberPage:
        repository = self.service.repository
        record = await repository.dashboard.member_record(platform, community, user_id)
        channels = await repository.dashboard.community_channels(platform, community)
        streaks = await repository.scores.member_streaks(platform, user_id)
        per_tag: dict[str, list[int]] = {}
        for question_id, answered, correct in record.per_question:
            question = self.service.catalog.question(question_id)
            for tag in question.tags if question else []:
                tally = per_tag.setdefault(tag, [0, 0])
                tally[0] += answered
                tally[1] += correct
        series: list[tuple[date, int]] = []
        running = 0
        for day, points in record.points_per_day:
            running += points
            series.append((day, running))
        tags = [(tag, n, c) for tag, (n, c) in sorted(per_tag.items())]
        tag_chart = None
        if tags:
            tag_chart = charts.bar_chart(
                t("Your share answered right, per tag"),
                [
                    (tag, c / n, t("{share} of {count}", share=f"{c / n:.0%}", count=n))
                    for tag, n, c in tags
                ],
                full=1.0,
                tones=[charts.share_tone(c / n) for _, n, c in tags],
            )
        here = {channel.id: channel for channel in channels}
        streak_lines = [
            StreakLine(_channel_title(here[channel_id]), current, best)
            for channel_id, (current, best) in sorted(streaks.items())
            if channel_id in here
        ]
        due = None
        if self.reviews is not None:
            due = await self.reviews(platform, community, user_id)
        names = await self.names(Target(platform, community, _any_channel(channels)), [user_id])
        return MemberPage(
            name=names.get(user_id, user_id),
            answered=sum(answered for _, answered, _ in record.per_question),
            correct=sum(correct for _, _, correct in record.per_question),
            points=running,
            points_chart=charts.line_chart(t("Your points over time"), series),
            tag_chart=tag_chart,
            tags=tags,
            streaks=streak_lines,
            due_reviews=due,
            reviews_enabled=self.reviews is not None,
            days_active=len(record.points_per_day),
        )

    # -- names ---------------------------------------------------------------------------

    async def names(self, target: Target, user_ids: Sequence[str]) -> dict[str, str]:
        """Display names where the platform is connected here, else the ids."""
        wanted = list(dict.fromkeys(user_ids))
        names = {user: self._names.get(target.platform, user) for user in wanted}
        missing = [user for user, name in names.items() if name is None]
        adapter = self.service.connections.get(target.platform)
        if missing and adapter is not None and adapter.connected and target.channel:
            try:
                async with asyncio.timeout(NAME_SECONDS):
                    found = await adapter.display_names(target, missing)
            except Exception:
                log.info("display names for the dashboard unavailable", exc_info=True)
                found = {}
            for user, name in found.items():
                self._names.put(target.platform, user, name)
                names[user] = name
        return {user: name or user for user, name in names.items()}


def _channel_title(channel: ChannelInfo) -> str:
    return f"#{channel.target.channel}"


def _any_channel(channels: Sequence[ChannelInfo]) -> str:
    return channels[0].target.channel if channels else ""


def _rank_rows(rows: Sequence[RankRow], names: dict[str, str]) -> list[BoardRow]:
    return [
        BoardRow(rank, names[row.user_id], row.points, row.correct, row.answered)
        for rank, row in enumerate(rows, 1)
    ]
