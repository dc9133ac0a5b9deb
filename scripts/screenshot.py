"""Draw docs/terminal.svg: a real three-question `quizmaster play` on the shipped
bank, recorded by rich as it draws (the README's picture of the game).

Run it after changing how the terminal game looks:

    .venv/bin/python scripts/screenshot.py
"""

from __future__ import annotations

import asyncio
import io
import random
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bot.adapters.console.frontends import play  # noqa: E402
from bot.adapters.console.screen import Screen  # noqa: E402
from bot.clock import SystemClock  # noqa: E402
from bot.quiz.bank import load_banks  # noqa: E402
from bot.quiz.service import QuizService  # noqa: E402
from bot.storage.db import open_database, upgrade  # noqa: E402
from bot.storage.repository import Repository  # noqa: E402

ANSWERS = ["B", "A", "C"]
OUT = ROOT / "docs" / "terminal.svg"
START_LINE = "Stats in ~/.local/share/quizmaster/quizmaster.db · 1 bank, 30 questions"


class Typed(Screen):
    """A recorded screen that shows the countdown as it stood when each letter
    was typed, and the letter itself (piped input is not echoed)."""

    def __init__(self, answers: Sequence[str]) -> None:
        super().__init__(io.StringIO(), colour=True, record=True)
        self.answers = list(answers)

    def answer_prompt(self, seconds_left: int, letters: Sequence[str]) -> None:
        self._print(self._countdown_text(seconds_left - 4, letters))
        self._print(f"› {self.answers.pop(0) if self.answers else ''}")


async def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        database = open_database(f"sqlite+aiosqlite:///{folder}/quiz.db")
        await upgrade(database.writer)
        catalog, _ = load_banks([ROOT / "questions"], log_problems=False)
        service = QuizService(Repository(database), catalog, SystemClock(), rng=random.Random(26))
        screen = Typed(ANSWERS)
        timers = asyncio.create_task(service.run_timers())
        try:
            await play(
                service,
                questions=len(ANSWERS),
                seconds=20,
                bank=None,
                tag=None,
                source=io.StringIO("".join(f"{a}\n" for a in ANSWERS)),
                start_line=START_LINE,
                screen=screen,
            )
        finally:
            timers.cancel()
            service.shutdown()
            await service.drain()
            await database.dispose()
    screen.console.save_svg(str(OUT), title="make play")
    print(f"wrote {OUT.relative_to(ROOT)}")


if __name__ == "__main__":
    asyncio.run(main())
