"""Parse `/quiz …` typed as text (Slack's slash command text, the terminal).

Only the shape is checked here; the quiz service validates the values.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

SCOPES = {"channel", "server", "workspace", "community"}
PERIODS = {"week", "month", "all", "streaks"}
SIMPLE = {"stop", "skip", "forget-me", "help", "submit", "submissions", "dashboard"}
_MENTION = re.compile(r"^<@([A-Za-z0-9]+)(?:\|[^>]*)?>$")


@dataclass(frozen=True)
class ParsedCommand:
    name: str
    args: dict[str, str] = field(default_factory=dict)


class UsageError(ValueError):
    """The text is not a `/quiz` command we understand; the message says why."""


def parse(text: str) -> ParsedCommand:
    words = text.split()
    if words and words[0].lower() in ("/quiz", "quiz"):
        words = words[1:]
    if not words:
        return ParsedCommand("help")
    name, rest = words[0].lower(), words[1:]
    if name in SIMPLE:
        if rest:
            raise UsageError(f"`{name}` takes no options")
        return ParsedCommand(name)
    if name == "start":
        return ParsedCommand(name, _start_args(rest))
    if name == "leaderboard":
        return ParsedCommand(name, _leaderboard_args(rest))
    if name == "stats":
        return ParsedCommand(name, _stats_args(rest))
    if name == "config":
        return ParsedCommand(name, _config_args(rest))
    if name == "schedule":
        return ParsedCommand(name, _schedule_args(rest))
    if name == "review":
        return ParsedCommand(name, _one_word(name, "count", rest))
    if name == "export":
        return ParsedCommand(name, _one_word(name, "which", rest))
    if name == "remove-question":
        if len(rest) != 1:
            raise UsageError("use `remove-question <id>`, like `remove-question community-12`")
        return ParsedCommand(name, {"id": rest[0]})
    raise UsageError(f"unknown command `{name}`")


_NUMBER = re.compile(r"[-+]?\d+(\.\d*)?")
_START_ORDER = ("questions", "seconds", "bank", "tag")


def _start_args(words: list[str]) -> dict[str, str]:
    """`start [questions] [seconds] [bank] [tag]`, numbers first; a word that is
    not a number ends the numbers. `bank=ID` and `tag=TAG` work anywhere."""
    args: dict[str, str] = {}
    position = 0
    for word in words:
        key, sep, value = word.partition("=")
        if sep:
            key = key.lower()
            if key not in ("bank", "tag") or not value:
                raise UsageError(f"unknown option `{word}`; use bank=ID or tag=TAG")
            slot = key
        else:
            value = word
            if position < 2 and not _NUMBER.fullmatch(word):
                position = 2
            while position < len(_START_ORDER) and _START_ORDER[position] in args:
                position += 1
            if position == len(_START_ORDER):
                raise UsageError(
                    f"unexpected `{word}`: give at most two numbers, then a bank and a tag"
                )
            slot = _START_ORDER[position]
            position += 1
        if slot in args:
            raise UsageError(f"{slot} is given twice")
        args[slot] = value
    return args


def _leaderboard_args(words: list[str]) -> dict[str, str]:
    args: dict[str, str] = {}
    for word in (w.lower() for w in words):
        if word in SCOPES and "scope" not in args:
            args["scope"] = word
        elif word in PERIODS and "period" not in args:
            args["period"] = word
        else:
            raise UsageError(
                f"`{word}` is neither a scope (channel, server) nor week/month/all/streaks"
            )
    return args


def _stats_args(words: list[str]) -> dict[str, str]:
    if not words:
        return {}
    if len(words) > 1:
        raise UsageError("`stats` takes at most one member")
    found = _MENTION.match(words[0])
    if not found:
        raise UsageError(f"`{words[0]}` is not a member mention")
    return {"user": found.group(1)}


def _one_word(name: str, key: str, words: list[str]) -> dict[str, str]:
    """`review [count]`, `export [missed|all]`: at most one word, checked by the service."""
    if len(words) > 1:
        raise UsageError(f"`{name}` takes at most one option")
    return {key: words[0]} if words else {}


def _config_args(words: list[str]) -> dict[str, str]:
    if not words or (words[0].lower() == "show" and len(words) == 1):
        return {}
    if words[0].lower() != "set":
        raise UsageError("use `config show` or `config set <setting> <value>`")
    if len(words) < 2:
        raise UsageError("`config set` needs a setting and a value")
    args = {"key": words[1].lower()}
    if len(words) > 2:
        args["value"] = " ".join(words[2:])
    return args


def _looks_like_zone(word: str) -> bool:
    """Zones are told apart from day lists by shape: IANA names have a slash."""
    return "/" in word or word.upper() in ("UTC", "GMT")


def _schedule_args(words: list[str]) -> dict[str, str]:
    """`schedule daily <HH:MM> [zone] [days] [bank=ID] [tag=TAG]`,
    `schedule leaderboard <day> <HH:MM> [zone]`, `schedule show`, `schedule off [which]`."""
    if not words:
        return {"action": "show"}
    action, rest = words[0].lower(), words[1:]
    if action == "show" and not rest:
        return {"action": "show"}
    if action == "off":
        if len(rest) > 1:
            raise UsageError(
                "use `schedule off`, `schedule off daily` or `schedule off leaderboard`"
            )
        return {"action": "off", **({"which": rest[0].lower()} if rest else {})}
    if action == "leaderboard":
        if len(rest) not in (2, 3):
            raise UsageError("use `schedule leaderboard <day> <HH:MM> [timezone]`")
        args = {"action": action, "day": rest[0], "time": rest[1]}
        if len(rest) == 3:
            args["timezone"] = rest[2]
        return args
    if action != "daily":
        raise UsageError(
            "use `schedule daily`, `schedule leaderboard`, `schedule show` or `schedule off`"
        )
    if not rest:
        raise UsageError("`schedule daily` needs a time, like 09:00")
    args = {"action": action, "time": rest[0]}
    for word in rest[1:]:
        key, sep, value = word.partition("=")
        if sep:
            if key.lower() not in ("bank", "tag") or not value:
                raise UsageError(f"unknown option `{word}`; use bank=ID or tag=TAG")
            args[key.lower()] = value
        elif _looks_like_zone(word) and "timezone" not in args:
            args["timezone"] = word
        elif "days" not in args:
            args["days"] = word
        else:
            raise UsageError(f"unexpected `{word}`: give one time zone and one list of days")
    return args
