"""The neutral chat model shared by the quiz core and every platform adapter.

Nothing here knows about Discord or Slack: adapters translate platform payloads
into these types and these types back into platform messages.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from enum import Enum
from typing import Protocol, runtime_checkable

from bot.dialect import Dialect


@dataclass(frozen=True)
class Target:
    """A channel on a platform, inside a community (Discord guild, Slack workspace)."""

    platform: str
    community: str
    channel: str


@dataclass(frozen=True)
class MessageRef:
    """A message the bot posted, as the platform identifies it."""

    target: Target
    message_id: str


class ButtonStyle(Enum):
    NEUTRAL = "neutral"
    SUCCESS = "success"
    DANGER = "danger"


@dataclass(frozen=True)
class Button:
    custom_id: str
    label: str
    style: ButtonStyle = ButtonStyle.NEUTRAL
    disabled: bool = False


@dataclass(frozen=True)
class Field:
    name: str
    value: str
    inline: bool = False


@dataclass(frozen=True)
class Image:
    """A picture shown with a message, and what it shows for screen readers."""

    url: str
    alt: str


@dataclass(frozen=True)
class Attachment:
    """A file that goes with a private reply (an Anki deck)."""

    filename: str
    data: bytes = field(repr=False)


@dataclass(frozen=True)
class FormField:
    """One text box of a form. `value` is what it shows already filled in."""

    key: str
    label: str
    value: str = ""
    multiline: bool = False
    required: bool = True
    max_length: int = 1000
    placeholder: str | None = None


@dataclass(frozen=True)
class Form:
    """A pop-up form (Discord modal, Slack modal view). `form_id` comes back with
    the submitted values and routes them, like a button's custom_id."""

    form_id: str
    title: str
    fields: tuple[FormField, ...]
    submit_label: str = "Submit"
    cancel_label: str = "Cancel"  # where the platform shows one (Slack)


@dataclass(frozen=True)
class OutMessage:
    """A message to show a person.

    `text` is the plain fallback (notifications, terminals, Slack's `text`);
    `title`, `body` and `fields` are the rich form. `deadline`, when set, is a
    moment the platform may render as a live countdown. `public` marks a reply
    to a command that the whole channel should see (a leaderboard), where
    adapters otherwise answer privately. `idempotency_key`: see below.
    """

    text: str
    title: str | None = None
    body: str = ""
    fields: tuple[Field, ...] = ()
    buttons: tuple[Button, ...] = ()
    footer: str | None = None
    deadline: datetime | None = None
    public: bool = False
    # The same for every try at delivering one post: a platform that can refuse
    # a duplicate (Discord's message nonce) uses it, so a retry after a timeout
    # or a crash never posts the question twice.
    idempotency_key: str | None = None
    # A file only the recipient may see: Discord attaches it to the private
    # reply, Slack sends it in a direct message, the terminal saves it.
    attachment: Attachment | None = None
    # Set on the answer to a command or click: the adapter opens this form
    # instead of replying (`text` is for a platform that has no forms).
    form: Form | None = None
    # A bank question's picture (Discord: the embed's image, Slack: an image
    # block, the terminal: its description and link).
    image: Image | None = None


# Asked with the channel's moderator role/group setting (None when unset):
# is the command's author a moderator there? Each adapter answers from its
# platform (permissions, roles, admins, user groups); the service decides
# which commands need it.
ModeratorCheck = Callable[[str | None], Awaitable[bool]]


@dataclass(frozen=True)
class Command:
    """A `/quiz <name> …` command, already parsed into named arguments."""

    name: str
    target: Target
    user_id: str
    is_moderator: bool = False
    args: dict[str, str] = field(default_factory=dict)
    display_name: str | None = None
    # When set, it replaces `is_moderator` (see ModeratorCheck).
    moderator_check: ModeratorCheck | None = None
    # The member's own language as the platform tells it (`es-ES`, `pt-BR`):
    # private replies use it; None or one we do not ship: the community's.
    locale: str | None = None

    async def by_moderator(self, moderator_role: str | None) -> bool:
        if self.moderator_check is not None:
            return await self.moderator_check(moderator_role)
        return self.is_moderator


@dataclass(frozen=True)
class Interaction:
    """A button click."""

    target: Target
    user_id: str
    custom_id: str
    display_name: str | None = None
    # The clicker's moderator test (review buttons); None: not a moderator.
    moderator_check: ModeratorCheck | None = None
    locale: str | None = None  # as on Command

    async def by_moderator(self, moderator_role: str | None) -> bool:
        return self.moderator_check is not None and await self.moderator_check(moderator_role)


@dataclass(frozen=True)
class FormSubmission:
    """A submitted form: its id and the value of each field by key."""

    target: Target
    user_id: str
    form_id: str
    values: dict[str, str]
    display_name: str | None = None
    moderator_check: ModeratorCheck | None = None
    # Slack shows problems beside the fields of a form that stays open; a
    # Discord modal closes on submit, so its problems come as a reply.
    inline_errors: bool = False
    locale: str | None = None  # as on Command

    async def by_moderator(self, moderator_role: str | None) -> bool:
        return self.moderator_check is not None and await self.moderator_check(moderator_role)


@dataclass(frozen=True)
class FormReply:
    """The answer to a submitted form: problems by field key (the form stays open
    where the platform can show them there), and a private reply; either may be
    empty."""

    errors: dict[str, str] = field(default_factory=dict)
    message: OutMessage | None = None


class Adapter(Protocol):
    """What the quiz core needs from a platform.

    Private replies to commands and clicks are returned by the service and
    delivered by the adapter through its own mechanism (interaction response,
    ephemeral message, terminal line); see `reply_private`.
    """

    platform: str

    @property
    def dialect(self) -> Dialect:
        """How the core's texts write names, bank text, mentions and times here."""
        ...

    @property
    def connected(self) -> bool: ...

    async def send(self, target: Target, message: OutMessage) -> MessageRef: ...

    async def edit(self, ref: MessageRef, message: OutMessage) -> None: ...

    async def reply_private(self, event: Command | Interaction, message: OutMessage) -> None: ...

    async def display_names(self, target: Target, user_ids: Sequence[str]) -> dict[str, str]:
        """Members' display names, for channels that turned mentions off; ids the
        platform cannot resolve may be left out."""
        ...

    async def send_direct(self, target: Target, user_id: str, message: OutMessage) -> None:
        """A private message to a member who is not in the current exchange (a
        submission's author hearing the review): a direct message where the
        platform has them. `target` is where the member last used the bot.
        Raises DeliveryError when it cannot be delivered."""
        ...


@runtime_checkable
class Parted(Protocol):
    """An adapter whose connection is several pieces, each up or down on its own
    (Discord's shards): health and metrics report each one."""

    @property
    def parts(self) -> Mapping[str, bool]: ...


@runtime_checkable
class ReadsBack(Protocol):
    """An adapter that can read a posted message back. A reveal taken over after
    a crash (or after a reply that was lost) asks first, so an edit that did go
    out is not sent again."""

    async def shows(self, ref: MessageRef, message: OutMessage) -> bool:
        """True only if the message already reads as `message` would make it."""
        ...


class DeliveryError(Exception):
    """A platform refused a post or an edit (missing channel, no permission, …).

    `permanent` is true when retrying cannot help, such as a deleted channel;
    `rate_limited` when the platform answered 429 (counted apart in metrics).
    """

    def __init__(
        self, message: str, *, permanent: bool = False, rate_limited: bool = False
    ) -> None:
        super().__init__(message)
        self.permanent = permanent
        self.rate_limited = rate_limited


class StartError(Exception):
    """A platform cannot start with these settings; the message says why (the
    runner prints it and exits 2)."""
