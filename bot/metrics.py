"""Prometheus metrics of one bot process (`GET /metrics`).

One registry per `Metrics` (per service), never the library's global one, so
two services in one test process count apart. Labels name platforms, command
names and error kinds only: never a member, channel or community id, which
would make a series per member."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from bot.chat import (
    Adapter,
    Command,
    DeliveryError,
    Interaction,
    MessageRef,
    OutMessage,
    Parted,
    ReadsBack,
    Target,
)

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
# Seconds; an answer write is a few ms, a slow disk or a busy PostgreSQL 100s of ms.
WRITE_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0)
# Seconds a due close or schedule ran after its time.
LAG_BUCKETS = (0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0)


def error_kind(error: DeliveryError) -> str:
    """permanent (retrying cannot help), 429 (rate limited) or transient."""
    if error.rate_limited:
        return "429"
    return "permanent" if error.permanent else "transient"


@dataclass(frozen=True)
class StateCounts:
    """Figures read from the database when /metrics is scraped."""

    open_questions: int
    schedules: dict[str, int]  # by kind


class Metrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        registry = self.registry
        self.clicks = Counter(
            "quizmaster_clicks", "Answer button clicks handled", ["platform"], registry=registry
        )
        self._clicks_by_platform: dict[str, Counter] = {}
        self.answers_stored = Counter(
            "quizmaster_answers_stored",
            "Answers stored (first answer of a member to an open question)",
            ["platform"],
            registry=registry,
        )
        self.commands = Counter(
            "quizmaster_commands",
            "/quiz commands handled",
            ["platform", "command"],
            registry=registry,
        )
        self.posts = Counter(
            "quizmaster_posts", "Messages posted to channels", ["platform"], registry=registry
        )
        self.edits = Counter(
            "quizmaster_edits", "Messages edited (reveals)", ["platform"], registry=registry
        )
        self.delivery_errors = Counter(
            "quizmaster_delivery_errors",
            "Posts and edits the platform refused or failed",
            ["platform", "kind"],
            registry=registry,
        )
        self.timer_lag = Histogram(
            "quizmaster_timer_lag_seconds",
            "How late a due close or schedule ran",
            ["job"],
            buckets=LAG_BUCKETS,
            registry=registry,
        )
        self.answer_write = Histogram(
            "quizmaster_answer_write_seconds",
            "Time to commit one batch of answers",
            buckets=WRITE_BUCKETS,
            registry=registry,
        )
        self.answer_batch = Histogram(
            "quizmaster_answer_batch_size",
            "Answers per committed batch",
            buckets=(1, 2, 5, 10, 25, 50, 100, 250, 500),
            registry=registry,
        )

    def command(self, command: Command, known: Iterable[str]) -> None:
        # An unknown word a member typed is not a label value of its own.
        name = command.name if command.name in known else "unknown"
        self.commands.labels(command.target.platform, name).inc()

    def click(self, interaction: Interaction) -> None:
        # Each click: the labelled child is kept per platform (a handful), as
        # `labels()` costs more than the increment (a tenth of a burst's CPU).
        platform = interaction.target.platform
        counter = self._clicks_by_platform.get(platform)
        if counter is None:
            counter = self._clicks_by_platform[platform] = self.clicks.labels(platform)
        counter.inc()

    def watch_state(
        self,
        adapters: Callable[[], dict[str, Adapter]],
    ) -> None:
        """Report each registered platform's connection state at scrape time."""
        self.registry.register(_ConnectionCollector(adapters))

    def exposition(self, state: StateCounts) -> bytes:
        """The text format, with the figures read from the database just now."""
        families = _state_families(state)
        collector = _FixedCollector(families)
        self.registry.register(collector)
        try:
            return generate_latest(self.registry)
        finally:
            self.registry.unregister(collector)


class _ConnectionCollector(Collector):
    def __init__(self, adapters: Callable[[], dict[str, Adapter]]) -> None:
        self.adapters = adapters

    def describe(self) -> list[GaugeMetricFamily]:
        return []  # read at scrape time only

    def collect(self) -> Iterable[GaugeMetricFamily]:
        family = GaugeMetricFamily(
            "quizmaster_platform_connected",
            "1 while the platform's connection is up, else 0",
            labels=["platform"],
        )
        parts = GaugeMetricFamily(
            "quizmaster_platform_part_connected",
            "1 while this piece of the platform's connection (a Discord shard) is up, else 0",
            labels=["platform", "part"],
        )
        for name, adapter in sorted(self.adapters().items()):
            family.add_metric([name], 1.0 if adapter.connected else 0.0)
            if isinstance(adapter, Parted):
                for part, up in adapter.parts.items():
                    parts.add_metric([name, part], 1.0 if up else 0.0)
        yield family
        yield parts


class _FixedCollector(Collector):
    def __init__(self, families: list[GaugeMetricFamily]) -> None:
        self.families = families

    def describe(self) -> list[GaugeMetricFamily]:
        return []

    def collect(self) -> Iterable[GaugeMetricFamily]:
        return self.families


def _state_families(state: StateCounts) -> list[GaugeMetricFamily]:
    open_questions = GaugeMetricFamily(
        "quizmaster_open_questions", "Questions posted and not closed yet"
    )
    open_questions.add_metric([], float(state.open_questions))
    schedules = GaugeMetricFamily("quizmaster_schedules", "Schedules set, by kind", labels=["kind"])
    for kind in ("daily", "leaderboard"):
        schedules.add_metric([kind], float(state.schedules.get(kind, 0)))
    return [open_questions, schedules]


class MeteredAdapter:
    """An adapter whose posts, edits and delivery errors are counted: every
    channel post of the core goes through `Connections`, which wraps each
    registered adapter in one of these."""

    def __init__(self, inner: Adapter, metrics: Metrics) -> None:
        self.inner = inner
        self.platform = inner.platform
        self.dialect = inner.dialect
        self._metrics = metrics

    @property
    def connected(self) -> bool:
        return self.inner.connected

    @property
    def parts(self) -> Mapping[str, bool]:
        return self.inner.parts if isinstance(self.inner, Parted) else {}

    async def send(self, target: Target, message: OutMessage) -> MessageRef:
        try:
            ref = await self.inner.send(target, message)
        except DeliveryError as error:
            self._failed(error)
            raise
        self._metrics.posts.labels(self.platform).inc()
        return ref

    async def edit(self, ref: MessageRef, message: OutMessage) -> None:
        try:
            await self.inner.edit(ref, message)
        except DeliveryError as error:
            self._failed(error)
            raise
        self._metrics.edits.labels(self.platform).inc()

    async def shows(self, ref: MessageRef, message: OutMessage) -> bool:
        # A platform that cannot read back never says a message is already shown.
        return isinstance(self.inner, ReadsBack) and await self.inner.shows(ref, message)

    async def reply_private(self, event: Command | Interaction, message: OutMessage) -> None:
        await self.inner.reply_private(event, message)

    async def display_names(self, target: Target, user_ids: Sequence[str]) -> dict[str, str]:
        return await self.inner.display_names(target, user_ids)

    async def send_direct(self, target: Target, user_id: str, message: OutMessage) -> None:
        # A direct message to one member: not a channel post, so not in `posts`.
        try:
            await self.inner.send_direct(target, user_id, message)
        except DeliveryError as error:
            self._failed(error)
            raise

    def _failed(self, error: DeliveryError) -> None:
        self._metrics.delivery_errors.labels(self.platform, error_kind(error)).inc()
