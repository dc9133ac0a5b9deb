"""Member-supplied text made literal for Discord's markdown.

Discord renders markdown in message content and embeds: a display name such as
`**everyone** ||x||` would show bold and hidden, `[x](https://…)` as a link and
`<@123>` as someone else's mention. A backslash before any punctuation makes
Discord show that character as written, so every character that can start or
close a markdown construct, a mention or a link is escaped. Pure text in, text
out: no discord import (the Discord dialect uses it for display names).
"""

from __future__ import annotations

import re

# Emphasis and code (* _ ~ `), spoilers (|), quotes and headings (> # -), masked
# links ([ ] ( )), mentions, channels, emoji and timestamps (< > @ #), bare links
# (the : of https://), and the backslash itself.
_SPECIAL = re.compile(r"([\\*_~`|>#\-\[\]()<@:])")
_LINE_BREAKS = re.compile(r"[\r\n\u2028\u2029]+")
_ONE_BREAK = re.compile(r"\r\n|[\r\n\u2028\u2029]")
# A line starting "1. " or "+ " is a list item: its dot or plus is escaped too.
_LIST_START = re.compile(r"^(\s*)(\d+)\.(?=\s)|^(\s*)\+(?=\s)")


def escape_discord_markdown(text: str) -> str:
    """`text` as Discord shows it literally, on one line."""
    return _SPECIAL.sub(r"\\\1", _LINE_BREAKS.sub(" ", text))


def _literal_line(line: str) -> str:
    line = _SPECIAL.sub(r"\\\1", line)
    return _LIST_START.sub(lambda m: f"{m[1]}{m[2]}\\." if m[2] else f"{m[3]}\\+", line)


def escape_discord_block(text: str) -> str:
    """`text` as Discord shows it literally, its line breaks kept: no line can
    start a heading, quote or list, and nothing formats, links or mentions."""
    return "\n".join(_literal_line(line) for line in _ONE_BREAK.split(text))
