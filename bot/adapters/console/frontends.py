"""Terminal front ends: `quizmaster play` and the local console channel of `run`."""

from __future__ import annotations

import asyncio
from typing import TextIO

from bot.adapters.console.adapter import CONSOLE_TARGET, LOCAL_USER, ConsoleAdapter, LineReader
from bot.chat import Command
from bot.quiz import texts
from bot.quiz.service import QuizService
from bot.quiz.surface.grammar import UsageError, parse


async def _next_line_or_change(
    reader: LineReader, console: ConsoleAdapter
) -> tuple[bool, str | None]:
    """Wait for a typed line or a change on screen. (True, line) when a line came."""
    console.changed.clear()
    get_line = asyncio.ensure_future(reader.lines.get())
    changed = asyncio.ensure_future(console.changed.wait())
    done, _ = await asyncio.wait({get_line, changed}, return_when=asyncio.FIRST_COMPLETED)
    changed.cancel()
    if get_line in done:
        return True, get_line.result()
    get_line.cancel()
    return False, None


async def play(
    service: QuizService,
    *,
    questions: int,
    seconds: int,
    bank: str | None,
    tag: str | None,
    source: TextIO | None = None,
    out: TextIO | None = None,
) -> int:
    """A live quiz for the local player; each question closes once answered."""
    # A quiz left running by an interrupted run would block this one: end it
    # quietly, before the console is attached to show it.
    await service.stop(CONSOLE_TARGET)
    console = ConsoleAdapter(out, surface=service.surface)
    service.register(console)
    finished = asyncio.Event()
    service.on_quiz_end(lambda target: finished.set() if target == CONSOLE_TARGET else None)
    reply = await service.start(
        CONSOLE_TARGET,
        LOCAL_USER,
        questions=questions,
        seconds=seconds,
        bank=bank,
        tag=tag,
        expected_players=1,
    )
    await console.reply_private(Command("start", CONSOLE_TARGET, LOCAL_USER), reply)
    if console.open_question is None and not finished.is_set():
        return 1  # the quiz did not start; the reply said why

    reader = LineReader(source)
    answered: set[str] = set()
    while not finished.is_set():
        question = console.open_question
        if question is None or question[0] in answered:
            # Wait for the next question (or the end) before reading more input.
            waiter = asyncio.ensure_future(finished.wait())
            console.changed.clear()
            changed = asyncio.ensure_future(console.changed.wait())
            await asyncio.wait({waiter, changed}, return_when=asyncio.FIRST_COMPLETED)
            waiter.cancel()
            changed.cancel()
            continue
        got_line, line = await _next_line_or_change(reader, console)
        if not got_line:
            continue
        if line is None:  # input ended: stop, showing the answer and the scores
            await service.stop(CONSOLE_TARGET)
            break
        click = console.click_for(line)
        if click is None:
            if line.strip():
                await console.reply_private(
                    Command("play", CONSOLE_TARGET, LOCAL_USER),
                    texts.common.pick_a_letter(list(question[1])),
                )
            continue
        if service.surface.is_answer(click.custom_id):
            answered.add(question[0])  # other buttons (a hint) leave the question open
        await console.reply_private(click, await service.handle_click(click))
    await finished.wait()
    stats = await service.stats(CONSOLE_TARGET, LOCAL_USER)
    await console.reply_private(Command("stats", CONSOLE_TARGET, LOCAL_USER), stats)
    return 0


async def review(
    service: QuizService,
    *,
    count: int,
    source: TextIO | None = None,
    out: TextIO | None = None,
) -> int:
    """A review session for the local player: due cards one at a time, a typed
    letter answers; it ends with the last card or the end of input."""
    console = ConsoleAdapter(out, surface=service.surface)
    service.register(console)
    command = Command("review", CONSOLE_TARGET, LOCAL_USER, args={"count": str(count)})
    await console.reply_private(command, await service.handle_command(command))
    reader = LineReader(source) if console.open_card else None
    while reader is not None and console.open_card:
        line = await reader.lines.get()
        if line is None:
            break
        click = console.click_for(line)
        if click is None:
            if line.strip():
                console.hint(texts.common.pick_a_letter(list(console.open_card)))
            continue
        await console.reply_private(click, await service.handle_click(click))
    return 0


async def local_channel(service: QuizService, stopping: asyncio.Event) -> None:
    """An interactive channel in the terminal: `/quiz …` commands and letters."""
    console = ConsoleAdapter(surface=service.surface)
    service.register(console)
    await console.reply_private(
        Command("help", CONSOLE_TARGET, LOCAL_USER), texts.common.console_intro()
    )
    reader = LineReader()
    while not stopping.is_set():
        got_line, line = await _next_line_or_change(reader, console)
        if not got_line:
            continue
        if line is None or line.strip().lower() in ("quit", "exit"):
            stopping.set()
            return
        if not line.strip():
            continue
        click = console.click_for(line)
        if click is not None:
            await console.reply_private(click, await service.handle_click(click))
            continue
        try:
            parsed = parse(line, service.surface)
        except UsageError as problem:
            await console.reply_private(
                Command("help", CONSOLE_TARGET, LOCAL_USER),
                texts.usage.usage_error(str(problem), service.surface),
            )
            continue
        command = Command(
            parsed.name, CONSOLE_TARGET, LOCAL_USER, is_moderator=True, args=parsed.args
        )
        await console.reply_private(command, await service.handle_command(command))
