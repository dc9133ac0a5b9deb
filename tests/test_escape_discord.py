"""Display names made literal for Discord markdown (bot/adapters/discord/escape.py)."""

from __future__ import annotations

import re

import pytest

from bot.adapters.discord.escape import escape_discord_markdown

SPECIAL = "\\*_~`|>#-[]()<@:"


def unescaped(text: str) -> str:
    """What Discord shows: a backslash before punctuation shows that character."""
    return re.sub(r"\\([^0-9A-Za-z\s])", r"\1", text)


@pytest.mark.parametrize(
    ("name", "escaped"),
    [
        ("**everyone** ||x||", r"\*\*everyone\*\* \|\|x\|\|"),
        ("__under__ ~~gone~~ `code`", r"\_\_under\_\_ \~\~gone\~\~ \`code\`"),
        ("> quoted", r"\> quoted"),
        ("# Heading", r"\# Heading"),
        ("-# small", r"\-\# small"),
        ("[free nitro](https://evil.example)", r"\[free nitro\]\(https\://evil.example\)"),
        ("<@123> @everyone @here", r"\<\@123\> \@everyone \@here"),
        ("<t:0:R> <#42> <:emoji:1>", r"\<t\:0\:R\> \<\#42\> \<\:emoji\:1\>"),
        ("back\\slash", r"back\\slash"),
    ],
)
def test_markdown_mentions_and_links_are_escaped(name: str, escaped: str) -> None:
    assert escape_discord_markdown(name) == escaped


@pytest.mark.parametrize("name", ["Player", "Zoë 42", "李小龍", "Ana María", "x.y"])
def test_plain_names_are_unchanged(name: str) -> None:
    assert escape_discord_markdown(name) == name


def test_a_line_break_cannot_start_a_new_markdown_line() -> None:
    assert escape_discord_markdown("a\n# big\r\n> quote") == r"a \# big \> quote"


@pytest.mark.parametrize(
    "name", ["**bold** <@123> @everyone", "\\*not bold\\*", "||\\||", "a\\", "[x](y) `z`"]
)
def test_discord_shows_exactly_the_name_and_no_special_character_is_left_bare(name: str) -> None:
    escaped = escape_discord_markdown(name)
    assert unescaped(escaped) == name
    # Every special character is preceded by its own backslash.
    pairs = re.findall(r"\\(.)|(.)", escaped, re.S)
    assert all(bare not in SPECIAL for _, bare in pairs if bare)
