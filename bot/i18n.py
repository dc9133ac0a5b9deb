"""Which language a text is written in, and the gettext catalogs that translate it.

Texts call `t("… {points} …", points=n)` and `tn(singular, plural, n)`; the
language is the one `speaking()` set around the rendering (a ContextVar), so text
functions need no language parameter. English is the source language: its
sentences are the msgids in the code. The other catalogs live in
`bot/locale/<language>/LC_MESSAGES/messages.po` and are compiled to `.mo` files
by `make` and the package build (scripts/catalogs.py).

`en_XA` is a pseudo-locale for the checks, never offered to members: every
letter of a catalog sentence comes out accented, so a test can see which
replies were built outside the catalogs.
"""

from __future__ import annotations

import gettext as stdlib_gettext
import logging
import os
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from datetime import date, datetime
from functools import cache, lru_cache
from pathlib import Path

from babel import Locale
from babel.dates import format_date, format_datetime
from babel.support import NullTranslations, Translations

log = logging.getLogger(__name__)

DOMAIN = "messages"
LOCALE_DIR = Path(__file__).parent / "locale"
DEFAULT = "en"


def _shipped() -> tuple[str, ...]:
    """English, then every language with a catalog: adding one is adding its .po."""
    found = sorted(po.parent.parent.name for po in LOCALE_DIR.glob("*/LC_MESSAGES/messages.po"))
    return (DEFAULT, *(code for code in found if code != DEFAULT))


LANGUAGES = _shipped()
# Each language's name in itself, as the language lists show it.
LANGUAGE_NAMES = {code: Locale.parse(code).get_display_name(code) or code for code in LANGUAGES}
PSEUDO = "en_XA"
# Set (to anything) to let `en_XA` be chosen like a shipped language: the checks only.
PSEUDO_SWITCH = "QUIZ_PSEUDO_LOCALE"

_language: ContextVar[str] = ContextVar("language", default=DEFAULT)


def language() -> str:
    """The language texts are written in right now."""
    return _language.get()


@contextmanager
def speaking(code: str | None) -> Iterator[None]:
    """Render the texts inside in `code` (a shipped language; None or unknown: English)."""
    token = _language.set(supported(code) or DEFAULT)
    try:
        yield
    finally:
        _language.reset(token)


def from_environment() -> str | None:
    """The terminal's language, as the usual variables name it (`de_DE.UTF-8`)."""
    for name in ("LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG"):
        value = os.environ.get(name, "").split(":")[0].split(".")[0]
        if value and value not in ("C", "POSIX"):
            return value
    return None


def speak_by_default(code: str | None) -> None:
    """The language of this thread's texts from now on (the command line's, once)."""
    _language.set(supported(code) or DEFAULT)


def offered() -> tuple[str, ...]:
    """The languages a community or a member may choose."""
    return (*LANGUAGES, PSEUDO) if os.environ.get(PSEUDO_SWITCH) else LANGUAGES


def supported(code: str | None) -> str | None:
    """The shipped language closest to a platform's locale code (`es-ES`, `pt-BR`,
    `de`, `en_US`), or None when none is near."""
    if not code:
        return None
    return _closest(code, offered())


@lru_cache(maxsize=1024)
def _closest(code: str, choices: tuple[str, ...]) -> str | None:
    """`supported`, remembered: every click asks it the member's locale."""
    cleaned = code.strip().replace("-", "_")
    by_lower = {choice.lower(): choice for choice in choices}
    if cleaned.lower() in by_lower:
        return by_lower[cleaned.lower()]
    if cleaned.lower() == PSEUDO.lower():
        return None  # offered only to the checks (PSEUDO_SWITCH)
    base = cleaned.split("_")[0].lower()
    if base == "pt":  # Portuguese from Portugal reads Brazilian Portuguese well enough
        return "pt_BR"
    return by_lower.get(base)


# -- translating ------------------------------------------------------------------


@cache
def catalog(code: str) -> stdlib_gettext.NullTranslations:
    if code == PSEUDO:
        return _Pseudo()
    if code == DEFAULT:
        return NullTranslations()
    if not (LOCALE_DIR / code / "LC_MESSAGES" / f"{DOMAIN}.mo").exists():
        # A checkout nobody ran `make` in: English rather than no reply at all.
        log.warning("no compiled catalog for %s: run `make catalogs`; speaking English", code)
    return Translations.load(str(LOCALE_DIR), [code], DOMAIN)


def t(message: str, **values: object) -> str:
    """`message` in the current language, its `{named}` placeholders filled."""
    text = catalog(language()).gettext(message)
    return text.format(**values) if values else text


def tn(singular: str, plural: str, count: int, **values: object) -> str:
    """The plural form for `count` in the current language; `{count}` is filled too."""
    text = catalog(language()).ngettext(singular, plural, count)
    return text.format(count=count, **values)


def N_(message: str) -> str:
    """Marks a sentence for extraction where it is defined; `t()` translates it where used."""
    return message


# -- dates and times in the language's conventions ------------------------------------


def babel_locale() -> Locale:
    code = language()
    return Locale.parse("en" if code == PSEUDO else code)


# CLDR patterns per language: (a day and a time, a day of this year in a
# title, a day in a sentence).
_PATTERNS = {
    "en": ("EEE dd MMM HH:mm", "MMM dd", "d MMM"),
    "de": ("EEE dd. MMM HH:mm", "dd. MMM", "d. MMM"),
    "es": ("EEE dd MMM HH:mm", "dd MMM", "d MMM"),
    "fr": ("EEE dd MMM HH:mm", "dd MMM", "d MMM"),
    "pt_BR": ("EEE dd MMM HH:mm", "dd MMM", "d MMM"),
}


def _patterns() -> tuple[str, str, str]:
    return _PATTERNS.get(language(), _PATTERNS[DEFAULT])


def day_and_time(moment: datetime) -> str:
    """`Thu 03 Dec 09:00`, in the language's order and names (moment already local)."""
    return format_datetime(moment, _patterns()[0], tzinfo=moment.tzinfo, locale=babel_locale())


def day_and_time_zone(moment: datetime) -> str:
    """`day_and_time` with the zone's abbreviation, as schedules list their next post."""
    zone = moment.strftime("%Z")
    return f"{day_and_time(moment)} {zone}".rstrip()


def short_date(day: date) -> str:
    """`Dec 03` / `03. Dez.`: a day of this year, as the weekly board's title shows it."""
    return format_date(day, _patterns()[1], locale=babel_locale())


def day_in_sentence(day: date) -> str:
    """`2 Nov` / `2. Nov.`: a day as a sentence names it."""
    return format_date(day, _patterns()[2], locale=babel_locale())


# -- the pseudo-locale ------------------------------------------------------------------

_PSEUDO_LETTERS = str.maketrans(
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ",
    "áƀçđéƒğĥíĵķļɱñóƥʠŕšŧúṽŵẋýžÁƁÇĐÉƑĞĤÍĴĶĻṀÑÓƤǪŔŠŦÚṼŴẊÝŽ",
)
# Kept as they are: placeholders, `code` the member types, <markup>, links.
_KEEP_OPEN = {"{": "}", "`": "`", "<": ">"}


def pseudo(text: str) -> str:
    """Every letter outside placeholders, code, markup and links accented."""
    out: list[str] = []
    index = 0
    while index < len(text):
        char = text[index]
        closing = _KEEP_OPEN.get(char)
        end = text.find(closing, index + 1) if closing else -1
        if closing and end != -1:
            out.append(text[index : end + 1])
            index = end + 1
        elif text.startswith(("http://", "https://"), index):
            end = index
            while end < len(text) and not text[end].isspace():
                end += 1
            out.append(text[index:end])
            index = end
        else:
            out.append(char.translate(_PSEUDO_LETTERS))
            index += 1
    return "".join(out)


class _Pseudo(stdlib_gettext.NullTranslations):
    def gettext(self, message: str) -> str:
        return pseudo(message)

    def ngettext(self, msgid1: str, msgid2: str, n: int) -> str:
        return pseudo(msgid1 if n == 1 else msgid2)
