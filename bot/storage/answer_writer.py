"""Group commit for the answer path.

Clicks that arrive while an answer transaction is in flight wait for it and
then share the next one, so a burst of N clicks costs a handful of short
transactions instead of N, and a lone click still goes straight through.
"""

from __future__ import annotations

import asyncio
import logging

from bot.storage.repository import NewAnswer, Repository

log = logging.getLogger(__name__)

MAX_BATCH = 500


class AnswerWriter:
    def __init__(self, repository: Repository) -> None:
        self.repository = repository
        self._pending: list[tuple[NewAnswer, asyncio.Future[bool]]] = []
        self._flusher: asyncio.Task[None] | None = None

    async def record(self, answer: NewAnswer) -> bool:
        """Store the answer; true if it counted (first answer, post still open)."""
        future: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        self._pending.append((answer, future))
        if self._flusher is None or self._flusher.done():
            self._flusher = asyncio.create_task(self._flush(), name="answer-writer")
        return await future

    async def _flush(self) -> None:
        while self._pending:
            batch, self._pending = self._pending[:MAX_BATCH], self._pending[MAX_BATCH:]
            try:
                counted = await self.repository.record_answers([answer for answer, _ in batch])
            except Exception as error:  # every click in the batch hears about it
                for _, future in batch:
                    if not future.done():
                        future.set_exception(error)
                continue
            for (_, future), result in zip(batch, counted, strict=True):
                if not future.done():
                    future.set_result(result)
