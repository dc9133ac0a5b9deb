"""Shared fixtures: a database on SQLite (always) and PostgreSQL (when
QUIZ_TEST_POSTGRES_URL is set), a fake clock, a recording adapter and a service;
and `Host`, which drives the service as people in a channel would."""

from __future__ import annotations

import asyncio
import os
import random
import re
import shutil
import uuid
from collections.abc import AsyncIterator, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path

import asyncpg
import pytest
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.chat import Command, Interaction, OutMessage, Target
from bot.quiz.bank import Catalog, Question, load_banks
from bot.quiz.service import QuizService
from bot.storage.db import Database, create_engine, open_database, upgrade
from bot.storage.models import Base
from bot.storage.repository import Repository
from tests.fakes.clock import FakeClock
from tests.fakes.recording import RecordingAdapter, Sent

ROOT = Path(__file__).resolve().parent.parent
POSTGRES_URL = os.environ.get("QUIZ_TEST_POSTGRES_URL")
SKIP_POSTGRES = "QUIZ_TEST_POSTGRES_URL is not set: PostgreSQL storage tests skipped"

CHANNEL = Target("test", "guild-1", "chan-1")
OTHER_CHANNEL = Target("test", "guild-1", "chan-2")


def _asyncpg_dsn(url: str) -> str:
    return make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)


async def _migrated(
    url: str, search_path: str | None = None, revision: str = "head"
) -> AsyncEngine:
    made = create_engine(url, search_path=search_path)
    await upgrade(made, revision)
    return made


async def _new_schema() -> str:
    assert POSTGRES_URL
    schema = f"t_{uuid.uuid4().hex[:12]}"
    admin = await asyncpg.connect(_asyncpg_dsn(POSTGRES_URL))
    try:
        await admin.execute(f'CREATE SCHEMA "{schema}"')
    finally:
        await admin.close()
    return schema


async def _drop_schemas(schemas: list[str]) -> None:
    assert POSTGRES_URL
    admin = await asyncpg.connect(_asyncpg_dsn(POSTGRES_URL))
    try:
        for schema in schemas:
            await admin.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
    finally:
        await admin.close()


async def _emptied(schema: str) -> bool:
    """Delete every row and restart the ids; false if something still holds a lock."""
    assert POSTGRES_URL
    tables = [table.name for table in reversed(Base.metadata.sorted_tables)]
    admin = await asyncpg.connect(_asyncpg_dsn(POSTGRES_URL))
    try:
        sequences = await admin.fetch(
            "SELECT sequence_name FROM information_schema.sequences WHERE sequence_schema = $1",
            schema,
        )
        statements = ["SET lock_timeout = '5s'"]
        statements += [f'DELETE FROM "{schema}"."{table}"' for table in tables]
        statements += [f'ALTER SEQUENCE "{schema}"."{row[0]}" RESTART' for row in sequences]
        await admin.execute(";".join(statements))
    except asyncpg.exceptions.LockNotAvailableError:
        return False
    finally:
        await admin.close()
    return True


@dataclass
class _Templates:
    """Databases migrated once per session: a SQLite file each test copies, and a
    PostgreSQL schema each test empties (migrations run once, not per test)."""

    folder: Path
    sqlite: Path | None = None
    schema: str | None = None
    schemas: list[str] = field(default_factory=list)

    async def sqlite_copy(self, path: Path) -> Path:
        if self.sqlite is None:
            template = self.folder / "template.db"
            await (await _migrated(f"sqlite+aiosqlite:///{template}")).dispose()
            self.sqlite = template
        shutil.copyfile(self.sqlite, path)
        return path

    async def postgres_schema(self) -> str:
        assert POSTGRES_URL
        if self.schema is not None and await _emptied(self.schema):
            return self.schema
        self.schema = await _new_schema()
        self.schemas.append(self.schema)
        await (await _migrated(POSTGRES_URL, self.schema)).dispose()
        return self.schema


@pytest.fixture(scope="session")
def _templates(tmp_path_factory: pytest.TempPathFactory) -> Iterator[_Templates]:
    made = _Templates(tmp_path_factory.mktemp("templates"))
    yield made
    if made.schemas:
        asyncio.run(_drop_schemas(made.schemas))


@pytest.fixture(params=["sqlite", "postgresql"])
async def database(
    request: pytest.FixtureRequest, tmp_path: Path, _templates: _Templates
) -> AsyncIterator[Database]:
    """A migrated, empty database of the test's own: a copy of a migrated SQLite
    file (with its read-only connections, as the bot runs it), or the session's
    PostgreSQL schema emptied (one test at a time)."""
    if request.param == "sqlite":
        path = await _templates.sqlite_copy(tmp_path / "quiz.db")
        made = open_database(f"sqlite+aiosqlite:///{path}")
    else:
        if not POSTGRES_URL:
            pytest.skip(SKIP_POSTGRES)
        made = open_database(POSTGRES_URL, search_path=await _templates.postgres_schema())
    try:
        yield made
    finally:
        await made.dispose()


@pytest.fixture
def engine(database: Database) -> AsyncEngine:
    """The test database's write engine, for tests that run their own SQL."""
    return database.writer


@pytest.fixture(params=["sqlite", "postgresql"])
async def fresh_engine(
    request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[AsyncEngine]:
    """A database just migrated from nothing by `upgrade`; PostgreSQL in a schema
    of its own. For tests of the migrations themselves."""
    if request.param == "sqlite":
        made = await _migrated(f"sqlite+aiosqlite:///{tmp_path / 'quiz.db'}")
        try:
            yield made
        finally:
            await made.dispose()
        return
    if not POSTGRES_URL:
        pytest.skip(SKIP_POSTGRES)
    schema = await _new_schema()
    try:
        made = await _migrated(POSTGRES_URL, schema)
        try:
            yield made
        finally:
            await made.dispose()
    finally:
        await _drop_schemas([schema])


@pytest.fixture(params=["sqlite", "postgresql"])
async def engine_at_0005(
    request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[AsyncEngine]:
    """A database migrated only to revision 0005, the schema before the read
    models: for tests of upgrading a database that already holds answers."""
    if request.param == "sqlite":
        made = await _migrated(f"sqlite+aiosqlite:///{tmp_path / 'quiz.db'}", revision="0005")
        try:
            yield made
        finally:
            await made.dispose()
        return
    if not POSTGRES_URL:
        pytest.skip(SKIP_POSTGRES)
    schema = await _new_schema()
    try:
        made = await _migrated(POSTGRES_URL, schema, revision="0005")
        try:
            yield made
        finally:
            await made.dispose()
    finally:
        await _drop_schemas([schema])


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture(scope="session")
def catalog() -> Catalog:
    found, problems = load_banks([ROOT / "questions"])
    assert not problems, problems
    return found


@pytest.fixture
def adapter() -> RecordingAdapter:
    return RecordingAdapter()


@pytest.fixture
def repository(database: Database) -> Repository:
    return Repository(database)


@pytest.fixture
def service(
    repository: Repository, catalog: Catalog, clock: FakeClock, adapter: RecordingAdapter
) -> QuizService:
    made = QuizService(repository, catalog, clock, rng=random.Random(7))
    made.register(adapter)
    return made


# -- driving a service as people in a channel would ----------------------------

OPTION_LINE = re.compile(r"^([A-E])\. (.+)$", re.MULTILINE)
RANK_LINE = re.compile(r"<@([^>]+)>: (\d+) pts \((\d+)/(\d+) correct\)")
TAG_LINE = re.compile(r"^([a-z0-9-]+): (\d+%|–) of (\d+)$", re.MULTILINE)


def shown_options(message: OutMessage) -> dict[str, str]:
    """Letter → option text, as a question's plain text lists them."""
    return dict(OPTION_LINE.findall(message.text))


def ranking(message: OutMessage) -> list[tuple[str, int]]:
    """(user id, points) per line of a leaderboard or scoreboard, top first."""
    return [(user, int(points)) for user, points, _, _ in RANK_LINE.findall(message.text)]


@dataclass(frozen=True)
class Stats:
    answered: int
    correct: int
    accuracy: str
    points: int
    per_tag: dict[str, tuple[str, int]]  # tag → (accuracy, answered)


def parse_stats(message: OutMessage) -> Stats:
    def number(label: str) -> re.Match[str]:
        found = re.search(rf"^{label}: (\d+)(?: \((\d+%|–)\))?", message.text, re.MULTILINE)
        assert found, f"no {label} in {message.text!r}"
        return found

    correct = number("Correct")
    return Stats(
        answered=int(number("Answered")[1]),
        correct=int(correct[1]),
        accuracy=correct[2],
        points=int(number("Points")[1]),
        per_tag={tag: (share, int(n)) for tag, share, n in TAG_LINE.findall(message.text)},
    )


@dataclass
class Host:
    """Pushes commands and clicks into a service and reads back what people see."""

    service: QuizService
    adapter: RecordingAdapter
    catalog: Catalog
    clock: FakeClock

    async def command(
        self,
        name: str,
        target: Target = CHANNEL,
        *,
        user: str = "mod",
        moderator: bool = True,
        options: Mapping[str, str | int] | None = None,
        **args: str | int,
    ) -> OutMessage:
        """`/quiz <name>` from `user`; arguments as keywords or as `options`."""
        arguments = {key: str(value) for key, value in {**(options or {}), **args}.items()}
        return await self.service.handle_command(
            Command(name, target, user, is_moderator=moderator, args=arguments)
        )

    async def start(self, target: Target = CHANNEL, **args: str | int) -> OutMessage:
        reply = await self.command("start", target, options=args)
        assert reply.text.startswith("Starting a quiz"), reply.text
        return reply

    def current(self, target: Target = CHANNEL) -> Sent:
        return self.adapter.last_question(target)

    def question_of(self, sent: Sent) -> Question:
        """The bank question a posted message shows, found by its prompt."""
        matches = [
            question
            for question_id in self.catalog.pool()
            if (question := self.catalog.question(question_id)) is not None
            and question.prompt in sent.message.text
        ]
        assert len(matches) == 1, f"cannot tell which question {sent.message.text!r} shows"
        return matches[0]

    def correct_letter(self, target: Target = CHANNEL, sent: Sent | None = None) -> str:
        """The letter under which the posted message shows the bank's right answer."""
        sent = sent or self.current(target)
        question = self.question_of(sent)
        right = question.options[question.answer_index]
        letters = [letter for letter, text in shown_options(sent.message).items() if text == right]
        assert len(letters) == 1, f"the right answer {right!r} is not shown once"
        return letters[0]

    def wrong_letter(self, target: Target = CHANNEL) -> str:
        right = self.correct_letter(target)
        return next(b.label for b in self.current(target).message.buttons if b.label != right)

    async def click(self, user: str, letter: str, target: Target = CHANNEL) -> OutMessage:
        custom_id = self.adapter.button_id(target, letter)
        return await self.service.handle_click(Interaction(target, user, custom_id))

    async def click_on(self, sent: Sent, user: str, letter: str) -> OutMessage:
        """Click a letter on a particular (perhaps older) posted question."""
        [button] = [button for button in sent.message.buttons if button.label == letter]
        return await self.service.handle_click(Interaction(sent.target, user, button.custom_id))

    async def answer(self, user: str, *, correct: bool, target: Target = CHANNEL) -> OutMessage:
        letter = self.correct_letter(target) if correct else self.wrong_letter(target)
        reply = await self.click(user, letter, target)
        assert reply.text.startswith("Locked in"), reply.text
        return reply

    async def close_current(self, target: Target = CHANNEL) -> None:
        """Let the current question's deadline pass and fire the timers."""
        deadline = self.current(target).message.deadline
        assert deadline is not None
        self.clock.set(max(deadline, self.clock.now()))
        await self.service.tick()

    async def stats(self, user: str, target: Target = CHANNEL) -> Stats:
        return parse_stats(await self.command("stats", target, user=user, moderator=False))

    async def leaderboard(
        self, target: Target = CHANNEL, *, scope: str = "channel", period: str = "all"
    ) -> list[tuple[str, int]]:
        reply = await self.command(
            "leaderboard", target, user="viewer", moderator=False, scope=scope, period=period
        )
        return ranking(reply)


async def run_until(host: Host, moment: datetime) -> list[tuple[datetime, Sent]]:
    """Let time pass up to `moment` as the timer loop would, ticking at every
    schedule fire time, question deadline and delivery retry on the way. Returns each question
    posted on the way with the moment it was posted."""
    posted: list[tuple[datetime, Sent]] = []
    service = host.service
    for _ in range(10_000):
        upcoming = [
            when
            for when in (
                await service.scheduler.next_fire(),
                await service.repository.posts.next_deadline(timedelta(0)),
                await service.repository.posts.next_publish_retry([host.adapter.platform]),
            )
            if when is not None and when <= moment
        ]
        if not upcoming:
            break
        host.clock.set(max(min(upcoming), host.clock.now()))
        before = len(host.adapter.sent)
        await service.tick()
        posted += [(host.clock.now(), s) for s in host.adapter.sent[before:] if s.message.buttons]
    else:
        raise AssertionError("time does not move on: something stays due")
    host.clock.set(moment)
    before = len(host.adapter.sent)
    await service.tick()
    posted += [(moment, s) for s in host.adapter.sent[before:] if s.message.buttons]
    return posted


def restart(host: Host, seed: int = 11) -> Host:
    """Drop the old service; a new one (with a new adapter) on the same database,
    as after a restart: the old process's messages still exist."""
    service = QuizService(
        host.service.repository, host.catalog, host.clock, rng=random.Random(seed)
    )
    adapter = host.adapter.restarted()
    service.register(adapter)
    return Host(service, adapter, host.catalog, host.clock)


@pytest.fixture
def host(
    service: QuizService, adapter: RecordingAdapter, catalog: Catalog, clock: FakeClock
) -> Host:
    return Host(service, adapter, catalog, clock)
