"""An in-process adapter that records what the bot says, for tests of the core.

Tests push commands and clicks in through the service and read structured
messages out, with no platform involved.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import count

from bot.chat import Command, DeliveryError, Interaction, MessageRef, OutMessage, Target


@dataclass
class Sent:
    target: Target
    message_id: str
    message: OutMessage
    edits: list[OutMessage] = field(default_factory=list)

    @property
    def latest(self) -> OutMessage:
        return self.edits[-1] if self.edits else self.message


class RecordingAdapter:
    def __init__(self, platform: str = "test") -> None:
        self.platform = platform
        self.sent: list[Sent] = []
        self.private: list[tuple[Command | Interaction, OutMessage]] = []
        self.failing_channels: set[str] = set()
        self._ids = count(1)

    @property
    def connected(self) -> bool:
        return True

    async def send(self, target: Target, message: OutMessage) -> MessageRef:
        if target.channel in self.failing_channels:
            raise DeliveryError(f"cannot post in {target.channel}", permanent=True)
        message_id = f"m{next(self._ids)}"
        self.sent.append(Sent(target, message_id, message))
        return MessageRef(target, message_id)

    async def edit(self, ref: MessageRef, message: OutMessage) -> None:
        for sent in self.sent:
            if sent.message_id == ref.message_id:
                sent.edits.append(message)
                return
        raise DeliveryError(f"unknown message {ref.message_id}")

    async def reply_private(self, event: Command | Interaction, message: OutMessage) -> None:
        self.private.append((event, message))

    # -- helpers for tests -------------------------------------------------------

    def in_channel(self, target: Target) -> list[Sent]:
        return [sent for sent in self.sent if sent.target == target]

    def questions(self, target: Target) -> list[Sent]:
        return [sent for sent in self.in_channel(target) if sent.message.buttons]

    def last_question(self, target: Target) -> Sent:
        found = self.questions(target)
        assert found, f"no question was posted in {target}"
        return found[-1]

    def button_id(self, target: Target, letter: str) -> str:
        for button in self.last_question(target).message.buttons:
            if button.label == letter:
                return button.custom_id
        raise AssertionError(f"no button {letter} on the last question")
