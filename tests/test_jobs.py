"""The timer loop's jobs: a burst of due work runs a bounded number at a time,
so ten thousand questions closing in one tick do not all hold memory at once,
and one piece that hangs does not hold up the rest."""

from __future__ import annotations

import asyncio

from bot.quiz.jobs import Jobs, Work


async def test_a_burst_of_work_runs_at_most_the_limit_at_once_and_all_of_it_finishes() -> None:
    jobs = Jobs(limit=3)
    running = peak = 0
    finished: list[int] = []

    def work(number: int) -> Work:
        async def run() -> None:
            nonlocal running, peak
            running += 1
            peak = max(peak, running)
            await asyncio.sleep(0.01)
            running -= 1
            finished.append(number)

        return run

    tasks = [jobs.start(("close", n), work(n)) for n in range(20)]
    await asyncio.wait_for(asyncio.gather(*tasks), 5)
    assert peak == 3
    assert sorted(finished) == list(range(20))


async def test_a_hanging_piece_holds_one_turn_and_the_others_go_on() -> None:
    jobs = Jobs(limit=2)
    hang = asyncio.Event()
    done: list[int] = []

    async def hanging() -> None:
        await hang.wait()

    def quick(number: int) -> Work:
        async def run() -> None:
            await asyncio.sleep(0)
            done.append(number)

        return run

    stuck = jobs.start(("close", "stuck"), hanging)
    others = [jobs.start(("close", n), quick(n)) for n in range(10)]
    await asyncio.wait_for(asyncio.gather(*others), 5)
    assert sorted(done) == list(range(10))
    assert not stuck.done()
    await jobs.drain(0.01)  # shutdown cancels what still hangs
    assert stuck.cancelled()
