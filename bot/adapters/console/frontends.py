"""Terminal front ends: `quizmaster play` and the local console channel of `run`."""

from __future__ import annotations

import asyncio
import math
from dataclasses import dataclass
from datetime import datetime
from typing import TextIO

from bot.adapters.console import texts as say
from bot.adapters.console.adapter import CONSOLE_TARGET, LOCAL_USER, ConsoleAdapter, LineReader
from bot.adapters.console.forms import fill
from bot.adapters.console.ids import bad_member
from bot.adapters.console.program import program
from bot.adapters.console.screen import Screen
from bot.chat import Command, FormSubmission, Interaction, OutMessage
from bot.i18n import from_environment
from bot.quiz import texts
from bot.quiz.service import QuizService
from bot.quiz.surface.grammar import UsageError, parse
from bot.quiz.texts.boards import StatsView


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


@dataclass
class Session:
    """What this game's player has done so far, for the score line and the end."""

    points: int = 0
    right: int = 0
    answered: int = 0
    run: int = 0
    best_run: int = 0
    shown: int = 0  # questions revealed

    def add(self, right: bool, points: int) -> None:
        self.answered += 1
        self.points += points
        self.right += right
        self.run = self.run + 1 if right else 0
        self.best_run = max(self.best_run, self.run)


async def _countdown(
    console: ConsoleAdapter, service: QuizService, deadline: datetime, letters: list[str]
) -> None:
    """Redraw the seconds left once a second until the question closes."""
    while True:
        left = max(0, math.ceil((deadline - service.clock.now()).total_seconds()))
        console.screen.tick(left, letters)
        if left == 0:
            return
        await asyncio.sleep(1 - (service.clock.now().timestamp() % 1))


async def _wait_for_change(console: ConsoleAdapter, finished: asyncio.Event) -> None:
    waiter = asyncio.ensure_future(finished.wait())
    console.changed.clear()
    changed = asyncio.ensure_future(console.changed.wait())
    await asyncio.wait({waiter, changed}, return_when=asyncio.FIRST_COMPLETED)
    waiter.cancel()
    changed.cancel()
    _unless_closed(console)


def _unless_closed(console: ConsoleAdapter) -> None:
    """The screen closed while the core drew on it: end the game as a broken pipe."""
    if console.screen.closed:
        raise BrokenPipeError


async def _outcome(
    service: QuizService, before: StatsView, picked: str | None
) -> tuple[bool | None, int]:
    """Right or wrong (None: not answered) and the points, as the core counted
    them once the question closed."""
    after = await service.scores.stats_view(CONSOLE_TARGET, LOCAL_USER)
    if picked is None:
        return None, 0
    return after.correct > before.correct, after.points - before.points


async def answer_form(service: QuizService, console: ConsoleAdapter, reader: LineReader) -> None:
    """Ask the form a reply opened, field by field, and submit it; a field the
    core finds a problem with is asked again, the others kept."""
    form, console.pending_form = console.pending_form, None
    if form is None:
        return
    values = await fill(form, reader.lines, console.screen)
    while values is not None:
        submitted = FormSubmission(
            CONSOLE_TARGET, LOCAL_USER, form.form_id, values, locale=from_environment()
        )
        reply = await service.handle_form(submitted)
        if not reply.errors:
            if reply.message is not None:
                await console.reply_private(submitted_click(form.form_id), reply.message)
            return
        for problem in reply.errors.values():
            console.screen.info(problem)
        values = await fill(form, reader.lines, console.screen, values=values, only=reply.errors)


def submitted_click(form_id: str) -> Interaction:
    """What a form's reply answers, for the adapter's reply (it needs an event)."""
    return Interaction(CONSOLE_TARGET, LOCAL_USER, form_id, locale=from_environment())


async def _click(
    service: QuizService, console: ConsoleAdapter, reader: LineReader, click: Interaction
) -> None:
    """A typed letter's click, and the form it opens if it opens one."""
    await console.reply_private(click, await service.handle_click(click))
    await answer_form(service, console, reader)


async def _offer_reports(
    service: QuizService, console: ConsoleAdapter, reader: LineReader, reports: list[str]
) -> None:
    """After the game: "! 2" reports the game's second question, Enter leaves."""
    console.screen.info(say.report_which(len(reports)))
    while True:
        line = await reader.lines.get()
        typed = (line or "").strip()
        if not typed.startswith("!"):
            return
        number = typed[1:].strip() or ("1" if len(reports) == 1 else "")
        if not number.isdigit() or not 1 <= int(number) <= len(reports):
            console.screen.info(say.no_such_question(typed, len(reports)))
            continue
        await _click(
            service,
            console,
            reader,
            Interaction(
                CONSOLE_TARGET, LOCAL_USER, reports[int(number) - 1], locale=from_environment()
            ),
        )
        console.screen.info(say.report_which(len(reports)))


async def speak_the_terminals_language(service: QuizService) -> None:
    """The terminal's community is its one player's: its posts (the questions,
    the reveal) speak the terminal's language, as the replies do."""
    code = from_environment()
    if code is not None:
        await service.channels.set_language(CONSOLE_TARGET, code)


async def play(
    service: QuizService,
    *,
    questions: int,
    seconds: int,
    bank: str | None,
    tag: str | None,
    source: TextIO | None = None,
    out: TextIO | None = None,
    start_line: str | None = None,
    screen: Screen | None = None,
) -> int:
    """A live quiz for the local player; each question closes once answered."""
    # A quiz left running by an interrupted run would block this one: end it
    # quietly, before the console is attached to show it.
    await service.stop(CONSOLE_TARGET)
    await speak_the_terminals_language(service)
    console = ConsoleAdapter(out, surface=service.surface, single_player=True, screen=screen)
    service.register(console)
    finished = asyncio.Event()
    service.on_quiz_end(lambda target: finished.set() if target == CONSOLE_TARGET else None)
    try:
        return await _play(
            service, console, finished, questions, seconds, bank, tag, source, start_line
        )
    except BrokenPipeError:
        # The reader went away (`play | head -1`): stop drawing, close the quiz.
        console.screen.closed = True
        await service.stop(CONSOLE_TARGET)
        return 0


async def _play(
    service: QuizService,
    console: ConsoleAdapter,
    finished: asyncio.Event,
    questions: int,
    seconds: int,
    bank: str | None,
    tag: str | None,
    source: TextIO | None,
    start_line: str | None,
) -> int:
    screen = console.screen
    if start_line:
        screen.info(start_line)
    screen.info(say.starting(questions, seconds))
    reply = await service.start(
        CONSOLE_TARGET,
        LOCAL_USER,
        questions=questions,
        seconds=seconds,
        bank=bank,
        tag=tag,
        expected_players=1,
    )
    _unless_closed(console)
    if console.open_question is None and not finished.is_set():
        screen.note(reply)
        return 1  # the quiz did not start; the reply said why

    reader = LineReader(source)
    session = Session()
    input_ended = False
    reports: list[str] = []  # each revealed question's report button, in order
    while not finished.is_set() or console.open_question is not None:
        question = console.open_question
        if question is None:
            await _wait_for_change(console, finished)
            continue
        message_id = question[0]
        before = await service.scores.stats_view(CONSOLE_TARGET, LOCAL_USER)
        picked = await _ask(service, console, reader, question, finished)
        if picked == "":  # input ended: stop, showing the answer
            input_ended = True
            await service.stop(CONSOLE_TARGET)
        while message_id not in console.reveals and not finished.is_set():
            await _wait_for_change(console, finished)
        reveal = console.reveals.get(message_id)
        if reveal is None:
            break
        if reveal.report is not None:
            reports.append(reveal.report)
        right, points = await _outcome(service, before, picked or None)
        if right is not None:
            session.add(right, points)
        session.shown += 1
        screen.verdict(right, points, reveal.answer)
        screen.explanation(reveal.explanation)
        screen.score(session.points, session.right, session.answered)
        if input_ended:
            break
    await finished.wait()
    if session.shown < questions and not input_ended:
        for message in console.held:  # the quiz ended early: say why
            screen.message(message)
    total = await service.scores.stats_view(CONSOLE_TARGET, LOCAL_USER)
    screen.end_screen(
        say.end_lines(session.points, session.right, session.answered, session.best_run),
        [
            say.all_time(total.answered, total.correct, total.points, total.streak),
            *([say.review_hint(program())] if session.right < session.answered else []),
        ],
    )
    # Only a person at a terminal is asked; a pipe's game ends here as before.
    if reports and not input_ended and reader.interactive:
        await _offer_reports(service, console, reader, reports)
    return 0


async def _ask(
    service: QuizService,
    console: ConsoleAdapter,
    reader: LineReader,
    question: tuple[str, dict[str, str]],
    finished: asyncio.Event,
) -> str | None:
    """Read letters until one answers the open question. The letter answered,
    None when the question closed unanswered, "" when input ended."""
    message_id, keys = question
    letters = list(keys)
    message = console.question_message
    deadline = message.deadline if message else None
    left = max(0, math.ceil((deadline - service.clock.now()).total_seconds())) if deadline else 0
    console.screen.answer_prompt(left, letters)
    ticker = (
        asyncio.create_task(_countdown(console, service, deadline, letters))
        if deadline and console.screen.live
        else None
    )
    try:
        while console.open_question is not None and console.open_question[0] == message_id:
            got_line, line = await _next_line_or_change(reader, console)
            _unless_closed(console)
            if not got_line:
                continue
            if line is None:
                return ""
            click = console.click_for(line)
            if click is None:
                if line.strip():
                    console.hint(texts.common.pick_a_letter(letters))
                continue
            reply = await service.handle_click(click)
            if service.surface.is_answer(click.custom_id):
                if reply in _locked_in(message, hinted=True):
                    console.screen.note(reply)  # it says the hint halves the points
                    return line.strip().upper()
                if reply in _locked_in(message, hinted=False):
                    return line.strip().upper()
            console.screen.note(reply)  # not counted, or a button that is no answer
        console.screen.end_of_prompt()
        return None
    finally:
        if ticker is not None:
            ticker.cancel()


def _locked_in(message: OutMessage | None, *, hinted: bool) -> list[OutMessage]:
    """The replies that say an answer counted: one per button label (letters,
    or True and False)."""
    labels = [button.label for button in message.buttons] if message else []
    return [texts.questions.locked_in(label, hinted) for label in labels]


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
    command = Command(
        "review", CONSOLE_TARGET, LOCAL_USER, args={"count": str(count)}, locale=from_environment()
    )
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
        await _click(service, console, reader, click)
    return 0


async def local_channel(
    service: QuizService,
    stopping: asyncio.Event,
    source: TextIO | None = None,
    out: TextIO | None = None,
) -> None:
    """An interactive channel in the terminal: `/quiz …` commands and letters."""
    console = ConsoleAdapter(out, surface=service.surface)
    service.register(console)
    await console.reply_private(
        Command("help", CONSOLE_TARGET, LOCAL_USER, locale=from_environment()),
        texts.common.console_intro(),
    )
    reader = LineReader(source)
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
            await _click(service, console, reader, click)
            continue
        try:
            parsed = parse(line, service.surface)
        except UsageError as problem:
            await console.reply_private(
                Command("help", CONSOLE_TARGET, LOCAL_USER, locale=from_environment()),
                texts.usage.usage_error(str(problem), service.surface),
            )
            continue
        odd = bad_member(parsed.args)
        if odd is not None:  # refused here, in one line: the core never sees it
            console.hint(texts.common.private(say.not_a_console_member(odd)))
            continue
        command = Command(
            parsed.name,
            CONSOLE_TARGET,
            LOCAL_USER,
            is_moderator=True,
            args=parsed.args,
            locale=from_environment(),
        )
        await console.reply_private(command, await service.handle_command(command))
        await answer_form(service, console, reader)
