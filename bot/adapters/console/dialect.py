"""How the terminal names members (its one local player is "you") and shows
their text: rich draws nothing as markup here (`markup=False`), so `[bold]`
shows as typed; what a terminal would obey instead are control characters."""

from __future__ import annotations

import re
from collections.abc import Mapping

from bot.dialect import PlainDialect
from bot.i18n import t

# Escape sequences (cursor moves, title changes, clipboard writes) start with
# these; line breaks and tabs stay in a member's text, not in a name.
_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029]")
_NAME_CONTROLS = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")


class ConsoleDialect(PlainDialect):
    def __init__(self, local_user: str) -> None:
        self.local_user = local_user

    def escape_name(self, name: str) -> str:
        return _NAME_CONTROLS.sub("", name)

    def escape_member(self, text: str) -> str:
        return _CONTROLS.sub("", text)

    def mention(self, user_id: str, names: Mapping[str, str] | None = None) -> str:
        # Nobody can be pinged in a terminal, so ids stand as they are.
        return t("you") if user_id == self.local_user else self.escape_name(user_id)
