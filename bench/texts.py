"""Texts benchmark: what speaking a language costs a reply.

1. One catalog look-up through `bot.i18n.t` (ContextVar, catalog, named
   placeholders) beside the bare library: Babel's `Translations.gettext` and
   `str.format` on the same German message, in the same run. Goal: at most 3x
   the bare call.
2. A whole reveal (the longest channel post: heading, fields, distribution,
   points, streaks) rendered in English and in German. Goal: German no slower
   than 1.5x English.

    python bench/texts.py [--trials 3]
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from datetime import UTC, datetime

from babel.support import Translations
from common import ROOT

from bot.dialect import PLAIN
from bot.domain.records import MemberPoints, PostTally
from bot.i18n import DOMAIN, LOCALE_DIR, speaking, t
from bot.quiz.bank import load_banks
from bot.quiz.texts.questions import QuestionView, reveal

MESSAGE = "You already answered {label}: the first click counts."


def per_call(run: Callable[[], object], calls: int) -> float:
    """Seconds per call, the best of five rounds."""
    best = float("inf")
    for _ in range(5):
        started = time.perf_counter()
        for _ in range(calls):
            run()
        best = min(best, (time.perf_counter() - started) / calls)
    return best


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--trials", type=int, default=3)
    trials = parser.parse_args().trials
    german = Translations.load(str(LOCALE_DIR), ["de"], DOMAIN)
    banks, _ = load_banks([ROOT / "questions"])
    bank = next(iter(banks.banks.values()))
    question = bank.questions[0]
    view = QuestionView(1, bank.title, question, (0, 1, 2, 3), 3, 5, datetime.now(UTC), 30)
    tally = PostTally(counts=[3, 9, 1, 2], total=15, first_correct_user="U1")
    points = [MemberPoints(f"U{n}", 20 - n, n % 3 == 0) for n in range(12)]
    leaders = [(f"U{n}", 10 - n) for n in range(5)]

    def whole_reveal() -> object:
        return reveal(view, 1, tally, PLAIN, None, leaders, points)

    rows = []
    for trial in range(1, trials + 1):
        bare = per_call(lambda: german.gettext(MESSAGE).format(label="A"), 20_000)
        with speaking("de"):
            ours = per_call(lambda: t(MESSAGE, label="A"), 20_000)
            de = per_call(whole_reveal, 2_000)
        with speaking("en"):
            en = per_call(whole_reveal, 2_000)
        rows.append((bare, ours, en, de))
        print(
            f"trial {trial}: t() {ours * 1e6:.2f} µs (bare Babel gettext+format "
            f"{bare * 1e6:.2f} µs); reveal en {en * 1e6:.0f} µs, de {de * 1e6:.0f} µs "
            f"({de / en:.2f}x)"
        )
    ours_all = [row[1] * 1e6 for row in rows]
    over_bare = [row[1] / row[0] for row in rows]
    ratio = [row[3] / row[2] for row in rows]
    print(
        f"t(): {min(ours_all):.2f}–{max(ours_all):.2f} µs a call, "
        f"{min(over_bare):.2f}–{max(over_bare):.2f}x bare Babel (goal <= 3x; median bare "
        f"{statistics.median(row[0] * 1e6 for row in rows):.2f} µs); German reveal "
        f"{min(ratio):.2f}–{max(ratio):.2f}x English (goal <= 1.5x)"
    )


if __name__ == "__main__":
    main()
