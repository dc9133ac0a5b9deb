"""Options more than one command takes."""

from __future__ import annotations

from bot.quiz.surface.spec import Kind, Option


def looks_like_zone(word: str) -> bool:
    """Zones are told apart from day lists by shape: IANA names have a slash."""
    return "/" in word or word.upper() in ("UTC", "GMT")


BANK = Option("bank", keyword=True, suggest="bank")
TAG = Option("tag", keyword=True, suggest="tag")
# In a schedule only as `bank=ID` / `tag=TAG`: the free words are the days.
SCHEDULE_BANK = Option("bank", keyword=True, positional=False, suggest="bank", placeholder="ID")
SCHEDULE_TAG = Option("tag", keyword=True, positional=False, suggest="tag", placeholder="TAG")
TIMEZONE = Option("timezone", shape=looks_like_zone, suggest="zone")
TIME = Option("time", required=True, placeholder="HH:MM")
NUMBER = Kind.NUMBER
