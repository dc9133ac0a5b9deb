"""How a platform writes the few things the core's texts cannot write neutrally.

The quiz core renders every sentence once; where a sentence holds text it did
not write (display names, bank text, what members typed), names a member,
shows a live time or names a community, it asks the channel's `Dialect`. Each
adapter supplies its own; `PLAIN` serves a platform that has none. Nothing
platform-specific here.

Bank files are written by the operator, whose markdown is meant to show; what
members typed (submissions, report details, reasons, names) is shown as
written, never as markup, links or mentions. A question accepted from a member
is drawn like a bank's, so its texts carry their origin with them as
`MemberText`, and `escape_text` escapes those as a member's.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Protocol

from bot.i18n import t


class MemberText(str):
    """Text a member wrote, passed on where bank text goes (a community
    question's prompt, options, explanation and hint)."""

    __slots__ = ()


class Dialect(Protocol):
    @property
    def community(self) -> str:
        """The word for a community: "server", "workspace"."""
        ...

    def escape_name(self, name: str) -> str:
        """A member's display name, as literal text (it cannot ping or format)."""
        ...

    def escape_text(self, text: str) -> str:
        """Bank text (titles, prompts, options, explanations), made safe while
        the markdown a bank means to show still shows; `MemberText` is escaped
        as `escape_member` does."""
        ...

    def escape_member(self, text: str) -> str:
        """What a member typed (a submitted question, report details, a
        moderator's reason), as literal text with its line breaks: nothing in
        it formats, links, pings or moves the cursor."""
        ...

    def mention(self, user_id: str, names: Mapping[str, str] | None = None) -> str:
        """How to name a member: a mention, or, in channels that turned mentions
        off (`names` given), their display name, which never pings."""
        ...

    def time(self, moment: datetime) -> str:
        """A moment as live time markup each reader's client shows locally."""
        ...


class PlainDialect:
    """No markup to escape, `<@id>` mentions, a "server": the default, and the
    base the adapters' dialects change what they must of."""

    @property
    def community(self) -> str:
        return t("server")

    def escape_name(self, name: str) -> str:
        return name

    def escape_text(self, text: str) -> str:
        return self.escape_member(text) if isinstance(text, MemberText) else text

    def escape_member(self, text: str) -> str:
        return text

    def mention(self, user_id: str, names: Mapping[str, str] | None = None) -> str:
        if names is not None:
            name = names.get(user_id)
            # Names are the member's own text: shown as written, never as markup.
            return self.escape_name(name) if name else t("a member")
        return f"<@{user_id}>"

    def time(self, moment: datetime) -> str:
        return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


PLAIN: Dialect = PlainDialect()
