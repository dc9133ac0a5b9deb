"""Judging a question from how a community answered it: difficulty, the
upper/lower 27 % discrimination index, each option's share, and the flags a
bank author should look at. Pure: the counts come from `question_analysis`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum


def N_(message: str) -> str:
    """Marks a sentence for the catalogs (bot/i18n.py); the texts translate it."""
    return message


OPTIONS = 5
MIN_ANSWERS = 20  # before any flag
MIN_OPTION_ANSWERS = 30  # before the option flags (check the key, dead option)
TOO_EASY = 0.95
DEAD_OPTION = 0.03
MIN_GROUP = 5  # answers in each group before discrimination is judged
MIN_REPORTS = 2


class Flag(Enum):
    # Worst first: the order /quiz health lists a question's flags in.
    CHECK_KEY = N_("check the key")
    NEGATIVE = N_("negative discrimination")
    REPORTED = N_("reported")
    TOO_HARD = N_("too hard")
    DEAD_OPTION = N_("dead option")
    TOO_EASY = N_("too easy")


SEVERITY = {flag: len(Flag) - index for index, flag in enumerate(Flag)}


@dataclass(frozen=True)
class ItemCounts:
    answered: int
    correct: int
    votes: tuple[int, ...]  # per bank option
    upper_answered: int
    upper_correct: int
    upper_votes: tuple[int, ...]
    lower_answered: int
    lower_correct: int
    lower_votes: tuple[int, ...]

    @property
    def difficulty(self) -> float:
        """Share right (the classical 'difficulty' p: higher is easier)."""
        return self.correct / self.answered if self.answered else 0.0

    @property
    def upper_share(self) -> float | None:
        return self.upper_correct / self.upper_answered if self.upper_answered else None

    @property
    def lower_share(self) -> float | None:
        return self.lower_correct / self.lower_answered if self.lower_answered else None

    @property
    def discrimination(self) -> float | None:
        """D = share right in the upper group minus in the lower (-1 to 1)."""
        upper, lower = self.upper_share, self.lower_share
        if upper is None or lower is None:
            return None
        return upper - lower


def share(count: int, total: int) -> float:
    return count / total if total else 0.0


@dataclass(frozen=True)
class Finding:
    """A flag and why: `message` (English, with named placeholders) and its
    `values`, so the texts can say it in the reader's language."""

    flag: Flag
    message: str
    values: Mapping[str, object] = field(default_factory=dict)

    @property
    def reason(self) -> str:
        return self.message.format(**self.values)


def findings(
    counts: ItemCounts, options: int, key: int, open_reports: int, labels: Sequence[str]
) -> list[Finding]:
    """The flags this question earns, worst first, each with a one-line reason.
    `options`: how many the question has; `key`: the keyed option (bank
    order); `labels`: each option's letter as members saw it in bank order."""
    found: list[Finding] = []
    if open_reports >= MIN_REPORTS:
        found.append(
            Finding(Flag.REPORTED, N_("{count} open reports from members"), {"count": open_reports})
        )
    if counts.answered < MIN_ANSWERS:
        return found
    right = counts.difficulty
    if counts.answered >= MIN_OPTION_ANSWERS and counts.upper_answered:
        keyed = counts.upper_votes[key]
        rival = max(
            (n for n in range(options) if n != key), key=lambda n: counts.upper_votes[n], default=-1
        )
        if rival >= 0 and counts.upper_votes[rival] > keyed:
            found.append(
                Finding(
                    Flag.CHECK_KEY,
                    N_(
                        "the strongest members chose {rival} ({rival_share}) over the key "
                        "{key} ({key_share})"
                    ),
                    {
                        "rival": labels[rival],
                        "rival_share": _percent(
                            share(counts.upper_votes[rival], counts.upper_answered)
                        ),
                        "key": labels[key],
                        "key_share": _percent(share(keyed, counts.upper_answered)),
                    },
                )
            )
    discrimination = counts.discrimination
    if (
        discrimination is not None
        and discrimination < 0
        and min(counts.upper_answered, counts.lower_answered) >= MIN_GROUP
    ):
        found.append(
            Finding(
                Flag.NEGATIVE,
                N_(
                    "the strongest members got it right less often ({upper}) than the "
                    "weakest ({lower})"
                ),
                {
                    "upper": _percent(counts.upper_share or 0.0),
                    "lower": _percent(counts.lower_share or 0.0),
                },
            )
        )
    chance = 1 / options if options else 0.0
    if right <= chance:
        found.append(
            Finding(
                Flag.TOO_HARD,
                N_("{share} right, no better than guessing among {options} options"),
                {"share": _percent(right), "options": options},
            )
        )
    if counts.answered >= MIN_OPTION_ANSWERS:
        dead = [
            labels[n]
            for n in range(options)
            if share(counts.votes[n], counts.answered) < DEAD_OPTION
        ]
        if dead:
            which = ", ".join(dead)
            found.append(
                Finding(
                    Flag.DEAD_OPTION,
                    N_("{options} chosen by under {share} of {answers} answers"),
                    {"options": which, "share": _percent(DEAD_OPTION), "answers": counts.answered},
                )
            )
    if right >= TOO_EASY:
        found.append(
            Finding(
                Flag.TOO_EASY,
                N_("{share} of {answers} right"),
                {"share": _percent(right), "answers": counts.answered},
            )
        )
    found.sort(key=lambda finding: -SEVERITY[finding.flag])
    return found


def severity(found: Sequence[Finding]) -> int:
    """How bad a question looks, for 'worst first': its worst flag, then how many."""
    if not found:
        return 0
    return max(SEVERITY[f.flag] for f in found) * 10 + len(found)


def _percent(value: float) -> str:
    return f"{round(100 * value)} %"
