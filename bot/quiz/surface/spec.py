"""What the `/quiz` surface is made of: commands with typed options, and the
ids buttons and forms carry. Pure declarations: no platform, no handler logic."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from enum import Enum
from functools import cached_property
from typing import Any, NamedTuple

from bot.chat import Command, FormReply, FormSubmission, Interaction, OutMessage


class Kind(Enum):
    NUMBER = "number"  # a whole number, with a range
    WORD = "word"  # one free word
    CHOICE = "choice"  # one of `choices` (the text grammar also takes `aliases`)
    MEMBER = "member"  # a member of the community
    REST = "rest"  # the rest of the typed words, as one value


@dataclass(frozen=True)
class Option:
    name: str  # as members see it: the option's name in pickers, help and `name=value`
    kind: Kind = Kind.WORD
    arg: str = ""  # the key in the neutral command's args (default: `name`)
    required: bool = False
    minimum: int | None = None
    maximum: int | None = None
    choices: tuple[str, ...] = ()
    aliases: tuple[str, ...] = ()  # more words typed text accepts for a choice
    open_text: bool = False  # typed text may give any word; the handler judges it
    keyword: bool = False  # typed text may give it as `name=value`, anywhere
    positional: bool = True  # typed text may give it by position
    shape: Callable[[str], bool] | None = None  # a word of this shape goes here, anywhere
    suggest: str | None = None  # what pickers complete it from: "bank", "tag", "zone"
    placeholder: str = ""  # the word help shows for it (default: name, or the choices)
    about: str = ""  # the key of its description in the texts (default: name)

    @property
    def key(self) -> str:
        return self.arg or self.name

    @property
    def description_key(self) -> str:
        return self.about or self.name

    def synopsis(self) -> str:
        if self.placeholder:
            word = self.placeholder
        elif self.kind is Kind.CHOICE and not self.open_text:
            word = "|".join(self.choices)
        elif self.kind is Kind.MEMBER:
            word = f"@{self.name}"
        else:
            word = self.name
        if self.keyword and not self.positional:
            word = f"{self.name}={word}"
        return f"<{word}>" if self.required else f"[{word}]"


@dataclass(frozen=True)
class Variant:
    """One way to type a command: its words after `/quiz` and its options.
    `config show` and `config set` are two variants of one command."""

    path: tuple[str, ...]
    options: tuple[Option, ...] = ()
    fixed: Mapping[str, str] = field(default_factory=dict)  # args the path itself adds

    @property
    def words(self) -> str:
        return " ".join(self.path)

    def synopsis(self) -> str:
        return " ".join(["/quiz", *self.path, *(option.synopsis() for option in self.options)])


CommandHandler = Callable[[Any, Command], Awaitable[OutMessage]]


def anyone(args: Mapping[str, str]) -> bool:
    return False


@dataclass(frozen=True)
class CommandSpec:
    """A `/quiz` command: its variants, who may run it, and who handles it
    (`handler(owner, command)`, with `owner` the feature object of that type)."""

    name: str
    owner: type
    handler: CommandHandler
    variants: tuple[Variant, ...]
    moderator: bool = False
    # What it changes belongs to the whole server or workspace (its question
    # bank): a channel's own moderator role is not enough, only its admins.
    community_wide: bool = False
    open_to_all: Callable[[Mapping[str, str]], bool] = anyone  # looking, not changing
    bare: Mapping[str, str] | None = None  # args when only the command's word is typed


class Pressed(NamedTuple):
    """A parsed id: its kind, its verb (if the kind has verbs) and its numbers.
    A tuple, not a dataclass: one is made on every click."""

    kind: IdKind
    verb: str
    numbers: tuple[int, ...]

    def number(self, name: str) -> int:
        return self.numbers[self.kind.fields.index(name)]


_MAX_NUMBER_DIGITS = 18  # ids are database keys: refuse anything longer before int()


@dataclass(frozen=True)
class IdKind:
    """The id a button or form carries: `<prefix>[:<verb>]:<number>...`,
    which post, card or submission, nothing more."""

    prefix: str
    fields: tuple[str, ...] = ()
    verbs: tuple[str, ...] = ()
    answer: bool = False  # a click of this kind is an answer (or a review card's)
    shortcut: str | None = None  # typed in the terminal for it; None: the button's label

    def id(self, *numbers: int, verb: str = "") -> str:
        parts = [self.prefix, *([verb] if self.verbs else []), *(str(n) for n in numbers)]
        return ":".join(parts)

    @cached_property
    def prefix_parts(self) -> int:
        return self.prefix.count(":") + 1

    def parse(self, custom_id: str) -> Pressed | None:
        parts = custom_id.split(":")
        if ":".join(parts[: self.prefix_parts]) != self.prefix:
            return None
        return self.parse_parts(parts)

    def parse_parts(self, parts: list[str]) -> Pressed | None:
        """The rest of an id split at `:` whose prefix matched (the registry
        splits each click's id once)."""
        start = self.prefix_parts + bool(self.verbs)
        if len(parts) != start + len(self.fields):
            return None
        verb = parts[start - 1] if self.verbs else ""
        if self.verbs and verb not in self.verbs:
            return None
        numbers = []
        for part in parts[start:]:
            if not part.isdigit() or len(part) > _MAX_NUMBER_DIGITS:
                return None
            numbers.append(int(part))
        return Pressed(self, verb, tuple(numbers))


ButtonHandler = Callable[[Any, Interaction, Pressed], Awaitable[OutMessage]]
FormHandler = Callable[[Any, FormSubmission, Pressed], Awaitable[FormReply]]


def nobody(pressed: Pressed) -> bool:
    return False


@dataclass(frozen=True)
class ButtonRoute:
    """Who handles a kind of button (`handler(owner, click, pressed)`), and
    which command's moderators it is for (None: anyone)."""

    kind: IdKind
    owner: type
    handler: ButtonHandler
    moderators_of: str | None = None
    open_to_all: Callable[[Pressed], bool] = nobody


@dataclass(frozen=True)
class FormRoute:
    kind: IdKind
    owner: type
    handler: FormHandler
    moderators_of: str | None = None
