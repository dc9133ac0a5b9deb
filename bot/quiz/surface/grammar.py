"""`/quiz …` typed as text (Slack's slash command text, the terminal), read
with the registry's declarations: the words of a variant, then its options.

Options identified by their shape (a choice, a time zone, a mention) may stand
anywhere; the others are taken in order, a number option passing on a word
that is not a number; `name=value` works for keyword options. Only the shape
is checked here: the handlers validate the values and explain mistakes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from bot.quiz.surface.registry import Surface
from bot.quiz.surface.spec import Kind, Option, Variant
from bot.quiz.texts import usage

_NUMBER = re.compile(r"[-+]?\d+(\.\d*)?")
_MENTION = re.compile(r"^<@([A-Za-z0-9]+)(?:\|[^>]*)?>$")


@dataclass(frozen=True)
class ParsedCommand:
    name: str
    args: dict[str, str] = field(default_factory=dict)


class UsageError(ValueError):
    """The text is not a `/quiz` command we understand; the message says why."""


def parse(text: str, surface: Surface | None = None) -> ParsedCommand:
    if surface is None:
        from bot.quiz.commands import SURFACE  # the declared surface; imported late: it imports us

        surface = SURFACE
    words = text.split()
    if words and words[0].lower() in ("/quiz", "quiz"):
        words = words[1:]
    if not words:
        return ParsedCommand("help")
    name, rest = words[0].lower(), words[1:]
    spec = surface.commands.get(name)
    if spec is None:
        raise UsageError(usage.unknown_command_word(name))
    if not rest and spec.bare is not None:
        return ParsedCommand(name, dict(spec.bare))
    variant = next((v for v in spec.variants if len(v.path) == 1), None)
    if variant is None:
        wanted = rest[0].lower() if rest else ""
        variant = next((v for v in spec.variants if v.path[1:] == (wanted,)), None)
        if variant is None:
            raise UsageError(usage.pick_a_variant([v.synopsis() for v in spec.variants]))
        rest = rest[1:]
    return ParsedCommand(name, {**variant.fixed, **_options(variant, rest)})


def _options(variant: Variant, words: list[str]) -> dict[str, str]:
    if words and not variant.options:
        raise UsageError(usage.takes_no_options(variant.words))
    options = variant.options
    keywords = {option.name: option for option in options if option.keyword}
    args: dict[str, str] = {}
    cursor = 0
    for index, word in enumerate(words):
        key, sep, value = word.partition("=")
        if sep and keywords:
            option = keywords.get(key.lower())
            if option is None or not value:
                raise UsageError(
                    usage.unknown_option(word, [_keyword(o) for o in keywords.values()])
                )
            _put(args, option, value)
            continue
        found = _by_shape(options, args, word)
        if found is None:
            found, cursor = _by_position(options, args, word, cursor)
        if found is None:
            raise UsageError(_refusal(variant, args, word))
        if found.kind is Kind.REST:
            _put(args, found, " ".join(words[index:]))
            break
        _put(args, found, _value(found, word))
    for option in options:
        # A free text left empty is the handler's to explain (it knows what fits).
        if option.required and option.key not in args and option.kind is not Kind.REST:
            raise UsageError(usage.needs(variant.words, option.synopsis()))
    return args


def _identified_by_shape(option: Option) -> bool:
    return (
        option.kind is Kind.MEMBER
        or option.shape is not None
        or (option.kind is Kind.CHOICE and not option.open_text)
    )


def _accepts(option: Option, word: str) -> bool:
    if option.kind is Kind.MEMBER:
        return _MENTION.match(word) is not None
    if option.shape is not None:
        return option.shape(word)
    if option.kind is Kind.CHOICE and not option.open_text:
        return word.lower() in option.choices or word.lower() in option.aliases
    if option.kind is Kind.NUMBER:
        return _NUMBER.fullmatch(word) is not None
    return True


def _by_shape(options: tuple[Option, ...], args: dict[str, str], word: str) -> Option | None:
    for option in options:
        if option.key not in args and _identified_by_shape(option) and _accepts(option, word):
            return option
    return None


def _by_position(
    options: tuple[Option, ...], args: dict[str, str], word: str, cursor: int
) -> tuple[Option | None, int]:
    for index in range(cursor, len(options)):
        option = options[index]
        if option.key in args or not option.positional or _identified_by_shape(option):
            continue
        if _accepts(option, word):
            return option, index + 1
    return None, cursor


def _value(option: Option, word: str) -> str:
    if option.kind is Kind.MEMBER:
        found = _MENTION.match(word)
        return found.group(1) if found else word
    if option.kind is Kind.CHOICE:
        return word.lower()
    return word


def _put(args: dict[str, str], option: Option, value: str) -> None:
    if option.key in args:
        raise UsageError(usage.given_twice(option.name))
    args[option.key] = value


def _keyword(option: Option) -> str:
    return f"{option.name}={(option.placeholder or option.name).upper()}"


def _refusal(variant: Variant, args: dict[str, str], word: str) -> str:
    # A keyword-only option (`teams=3`) never takes a bare word.
    left = [
        option
        for option in variant.options
        if option.key not in args and (option.positional or _identified_by_shape(option))
    ]
    if not left:
        return usage.unexpected(word, variant.synopsis())
    if all(option.kind is Kind.MEMBER for option in left):
        return usage.not_a_member(word)
    return usage.fits_none(word, [option.synopsis() for option in left])
