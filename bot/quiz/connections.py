"""The chat platforms this process is connected to, by platform name."""

from __future__ import annotations

from bot.chat import Adapter, Target
from bot.dialect import PLAIN, Dialect
from bot.metrics import MeteredAdapter, Metrics


class Connections:
    def __init__(self, metrics: Metrics | None = None) -> None:
        self.adapters: dict[str, Adapter] = {}
        self.metrics = metrics

    def register(self, adapter: Adapter) -> None:
        # Every post and edit of the core goes through here: counted once, in one place.
        if self.metrics is not None:
            adapter = MeteredAdapter(adapter, self.metrics)
        self.adapters[adapter.platform] = adapter

    def get(self, platform: str) -> Adapter | None:
        return self.adapters.get(platform)

    def dialect(self, target: Target) -> Dialect:
        """How texts for the target's channel are written: its platform's
        dialect, or the plain one where no adapter for it is registered here."""
        adapter = self.adapters.get(target.platform)
        return adapter.dialect if adapter is not None else PLAIN

    def serves(self, target: Target) -> bool:
        """Whether this process can post on the target's platform right now."""
        adapter = self.adapters.get(target.platform)
        return adapter is not None and adapter.connected

    def platforms_here(self) -> list[str]:
        """The platforms this process can post on right now."""
        return [name for name, adapter in self.adapters.items() if adapter.connected]
