"""Lifecycle: storage, question banks, the quiz service and its timers, on one loop."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from dataclasses import dataclass, field
from types import TracebackType

from bot.clock import Clock, SystemClock
from bot.config import Settings
from bot.quiz.bank import load_banks
from bot.quiz.service import QuizService
from bot.storage.checkpoints import Checkpoints
from bot.storage.db import Database, open_database, ping, upgrade
from bot.storage.liveness import Liveness
from bot.storage.repository import Repository
from bot.web.links import DashboardLinks
from bot.web.tokens import Signer

log = logging.getLogger(__name__)


@dataclass
class Runtime:
    """Everything the bot runs on. Use as `async with Runtime.build(settings) as rt:`."""

    settings: Settings
    database: Database
    service: QuizService
    links: DashboardLinks | None = None  # None: the dashboard is off (no QUIZ_WEB_SECRET)
    _timers: asyncio.Task[None] | None = field(default=None, repr=False)
    _checkpoints: Checkpoints | None = field(default=None, repr=False)
    _liveness: Liveness = field(default_factory=Liveness, repr=False)

    @classmethod
    def build(cls, settings: Settings, clock: Clock | None = None) -> Runtime:
        database = open_database(settings.resolved_database_url)
        catalog, _ = load_banks([settings.questions_dir])  # problems are logged there
        clock = clock or SystemClock()
        links = None
        if settings.web_secret is not None:
            signer = Signer(settings.web_secret.get_secret_value(), clock)
            links = DashboardLinks(signer, settings.resolved_public_url)
        service = QuizService(Repository(database), catalog, clock, links=links)
        return cls(settings, database, service, links)

    async def __aenter__(self) -> Runtime:
        await upgrade(self.database.writer)
        path = self.database.sqlite_file
        if path is not None:
            # WAL checkpoints in a task of their own, never inside a commit.
            self._checkpoints = Checkpoints(path)
            await self._checkpoints.start(self.database.writer)
        # On PostgreSQL the others know at once when this process dies.
        await self._liveness.start(self.database.writer)
        if not self.service.catalog.banks:
            log.warning("no question banks loaded from %s", self.settings.questions_dir)
        # Deadlines live in the database: the timer loop closes anything overdue
        # from before a restart on its first pass, and re-arms the rest.
        self._timers = asyncio.create_task(self.service.run_timers(), name="quiz-timers")
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.service.shutdown()
        if self._timers is not None:
            self._timers.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._timers
        # Closes and posts in flight finish, and queued answers are committed,
        # before the database goes away.
        await self.service.drain()
        if self._checkpoints is not None:
            await self._checkpoints.stop()
        await self._liveness.stop()
        await self.database.dispose()

    def start_line(self) -> str:
        """Where the data is kept and what was loaded, in one line."""
        from bot.adapters.console.texts import data_line
        from bot.config import LEGACY_DATA_DIR

        banks = self.service.catalog.banks.values()
        return data_line(
            self.settings.database_place(),
            len(banks),
            sum(len(bank.questions) for bank in banks),
            legacy=not self.settings.database_url and self.settings.data_dir == LEGACY_DATA_DIR,
        )

    async def database_ok(self) -> bool:
        # A read connection: on SQLite the one write connection stores answers,
        # and a flood of /healthz must never queue in front of them.
        return await ping(self.database.reader)
