"""Group commit for the answer path.

Clicks that arrive while an answer transaction is in flight wait for it and
then share the next one, so a burst of N clicks costs a handful of short
transactions instead of N, and a lone click still goes straight through.

Under steady clicking the writer paces itself: a transaction starts at most
every BATCH_INTERVAL, and the answers arriving in between share it. Without
that, clicks a few milliseconds apart (200 a second) each found the writer idle
and each paid a transaction of its own, whose fixed cost is most of a click's
CPU: the process ran near a full core and clicks queued behind one another
(bench/discord_clicks.py). A click after a quiet spell is not held.

One bad row must not cost the others their answer: a batch that fails is
stored again one row at a time, so only the row that cannot be stored fails.
"""

from __future__ import annotations

import asyncio
import logging

from bot.storage.answers import AnswerStore
from bot.storage.records import NewAnswer

log = logging.getLogger(__name__)

MAX_BATCH = 500
# Seconds between the starts of two transactions while answers keep coming: at
# most this much is added to a click's wait, and only while others are writing.
BATCH_INTERVAL = 0.01


class AnswerWriter:
    def __init__(self, store: AnswerStore) -> None:
        self.store = store
        self._pending: list[tuple[NewAnswer, asyncio.Future[bool]]] = []
        self._flusher: asyncio.Task[None] | None = None
        self._last_started = float("-inf")  # loop time the last transaction began

    async def record(self, answer: NewAnswer) -> bool:
        """Store the answer; true if it counted (first answer, post still open).

        Returns only once the answer is committed; raises if it could not be."""
        future: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        self._pending.append((answer, future))
        if self._flusher is None or self._flusher.done():
            self._flusher = asyncio.create_task(self._flush(), name="answer-writer")
        return await future

    async def drain(self) -> None:
        """Wait until every answer handed in so far is stored (at shutdown)."""
        while self._flusher is not None and not self._flusher.done():
            await asyncio.shield(self._flusher)

    async def _flush(self) -> None:
        """Start a transaction for the pending answers whenever fewer than the
        store's `concurrent_writes` are running. On PostgreSQL several batches
        then overlap their round trips and commits; SQLite has one writer."""
        loop = asyncio.get_running_loop()
        running: set[asyncio.Task[None]] = set()
        while self._pending or running:
            if not self._pending or len(running) >= self.store.concurrent_writes:
                _, running = await asyncio.wait(running, return_when=asyncio.FIRST_COMPLETED)
                continue
            wait = self._last_started + BATCH_INTERVAL - loop.time()
            if wait > 0 and len(self._pending) < MAX_BATCH:
                # A full batch goes at once; a small one waits for company.
                await asyncio.sleep(wait)
            self._last_started = loop.time()
            batch, self._pending = self._pending[:MAX_BATCH], self._pending[MAX_BATCH:]
            running.add(asyncio.create_task(self._store(batch), name="answer-batch"))

    async def _store(self, batch: list[tuple[NewAnswer, asyncio.Future[bool]]]) -> None:
        try:
            counted = await self.store.record_answers([answer for answer, _ in batch])
        except Exception:
            log.warning("a batch of %d answers failed; storing them one by one", len(batch))
            await self._one_by_one(batch)
            return
        for (_, future), result in zip(batch, counted, strict=True):
            if not future.done():
                future.set_result(result)

    async def _one_by_one(self, batch: list[tuple[NewAnswer, asyncio.Future[bool]]]) -> None:
        for answer, future in batch:
            try:
                [counted] = await self.store.record_answers([answer])
            except Exception as error:
                log.warning("could not store an answer to post %s: %s", answer.post.id, error)
                if not future.done():
                    future.set_exception(error)
                continue
            if not future.done():
                future.set_result(counted)
