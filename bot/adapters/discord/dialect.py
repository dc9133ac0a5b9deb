"""How Discord writes names, bank text, mentions and times."""

from __future__ import annotations

from datetime import datetime

from bot.adapters.discord.escape import escape_discord_block, escape_discord_markdown
from bot.dialect import PlainDialect


class DiscordDialect(PlainDialect):
    def escape_name(self, name: str) -> str:
        return escape_discord_markdown(name)

    # Bank text passes unchanged (PlainDialect.escape_text): its own markdown
    # (code in backticks) is meant to show, and every send disables mentions.
    # A member's text never formats: a masked link would show one address and
    # open another.
    def escape_member(self, text: str) -> str:
        return escape_discord_block(text)

    def time(self, moment: datetime) -> str:
        # Relative ("in 20 seconds"), counting down in each reader's client.
        return f"<t:{int(moment.timestamp())}:R>"


DISCORD_DIALECT = DiscordDialect()
