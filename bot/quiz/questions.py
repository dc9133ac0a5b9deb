"""The questions a channel draws from: the file banks (`Catalog`) plus its own
community's bank, which members grow through reviewed submissions and which
lives in the database.

Drawing (live quizzes, daily posts) asks `pool` with the channel's target, so a
community's questions are only ever drawn in that community. Look-ups by id
(`question`, `bank_of`) stay synchronous for the click and reveal paths: a
community question is cached once it was drawn or `ensure`d, and it never
changes once accepted (a removal only stops it being drawn)."""

from __future__ import annotations

import logging
from collections.abc import Iterable
from datetime import datetime, timedelta
from itertools import groupby
from pathlib import Path
from typing import Any, Protocol

from pydantic import ValidationError

from bot.chat import Target
from bot.clock import Clock
from bot.dialect import MemberText
from bot.quiz.bank import RESERVED_BANK, Bank, Catalog, Question, play_fields
from bot.storage.submissions import SubmissionInfo, SubmissionStore, submission_id

log = logging.getLogger(__name__)


class Withdrawn(Protocol):
    """Where the questions removed from a community's draw are kept (ReportStore)."""

    async def withdrawn(self, platform: str, community: str) -> set[str]: ...


COMMUNITY_BANK = RESERVED_BANK
COMMUNITY_TITLE = "Community questions"
# How long a community's list of questions is reused before it is read again:
# another process's accept or remove shows within this time.
POOL_TTL = timedelta(seconds=30)
POOL_CACHE_SIZE = 10_000  # communities whose lists are kept


def as_question(row: SubmissionInfo) -> Question | None:
    """The stored question, checked by the bank schema (it was when submitted)."""
    try:
        return Question.model_validate({**row.question, "id": row.question_id})
    except ValidationError:
        log.warning("community question %s no longer validates; left out", row.question_id)
        return None


def _member_written(question: Question) -> Question:
    """The question with its texts marked as a member's, so every dialect shows
    them literally wherever they are drawn, revealed or reviewed."""

    def mark(text: str | None) -> MemberText | None:
        return None if text is None else MemberText(text)

    return question.model_copy(
        update={
            "prompt": mark(question.prompt),
            "options": [MemberText(option) for option in question.options],
            "explanation": mark(question.explanation),
            "hint": mark(question.hint),
            "image_alt": mark(question.image_alt),
        }
    )


class Questions:
    def __init__(
        self,
        catalog: Catalog,
        store: SubmissionStore,
        clock: Clock,
        withdrawn: Withdrawn | None = None,
    ) -> None:
        self.catalog = catalog
        self.store = store
        self.clock = clock
        self.withdrawn = withdrawn
        self._withdrawn: dict[tuple[str, str], tuple[datetime, set[str]]] = {}
        self.community_bank = Bank(COMMUNITY_BANK, COMMUNITY_TITLE, "", (), Path("<database>"))
        self._cached: dict[str, Question] = {}
        self._pools: dict[tuple[str, str], tuple[datetime, list[str]]] = {}

    # -- drawing ------------------------------------------------------------------

    def bank_names(self) -> list[str]:
        return [*sorted(self.catalog.banks), COMMUNITY_BANK]

    def known_bank(self, bank: str | None) -> bool:
        return bank is None or bank == COMMUNITY_BANK or bank in self.catalog.banks

    async def pool(
        self, target: Target, bank: str | None, tag: str | None, language: str | None = None
    ) -> list[str]:
        """Question ids this channel may draw, in a stable order: the file banks'
        (those in `language` first, see Catalog.pool) and its own community's
        (with no bank named, or bank `community`)."""
        found = [] if bank == COMMUNITY_BANK else self.catalog.pool(bank, tag, language)
        if bank is None or bank == COMMUNITY_BANK:
            for question_id in await self._community_ids(target):
                question = self._cached.get(question_id)
                if question is not None and (tag is None or tag in question.tags):
                    found.append(question_id)
        gone = await self._withdrawn_ids(target)
        return [question_id for question_id in found if question_id not in gone] if gone else found

    async def _withdrawn_ids(self, target: Target) -> set[str]:
        """Questions moderators removed from this community's draw (cached like the pool)."""
        if self.withdrawn is None:
            return set()
        key = (target.platform, target.community)
        now = self.clock.now()
        cached = self._withdrawn.get(key)
        if cached is not None and now - cached[0] < POOL_TTL:
            return cached[1]
        ids = await self.withdrawn.withdrawn(target.platform, target.community)
        self._withdrawn.pop(key, None)
        self._withdrawn[key] = (now, ids)
        if len(self._withdrawn) > POOL_CACHE_SIZE:
            del self._withdrawn[next(iter(self._withdrawn))]
        return ids

    async def _community_ids(self, target: Target) -> list[str]:
        key = (target.platform, target.community)
        now = self.clock.now()
        cached = self._pools.get(key)
        if cached is not None and now - cached[0] < POOL_TTL:
            return cached[1]
        rows = await self.store.community_bank(target.platform, target.community)
        ids = [row.question_id for row in rows if self._remember(row)]
        self._pools.pop(key, None)
        self._pools[key] = (now, ids)
        if len(self._pools) > POOL_CACHE_SIZE:
            # Bounded like the other caches: the community read longest ago goes.
            del self._pools[next(iter(self._pools))]
        return ids

    def changed(self, target: Target) -> None:
        """This community's bank changed here: read it afresh on the next draw."""
        self._pools.pop((target.platform, target.community), None)
        self._withdrawn.pop((target.platform, target.community), None)

    # -- look-ups -------------------------------------------------------------------

    async def ensure(self, question_ids: Iterable[str]) -> None:
        """Load the community questions among `question_ids` not cached yet (a
        post made by another process, or before a restart)."""
        missing = [
            number
            for question_id in question_ids
            if question_id not in self._cached
            and (number := submission_id(question_id)) is not None
        ]
        for row in await self.store.questions(missing):
            self._remember(row)

    def _remember(self, row: SubmissionInfo) -> bool:
        if row.question_id not in self._cached:
            question = as_question(row)
            if question is None:
                return False
            self._cached[row.question_id] = _member_written(question)
        return True

    def question(self, question_id: str) -> Question | None:
        return self.catalog.question(question_id) or self._cached.get(question_id)

    def bank_of(self, question_id: str) -> Bank | None:
        if question_id in self._cached:
            return self.community_bank
        return self.catalog.bank_of(question_id)


def export_community(rows: Iterable[SubmissionInfo]) -> list[dict[str, Any]]:
    """Each community's bank in the export format (`bank.export`), with the
    platform and community it belongs to and each question's author."""
    banks = []
    for (platform, community), group in groupby(rows, lambda row: (row.platform, row.community)):
        questions = []
        for row in group:
            question = as_question(row)
            if question is None:
                continue
            questions.append(
                {
                    "id": question.id,
                    "prompt": question.prompt,
                    "options": list(question.options),
                    "answer": question.answer_index,
                    "explanation": question.explanation,
                    "tags": list(question.tags),
                    "difficulty": question.difficulty.value,
                    **play_fields(question),
                    "author": row.author_id,
                    "author_name": row.author_name,
                }
            )
        banks.append(
            {
                "id": COMMUNITY_BANK,
                "title": COMMUNITY_TITLE,
                "platform": platform,
                "community": community,
                "questions": questions,
            }
        )
    return banks
