"""Member- and bank-supplied text made inert for the platform it is posted on.

render.py calls these where it inserts text it did not write (display names,
bank titles, prompts, options, explanations), so our own markup (mentions,
dates) stays live while text that merely looks like markup cannot ping anyone.
No platform library is imported here: the rules are small and written out.
"""

from __future__ import annotations

from bot.adapters.discord.escape import escape_discord_markdown  # moved to the dialect next

# Slack reads &, < and > as control characters in every text it parses.
_SLACK = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;"})


def slack_escape(text: str) -> str:
    return text.translate(_SLACK)


def escape_name(platform: str, name: str) -> str:
    """A member's display name, as plain text on `platform`."""
    if platform == "slack":
        return slack_escape(name)
    if platform == "discord":
        return escape_discord_markdown(name)
    return name


def escape_text(platform: str, text: str) -> str:
    """Bank text (titles, prompts, options, explanations). Slack needs &, <, >
    escaped; on Discord the bank's own markdown (code in backticks) is meant to
    show, and mentions are disabled in every send, so it passes unchanged."""
    if platform == "slack":
        return slack_escape(text)
    return text
