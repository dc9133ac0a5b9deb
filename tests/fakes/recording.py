"""An in-process adapter that records what the bot says, for tests of the core.

Tests push commands and clicks in through the service and read structured
messages out, with no platform involved.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from itertools import count

from bot.chat import Command, DeliveryError, Interaction, MessageRef, OutMessage, Target
from bot.dialect import PLAIN, Dialect


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
    def __init__(
        self,
        platform: str = "test",
        *,
        first_id: int = 1,
        earlier: Iterable[str] = (),
        dialect: Dialect = PLAIN,
    ) -> None:
        """`earlier`: ids of messages a previous process posted, which still exist
        on the platform and can be edited; `first_id` keeps new ids unique;
        `dialect`: how the core writes for this platform (plain by default)."""
        self.platform = platform
        self.dialect = dialect
        self.sent: list[Sent] = []
        self.private: list[tuple[Command | Interaction, OutMessage]] = []
        # Direct messages to members: (where they last used the bot, member, message).
        self.direct: list[tuple[Target, str, OutMessage]] = []
        self.failing_channels: set[str] = set()
        # Errors the next edits raise, one each, before edits work again.
        self.edit_failures: list[Exception] = []
        # Every edit this adapter made, in order, including edits of earlier messages.
        self.edits: list[tuple[MessageRef, OutMessage]] = []
        self.connected_now = True
        # Decides, per post, whether it fails (and how): for injecting passing
        # failures into some posts. None lets the post through.
        self.send_fault: Callable[[Target, OutMessage], Exception | None] = lambda *_: None
        # Posts and edits in these channels hang until `released` is set.
        self.hanging_channels: set[str] = set()
        self.released = asyncio.Event()
        self.hung = 0  # calls that are waiting for `released` now
        # Edits wait for this gate first, when set (to hold an edit mid-flight).
        self.edit_gate: asyncio.Event | None = None
        # Posts wait for this gate, while it is set (to hold posts mid-flight);
        # `held_sends` counts those waiting, and `more_held` is set as each arrives.
        self.send_gate: asyncio.Event | None = None
        self.held_sends = 0
        self.more_held = asyncio.Event()
        self._earlier = set(earlier)
        self._first_id = first_id
        self._ids = count(first_id)

    def restarted(self) -> RecordingAdapter:
        """The adapter of a new process on the same platform: the messages this
        one posted are still there (and editable), new ids do not collide."""
        earlier = self._earlier | {sent.message_id for sent in self.sent}
        return RecordingAdapter(
            self.platform,
            first_id=self._first_id + len(self.sent),
            earlier=earlier,
            dialect=self.dialect,
        )

    @property
    def connected(self) -> bool:
        return self.connected_now

    async def send(self, target: Target, message: OutMessage) -> MessageRef:
        if target.channel in self.failing_channels:
            raise DeliveryError(f"cannot post in {target.channel}", permanent=True)
        if target.channel in self.hanging_channels:
            await self._hang()
        if self.send_gate is not None:
            await self._held_at(self.send_gate)
        fault = self.send_fault(target, message)
        if fault is not None:
            raise fault
        message_id = f"m{next(self._ids)}"
        self.sent.append(Sent(target, message_id, message))
        return MessageRef(target, message_id)

    async def edit(self, ref: MessageRef, message: OutMessage) -> None:
        if ref.target.channel in self.hanging_channels:
            await self._hang()
        if self.edit_gate is not None:
            gate, self.edit_gate = self.edit_gate, None
            await gate.wait()
        if self.edit_failures:
            raise self.edit_failures.pop(0)
        for sent in self.sent:
            if sent.message_id == ref.message_id:
                sent.edits.append(message)
                self.edits.append((ref, message))
                return
        if ref.message_id in self._earlier:
            self.edits.append((ref, message))
            return
        raise DeliveryError(f"unknown message {ref.message_id}")

    async def _held_at(self, gate: asyncio.Event) -> None:
        self.held_sends += 1
        self.more_held.set()
        try:
            await gate.wait()
        finally:
            self.held_sends -= 1

    async def _hang(self) -> None:
        self.hung += 1
        try:
            await self.released.wait()
        finally:
            self.hung -= 1

    async def reply_private(self, event: Command | Interaction, message: OutMessage) -> None:
        self.private.append((event, message))

    async def display_names(self, target: Target, user_ids: Sequence[str]) -> dict[str, str]:
        return {user_id: f"Member {user_id}" for user_id in user_ids}

    async def send_direct(self, target: Target, user_id: str, message: OutMessage) -> None:
        self.direct.append((target, user_id, message))

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

    def edits_of(self, message_id: str) -> list[OutMessage]:
        """What this adapter changed the message `message_id` to, oldest first."""
        return [message for ref, message in self.edits if ref.message_id == message_id]
