"""The encodings Open Trivia DB applies to every text field (its `encode=`
parameter), detected from the file or named with --field-encoding.

By default the API escapes HTML entities; with `encode=url3986` each field is
percent-encoded, with `urlLegacy` spaces become `+` as well, and with
`base64` each field is base64 of its UTF-8 text. Many clients save the API's
answer as it comes, so all four turn up in files.
"""

from __future__ import annotations

import base64
import binascii
import html
import re
from collections.abc import Callable, Iterable
from urllib.parse import unquote, unquote_plus

ENCODINGS = ("auto", "html", "url3986", "urllegacy", "base64")
_PERCENT = re.compile(r"%[0-9A-Fa-f]{2}")
_TYPES = {"multiple", "boolean"}


class BadField(ValueError):
    """A field that is not valid in the file's encoding."""


def _base64(value: str) -> str:
    try:
        return base64.b64decode(value, validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        raise BadField(f"{value[:40]!r} is not base64 of UTF-8 text") from None


def _percent(plus: bool) -> Callable[[str], str]:
    unescape = unquote_plus if plus else unquote

    def decode(value: str) -> str:
        try:
            return unescape(value, errors="strict")
        except UnicodeDecodeError:
            raise BadField(f"{value[:40]!r} is not percent-encoded UTF-8") from None

    return decode


DECODERS: dict[str, Callable[[str], str]] = {
    "html": html.unescape,
    "url3986": _percent(plus=False),
    "urllegacy": _percent(plus=True),
    "base64": _base64,
}


def _looks_base64(value: str) -> bool:
    try:
        return _base64(value) in _TYPES
    except BadField:
        return False


def detect(types: Iterable[object], questions: Iterable[object]) -> str:
    """The encoding the fields of a results list are in. The `type` field gives
    base64 away (it is always 'multiple' or 'boolean'); percent-encoding shows
    in questions that have %XX escapes and never a plain space."""
    type_values = [t for t in types if isinstance(t, str)]
    if type_values and all(_looks_base64(t) for t in type_values):
        return "base64"
    texts = [q for q in questions if isinstance(q, str)]
    if texts and all(" " not in q for q in texts) and any(_PERCENT.search(q) for q in texts):
        legacy = any("+" in q for q in texts) and not any("%20" in q for q in texts)
        return "urllegacy" if legacy else "url3986"
    return "html"
