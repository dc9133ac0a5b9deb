"""What every use case shares, built once by the service: storage, the banks,
time, chance, the connected platforms, channel settings, the timer loop's
wake-up and the metrics."""

from __future__ import annotations

import asyncio
import random
from dataclasses import dataclass
from datetime import datetime

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
    wake: Wakeup  # a new deadline, retry or schedule: the timer loop looks again
    metrics: Metrics | None = None


class Wakeup:
    """The timer loop's wake-up: an event, and the moment the sleeping loop
    means to look next (`planned`). A new deadline after that moment need not
    wake it: a fan-out posting thousands of daily questions, each closing a
    day later, then does not make the loop read every timer again per post."""

    def __init__(self) -> None:
        self.event = asyncio.Event()
        self.planned: datetime | None = None  # None: awake, or until woken

    def __call__(self, at: datetime | None = None) -> None:
        """Wake the loop, unless `at` (the new deadline) is after its plan."""
        if at is not None and self.planned is not None and at >= self.planned:
            return
        self.event.set()
