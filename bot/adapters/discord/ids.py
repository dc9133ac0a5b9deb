"""The shape of Discord's ids (snowflakes), checked as an interaction arrives.

A snowflake is an unsigned 64-bit number written in decimal. discord.py turns
whatever the gateway sent into an int, so `-5`, `0` or a 40-digit number get
through it; none is an id Discord made, and each would be stored, shown and
looked up as one."""

from __future__ import annotations

from collections.abc import Mapping

_MAX = 2**64 - 1
MEMBER_ARGS = ("user",)  # options that name a member by id


def is_snowflake(value: object) -> bool:
    text = str(value)
    return text.isascii() and text.isdigit() and text[0] != "0" and int(text) <= _MAX


def bad_ids(
    guild: object, channel: object, user: object, args: Mapping[str, str] | None = None
) -> str | None:
    """Which id is not a snowflake, or None. A missing server or channel (a
    direct message) is not a shape problem: the caller says it is server only."""
    for what, value in (("server id", guild), ("channel id", channel), ("user id", user)):
        if value is not None and not is_snowflake(value):
            return what
    for name in MEMBER_ARGS:
        if args and name in args and not is_snowflake(args[name]):
            return f"{name} option"
    return None
