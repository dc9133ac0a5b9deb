"""The terminal's own ids: its server, channel and player are short lowercase
words starting with a letter (`local`, `terminal`). A member named in typed text (`stats <@U0X>`) is
checked against that shape before the command reaches the core: no id of
another platform, and nothing a terminal would print oddly, stands for one."""

from __future__ import annotations

import re
from collections.abc import Mapping

_CONSOLE_ID = re.compile(r"[a-z][a-z0-9_-]{0,31}")
MEMBER_ARGS = ("user",)


def bad_member(args: Mapping[str, str]) -> str | None:
    """The typed member id that is not a terminal id, or None."""
    for name in MEMBER_ARGS:
        value = args.get(name)
        if value is not None and not _CONSOLE_ID.fullmatch(value):
            return value
    return None
