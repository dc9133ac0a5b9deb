"""What every use case shares, built once by the service: storage, the banks,
time, chance, the connected platforms, channel settings, the timer loop's
wake-up and the metrics."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

from bot.clock import Clock
from bot.metrics import Metrics
from bot.quiz.channels import ChannelSettings
from bot.quiz.connections import Connections
from bot.quiz.questions import Questions
from bot.storage.repository import Repository


@dataclass(frozen=True)
class Context:
    repository: Repository
    questions: Questions
    clock: Clock
    rng: random.Random
    connections: Connections
    channels: ChannelSettings
    wake: Callable[[], None]  # a new deadline, retry or schedule: the timer loop looks again
    metrics: Metrics | None = None
