"""The shapes of Slack's own ids, checked as a request arrives: anything else
(`U0EV><!channel>`, a lowercase name, 500 characters) is not an id Slack made,
and would be stored, shown and mentioned as one."""

from __future__ import annotations

import re

_USER = re.compile(r"[UW][A-Z0-9]{2,31}")
_TEAM = re.compile(r"[TE][A-Z0-9]{2,31}")
_CHANNEL = re.compile(r"[CGD][A-Z0-9]{2,31}")


def bad_ids(team: str, channel: str, user: str) -> str | None:
    """Which of the ids is not shaped as Slack makes it, or None. An empty
    channel is allowed (a form opened outside a channel names none)."""
    if not _TEAM.fullmatch(team):
        return "workspace id"
    if channel and not _CHANNEL.fullmatch(channel):
        return "channel id"
    if not _USER.fullmatch(user):
        return "user id"
    return None
