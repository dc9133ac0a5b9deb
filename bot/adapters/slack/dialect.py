"""How Slack writes names, bank text, mentions, times and its communities."""

from __future__ import annotations

from datetime import UTC, datetime

from bot.dialect import PlainDialect
from bot.i18n import t

# Slack reads &, < and > as control characters in every text it parses.
_SLACK = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;"})


def slack_escape(text: str) -> str:
    return text.translate(_SLACK)


class SlackDialect(PlainDialect):
    @property
    def community(self) -> str:
        return t("workspace")

    def escape_name(self, name: str) -> str:
        return slack_escape(name)

    def escape_text(self, text: str) -> str:
        return slack_escape(text)

    # Escaping & < > is what stops a link (<url|text>), a mention (<@U…>) or a
    # broadcast (<!channel>): the same for a member's text as for a bank's.
    def escape_member(self, text: str) -> str:
        return slack_escape(text)

    def time(self, moment: datetime) -> str:
        """A time each Slack client shows in its reader's own zone, with a UTC
        fallback. Seconds are shown because questions can last as little as two
        seconds."""
        epoch = int(moment.timestamp())
        fallback = moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
        shown = t("{date} at {time}", date="{date_short_pretty}", time="{time_secs}")
        return f"<!date^{epoch}^{shown}|{fallback}>"


SLACK_DIALECT = SlackDialect()
