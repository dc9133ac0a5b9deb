"""Red-DiscordBot's rule for a typed answer, so that no wrong option we draw
is one Red itself would have counted as right.

Red lower-cases the guess and each accepted answer (and straightens curly
quotes in the guess); an answer with a space counts when it occurs anywhere
in the guess, an answer of one word when it equals one of the guess's
space-separated words.
"""

from __future__ import annotations

from collections.abc import Iterable

_STRAIGHT = str.maketrans({"‘": "'", "’": "'", "“": '"', "”": '"'})


def red_accepts(accepted: Iterable[str], guess: str) -> bool:
    typed = guess.lower().translate(_STRAIGHT)
    words = typed.split(" ")
    for answer in accepted:
        wanted = answer.lower()
        if (" " in wanted and wanted in typed) or wanted in words:
            return True
    return False
