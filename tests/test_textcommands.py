"""`/quiz start` typed as text (Slack, the terminal): the shape help shows,
`[questions] [seconds] [bank] [tag]`, with `bank=ID` and `tag=TAG` as well."""

from __future__ import annotations

import pytest

from bot.quiz import texts
from bot.quiz.surface.grammar import ParsedCommand, UsageError, parse

BANK = "pytorch-distributed-training"


@pytest.mark.parametrize(
    ("text", "args"),
    [
        ("start", {}),
        ("start 5", {"questions": "5"}),
        ("start 5 30", {"questions": "5", "seconds": "30"}),
        (f"start 5 30 {BANK}", {"questions": "5", "seconds": "30", "bank": BANK}),
        (f"start 5 30 {BANK} ddp", {"questions": "5", "seconds": "30", "bank": BANK, "tag": "ddp"}),
        (f"/quiz start {BANK}", {"bank": BANK}),
        (f"start 3 {BANK} ddp", {"questions": "3", "bank": BANK, "tag": "ddp"}),
        (
            f"start 5 30 bank={BANK} ddp",
            {"questions": "5", "seconds": "30", "bank": BANK, "tag": "ddp"},
        ),
        (f"start tag=ddp 5 {BANK}", {"questions": "5", "bank": BANK, "tag": "ddp"}),
        (
            f"start 5 30 tag=ddp bank={BANK}",
            {"questions": "5", "seconds": "30", "bank": BANK, "tag": "ddp"},
        ),
        ("start 5 30 2024", {"questions": "5", "seconds": "30", "bank": "2024"}),
        ("start -1", {"questions": "-1"}),
    ],
)
def test_start_takes_numbers_first_then_bank_and_tag(text: str, args: dict[str, str]) -> None:
    assert parse(text).args == args


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        (f"start 5 30 {BANK} ddp extra", "unexpected `extra`"),
        (f"start 5 30 {BANK} bank=other", "bank is given twice"),
        ("start tag=a tag=b", "tag is given twice"),
        ("start 5 30 colour=blue", "unknown option `colour=blue`"),
        ("start bank=", "unknown option `bank=`"),
    ],
)
def test_start_refuses_what_it_cannot_place(text: str, problem: str) -> None:
    with pytest.raises(UsageError, match=problem):
        parse(text)


def test_help_and_usage_show_the_same_start_shape() -> None:
    shape = "/quiz start [questions] [seconds] [bank] [tag]"
    assert shape in texts.usage.help_message().text
    assert shape in texts.usage.usage_error("unknown command `x`").text


def test_dashboard_is_typed_alone() -> None:
    assert parse("/quiz dashboard") == ParsedCommand("dashboard")
    with pytest.raises(UsageError, match="`dashboard` takes no options"):
        parse("dashboard now")
