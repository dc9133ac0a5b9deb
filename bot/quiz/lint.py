"""A bank linter for authors: what a reviewer would flag in a question before
anyone has answered it (`quizmaster questions lint`).

Each rule looks at one question (or a pair) and gives a one-line finding:
- `cue`: a distinctive word of the stem that appears in the keyed option and
  in no other option, so a test-wise reader can match it;
- `longest`: the keyed option is the longest by a wide margin;
- `twin`: two questions with the same options and the same key;
- `explanation`: the explanation says another option is the answer;
- `restates`: the prompt restates its answer.

Words are compared by a rough stem (lower case, letters and digits, a plural
or verb ending dropped, cut to six letters), and only words of four letters
or more that are not in STOPWORDS count, so "gradients" in the stem meets
"gradient" in an option but "the" never counts.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from bot.quiz.bank import Question

LONGEST_RATIO = 1.6  # the key this many times as long as the next-longest option
LONGEST_MARGIN = 20  # and at least this many characters longer
RESTATED_SHARE = 0.75  # this share of the key's words in the stem (at least two)

_STOPWORDS = """
    about above after again against also another because been before being below
    between both cannot could does doing down during each every from further have
    having here into itself just later many more most much must only other over
    same should some such than that their them then there these they this those
    through under until upon very were what when where which while whom whose
    with within without would your yours used uses using make makes made
    true false none all both neither either
"""
STOPWORDS = frozenset(_STOPWORDS.split())
_ENDINGS = ("ations", "ation", "ings", "ing", "ies", "es", "ed", "s")
_WORD = re.compile(r"[a-z0-9_]+")
_SENTENCE = re.compile(r"(?<=[.!?])\s+")
_NEGATION = re.compile(r"\b(not|no|never|wrong|tempting|instead|rather|but|isn't|doesn't)\b")
_LETTER_CLAIM = re.compile(
    r"\b(?:answer|key) is \(?([A-E])\b|\b(?:option )?\(?([A-E])\)? is (?:correct|right)\b"
)


@dataclass(frozen=True)
class Finding:
    question_id: str
    rule: str
    message: str

    def line(self) -> str:
        return f"{self.question_id}: {self.rule}: {self.message}"


def stem_of(word: str) -> str:
    for ending in _ENDINGS:
        if word.endswith(ending) and len(word) - len(ending) >= 4:
            word = word[: -len(ending)]
            break
    return word[:6]


def content_words(text: str) -> set[str]:
    return {
        stem_of(word)
        for word in _WORD.findall(text.lower())
        if len(word) >= 4 and word not in STOPWORDS
    }


def _key(question: Question) -> str:
    return question.options[question.answer_index]


def _letter(index: int) -> str:
    return "ABCDE"[index]


def cue(question: Question, common: frozenset[str] = frozenset()) -> Finding | None:
    key = _key(question)
    others = set().union(*(content_words(o) for o in question.options if o != key))
    shared = (content_words(question.prompt) & content_words(key)) - others - common
    if not shared:
        return None
    # Name the words as the stem writes them, not their rough stems.
    words = ", ".join(
        sorted({w for w in _WORD.findall(question.prompt.lower()) if stem_of(w) in shared})
    )
    return Finding(
        question.id,
        "cue",
        f"the stem shares {words} with the key {_letter(question.answer_index)} "
        "and with no other option",
    )


def longest(question: Question) -> Finding | None:
    key = _key(question)
    rest = max((len(o) for o in question.options if o != key), default=0)
    if len(key) >= LONGEST_RATIO * rest and len(key) - rest >= LONGEST_MARGIN:
        return Finding(
            question.id,
            "longest",
            f"the key {_letter(question.answer_index)} is {len(key)} characters, "
            f"the next-longest option {rest}",
        )
    return None


def restates(question: Question) -> Finding | None:
    key = _key(question)
    prompt = question.prompt.lower()
    if len(key) >= 8 and key.lower() in prompt:
        return Finding(
            question.id, "restates", f"the prompt contains the key “{key}” word for word"
        )
    words = content_words(key)
    found = words & content_words(question.prompt)
    if len(words) >= 2 and len(found) >= RESTATED_SHARE * len(words):
        return Finding(
            question.id,
            "restates",
            f"the prompt holds {len(found)} of the key's {len(words)} words",
        )
    return None


def explanation(question: Question) -> Finding | None:
    """The explanation claims another letter is right, or opens by naming
    another option (and not the key) without saying it is wrong."""
    text = question.explanation
    for match in _LETTER_CLAIM.finditer(text):
        claimed = match.group(1) or match.group(2)
        if claimed and claimed != _letter(question.answer_index):
            return Finding(
                question.id,
                "explanation",
                f"the explanation says {claimed} is the answer; the key is "
                f"{_letter(question.answer_index)}",
            )
    first = _SENTENCE.split(text.strip(), maxsplit=1)[0].lower()
    key = _key(question).lower()
    if key in first or _NEGATION.search(first):
        return None
    for index, option in enumerate(question.options):
        if index != question.answer_index and len(option) >= 8 and option.lower() in first:
            return Finding(
                question.id,
                "explanation",
                f"the explanation opens with option {_letter(index)} “{option}”, not the key",
            )
    return None


RULES = (longest, restates, explanation)
COMMON_SHARE = 0.2  # a word in more of a bank's prompts than this is its subject, not a cue


def common_words(questions: Sequence[Question]) -> frozenset[str]:
    """Words in more than COMMON_SHARE of the prompts (with at least five
    questions): in a bank about training, "training" gives nothing away."""
    if len(questions) < 5:
        return frozenset()
    counts: dict[str, int] = {}
    for question in questions:
        for word in content_words(question.prompt):
            counts[word] = counts.get(word, 0) + 1
    return frozenset(w for w, n in counts.items() if n > COMMON_SHARE * len(questions))


def twins(questions: Sequence[Question]) -> list[Finding]:
    seen: dict[tuple[frozenset[str], str], str] = {}
    found = []
    for question in questions:
        shape = (frozenset(o.strip().lower() for o in question.options), _key(question).lower())
        first = seen.setdefault(shape, question.id)
        if first != question.id:
            found.append(Finding(question.id, "twin", f"same options and key as {first}"))
    return found


def lint(questions: Iterable[Question]) -> list[Finding]:
    """Every finding over these questions, in bank order."""
    listed = list(questions)
    common = common_words(listed)
    found = [f for question in listed if (f := cue(question, common)) is not None]
    found += [f for question in listed for rule in RULES if (f := rule(question)) is not None]
    found += twins(listed)
    order = {question.id: index for index, question in enumerate(listed)}
    return sorted(found, key=lambda f: (order[f.question_id], f.rule))


# -- findings a reviewer kept --------------------------------------------------------------

REVIEWED_SUFFIX = ".lint"


def reviewed(text: str) -> set[tuple[str, str]]:
    """(question id, rule) pairs from a bank's `<bank>.lint` file: one per
    line, `<id> <rule> <why it stays>`; `#` starts a comment."""
    pairs = set()
    for line in text.splitlines():
        words = line.split("#", 1)[0].split()
        if len(words) >= 2:
            pairs.add((words[0], words[1]))
    return pairs
