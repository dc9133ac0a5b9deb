"""How the terminal names members: its one local player is "you"."""

from __future__ import annotations

from collections.abc import Mapping

from bot.dialect import PlainDialect
from bot.i18n import t


class ConsoleDialect(PlainDialect):
    def __init__(self, local_user: str) -> None:
        self.local_user = local_user

    def mention(self, user_id: str, names: Mapping[str, str] | None = None) -> str:
        # Nobody can be pinged in a terminal, so ids stand as they are.
        return t("you") if user_id == self.local_user else user_id
