"""The declared `/quiz` surface is the one truth: the Discord command tree,
the text grammar, help and usage agree with it, and a new kind of button
declared in the core is routed on Slack, Discord and the terminal without
touching an adapter."""

from __future__ import annotations

import io
from typing import Any

from discord import AppCommandOptionType, app_commands

from bot.adapters.console.adapter import CONSOLE_TARGET, ConsoleAdapter
from bot.adapters.discord.commands import quiz_group
from bot.chat import Button, Interaction, OutMessage
from bot.quiz import texts
from bot.quiz.bank import Catalog
from bot.quiz.commands import SURFACE
from bot.quiz.service import QuizService
from bot.quiz.surface.grammar import parse
from bot.quiz.surface.spec import ButtonRoute, IdKind, Kind, Option, Pressed

_TYPES = {
    Kind.NUMBER: AppCommandOptionType.integer,
    Kind.MEMBER: AppCommandOptionType.user,
}


class _User:
    id = 42


def _sample(option: Option) -> Any:
    if option.kind is Kind.NUMBER:
        return option.minimum
    if option.kind is Kind.MEMBER:
        return _User()
    return option.choices[0] if option.choices else "x"


def _discord_commands() -> dict[tuple[str, ...], app_commands.Command[Any, ..., Any]]:
    group = quiz_group(_recording_runner([]), lambda: Catalog({}))
    found = {}
    for command in group.walk_commands():
        if isinstance(command, app_commands.Command):
            found[tuple(command.qualified_name.split()[1:])] = command
    return found


def _recording_runner(seen: list[tuple[str, dict[str, str]]]) -> Any:
    async def run(_interaction: Any, name: str, args: dict[str, str]) -> None:
        seen.append((name, args))

    return run


def test_the_discord_tree_has_each_declared_command_option_range_and_choice() -> None:
    tree = _discord_commands()
    declared = {variant.path: (spec, variant) for spec, variant in SURFACE.variants()}
    assert set(tree) == set(declared)
    for path, command in tree.items():
        _, variant = declared[path]
        english = texts.usage.described(texts.usage.COMMAND_DESCRIPTIONS[variant.words])
        assert command.description == english
        parameters = {parameter.name: parameter for parameter in command.parameters}
        assert list(parameters) == [option.name for option in variant.options], path
        for option in variant.options:
            parameter = parameters[option.name]
            assert parameter.required is option.required, (path, option.name)
            assert parameter.type is _TYPES.get(option.kind, AppCommandOptionType.string)
            assert (parameter.min_value, parameter.max_value) == (option.minimum, option.maximum)
            shown = [choice.value for choice in parameter.choices]
            assert shown == list(option.choices), (path, option.name)
            described = texts.usage.described(
                texts.usage.OPTION_DESCRIPTIONS[option.description_key]
            )
            assert parameter.description == described


async def test_each_discord_command_hands_the_service_the_declared_name_and_args() -> None:
    seen: list[tuple[str, dict[str, str]]] = []
    group = quiz_group(_recording_runner(seen), lambda: Catalog({}))
    tree = {
        tuple(c.qualified_name.split()[1:]): c
        for c in group.walk_commands()
        if isinstance(c, app_commands.Command)
    }
    for spec, variant in SURFACE.variants():
        values = {option.name: _sample(option) for option in variant.options}
        await tree[variant.path].callback(None, **values)  # type: ignore[arg-type]
        wanted = {**variant.fixed}
        for option in variant.options:
            value = values[option.name]
            wanted[option.key] = str(value.id if isinstance(value, _User) else value)
        assert seen.pop() == (spec.name, wanted), variant.path


def test_typed_text_reads_every_declared_variant_into_its_args() -> None:
    for spec, variant in SURFACE.variants():
        words, wanted = list(variant.path), dict(variant.fixed)
        for option in variant.options:
            value = {Kind.NUMBER: str(option.minimum), Kind.MEMBER: "<@U0X>"}.get(option.kind)
            if value is None:
                value = option.choices[0] if option.choices else "Europe/Berlin"
                if option.kind is Kind.WORD and option.shape is None:
                    value = f"w{len(words)}"
            words.append(f"{option.name}={value}" if not option.positional else value)
            wanted[option.key] = "U0X" if option.kind is Kind.MEMBER else value
        assert parse(" ".join(words)).args == wanted, words
        assert parse(" ".join(words)).name == spec.name


def test_help_and_usage_show_every_declared_variant_with_its_words() -> None:
    help_text = texts.usage.help_message().text
    usage = texts.usage.usage_error("x").text
    for spec, variant in SURFACE.variants():
        line = texts.usage.described(texts.usage.HELP_LINES[variant.words])
        assert f"`{variant.synopsis()}`: {line}" in help_text
        assert f"`{variant.synopsis()}`" in usage
        if spec.moderator:
            assert spec.name in texts.usage.MODERATOR_ACTIONS


# -- a new kind of button, declared in the core only ------------------------------

TOOT = IdKind("qm:t", ("number",), shortcut="?")


class Tooter:
    """A feature the adapters have never heard of."""

    def __init__(self) -> None:
        self.pressed: list[tuple[str, int]] = []

    async def press(self, click: Interaction, pressed: Pressed) -> OutMessage:
        self.pressed.append((click.user_id, pressed.number("number")))
        return texts.common.private(f"toot {pressed.number('number')}")


def add_tooter(service: QuizService) -> Tooter:
    tooter = Tooter()
    service.surface.add_button(ButtonRoute(TOOT, Tooter, Tooter.press))
    service.commands.own(tooter)
    return tooter


TOOT_MESSAGE = OutMessage(text="A new kind of button", buttons=(Button(TOOT.id(7), "Toot"),))


async def test_a_new_button_kind_is_typed_in_the_terminal_by_its_shortcut(
    service: QuizService,
) -> None:
    tooter = add_tooter(service)
    console = ConsoleAdapter(io.StringIO(), surface=service.surface)
    await console.send(CONSOLE_TARGET, TOOT_MESSAGE)
    click = console.click_for("?")
    assert click is not None
    reply = await service.handle_click(click)
    assert reply.text == "toot 7" and tooter.pressed == [("local", 7)]
    assert not service.surface.is_answer(click.custom_id)  # `play` keeps the question open
