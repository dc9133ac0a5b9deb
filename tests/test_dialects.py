"""Each platform's dialect: the same text, written the way that platform needs
(hostile display names and bank text made inert, "workspace" on Slack)."""

from __future__ import annotations

from datetime import UTC, datetime

from bot.adapters.console.adapter import ConsoleAdapter
from bot.adapters.discord.dialect import DISCORD_DIALECT
from bot.adapters.slack.dialect import SLACK_DIALECT
from bot.chat import Target
from bot.dialect import PLAIN
from bot.domain.records import PostTally, RankRow
from bot.domain.rules import Period, Scope
from bot.quiz import texts
from bot.quiz.bank import Question
from bot.quiz.connections import Connections
from bot.quiz.texts.questions import QuestionView
from tests.fakes.recording import RecordingAdapter

HOSTILE_NAME = "<!channel> **Bo** & <@U1>"
ROWS = [RankRow("U9", 25, 2, 3)]
NAMES = {"U9": HOSTILE_NAME}
WHEN = datetime(2026, 3, 18, 15, 30, 5, tzinfo=UTC)


def _view() -> QuestionView:
    question = Question(
        id="hostile-1",
        prompt="Is 1 < 2 & `x` <!here>?",
        options=["yes <b>", "no **really**"],
        answer="A",
        explanation="Because <@U2> & co said so.",
    )
    return QuestionView(1, "Bank <x>", question, [0, 1], 1, 3, WHEN, 30)


def test_slack_escapes_names_and_bank_text_and_says_workspace() -> None:
    board = texts.boards.leaderboard(ROWS, SLACK_DIALECT, Scope.COMMUNITY, Period.WEEK, NAMES)
    assert board.title == "Leaderboard: this workspace, this week"
    assert "🥇 &lt;!channel&gt; **Bo** &amp; &lt;@U1&gt;: 25 pts (2/3 correct)" in board.body
    channel = texts.boards.leaderboard(ROWS, SLACK_DIALECT, Scope.CHANNEL, Period.WEEK, NAMES)
    assert channel.title == "Leaderboard: this channel, this week"
    posted = texts.questions.question(_view(), SLACK_DIALECT)
    assert posted.title == "Bank &lt;x&gt; · Question 1/3"
    assert posted.body.startswith("Is 1 &lt; 2 &amp; `x` &lt;!here&gt;?\n\n**A.** yes &lt;b&gt;")
    revealed = texts.questions.reveal(_view(), 0, PostTally([1, 0], 1, "U9"), SLACK_DIALECT)
    assert "Because &lt;@U2&gt; &amp; co said so." in revealed.text
    assert "First correct: <@U9>" in revealed.text  # our own mention stays live
    assert texts.questions.closes(WHEN, SLACK_DIALECT) == (
        "Closes <!date^1773847805^{date_short_pretty} at {time_secs}|2026-03-18 15:30:05 UTC>"
    )


def test_discord_escapes_names_keeps_bank_markdown_and_says_server() -> None:
    board = texts.boards.leaderboard(ROWS, DISCORD_DIALECT, Scope.COMMUNITY, Period.ALL, NAMES)
    assert board.title == "Leaderboard: this server, all time"
    assert r"🥇 \<!channel\> \*\*Bo\*\* & \<\@U1\>: 25 pts" in board.body
    posted = texts.questions.question(_view(), DISCORD_DIALECT)
    # Bank markdown is meant to show; every Discord send disables mentions.
    assert posted.body.startswith("Is 1 < 2 & `x` <!here>?\n\n**A.** yes <b>")
    assert texts.questions.closes(WHEN, DISCORD_DIALECT) == "Closes <t:1773847805:R>"


def test_console_names_the_local_player_you_and_leaves_text_alone() -> None:
    console = ConsoleAdapter.dialect
    board = texts.boards.leaderboard(
        [RankRow("local", 10, 1, 1), *ROWS], console, Scope.COMMUNITY, Period.WEEK, NAMES
    )
    assert board.title == "Leaderboard: this server, this week"
    assert board.body.splitlines() == [
        "🥇 you: 10 pts (1/1 correct)",
        "🥈 U9: 25 pts (2/3 correct)",
    ]
    posted = texts.questions.question(_view(), console)
    assert posted.body.startswith("Is 1 < 2 & `x` <!here>?\n\n**A.** yes <b>")


def test_platforms_without_a_dialect_are_written_plainly() -> None:
    board = texts.boards.leaderboard(ROWS, PLAIN, Scope.COMMUNITY, Period.WEEK, NAMES)
    assert board.title == "Leaderboard: this server, this week"
    assert f"🥇 {HOSTILE_NAME}: 25 pts" in board.body
    assert PLAIN.mention("U9") == "<@U9>"
    assert PLAIN.mention("U8", NAMES) == "a member"


def test_connections_find_the_registered_adapters_dialect_else_the_plain_one() -> None:
    connections = Connections()
    connections.register(RecordingAdapter("slack", dialect=SLACK_DIALECT))
    assert connections.dialect(Target("slack", "T1", "C1")) is SLACK_DIALECT
    assert connections.dialect(Target("elsewhere", "T1", "C1")) is PLAIN


def test_a_members_words_reach_the_terminal_as_typed_and_without_escapes() -> None:
    import io

    from bot.adapters.console.screen import Screen
    from bot.quiz.texts.health import Judged
    from bot.storage.reports import ReportInfo

    escapes = "\x1b]0;owned\x07\x1b[2K\x1b]52;c;ZWNobyBvd25lZA==\x07"
    said = f"[bold red]fake[/bold red] {escapes}typo\nsecond line"
    report = ReportInfo(
        1, "console", "local", "terminal", "q-1", f"odd{escapes}", "typo", said, "open", WHEN
    )
    card = texts.health.report_card(
        report, Judged("q-1", None, None, ()), 1, ConsoleAdapter.dialect
    )
    out = io.StringIO()
    Screen(out, colour=True).message(card)
    shown = out.getvalue()
    # rich reads no markup in it; what is left of each escape sequence is inert text.
    assert "typo: [bold red]fake[/bold red] ]0;owned[2K]52;c;ZWNobyBvd25lZA==typo" in shown
    assert "second line" in shown and "odd" in shown
    assert "\x1b]" not in shown and "\x1b[2K" not in shown and "\x07" not in shown
