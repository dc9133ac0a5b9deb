"""Rules a careful reviewer applies to the shipped PyTorch bank (issue 27).

tests/test_seed_bank.py checks the bank against its seed (options verbatim,
keys as in the answer key); this file checks what a reader of the questions
would object to: stems that give their answer away or restate it, pairs of
questions that ask the same thing, explanations that contradict each other or
name PyTorch APIs wrongly, tags too coarse to pick a topic, and difficulty
labels far from what the questions demand.
"""

from __future__ import annotations

import re
from collections import Counter
from itertools import combinations
from pathlib import Path
from typing import Any

import pytest
import yaml

BANK_FILE = Path(__file__).resolve().parents[1] / "questions" / "pytorch-distributed-training.yaml"
LETTERS = "ABCD"

# Words too common in this quiz to tell one option from another.
COMMON = {
    "with", "from", "that", "this", "each", "into", "over", "than", "more", "most", "which",
    "what", "their", "does", "between", "during", "across", "other", "training", "the",
}  # fmt: skip
# Questions whose key is the very concept the stem must name.
NAMED_BY_THE_CONCEPT = {"pdt-08", "pdt-13", "pdt-27"}
# Question pairs that share the seed's option list and key; each must ask for other knowledge.
REVIEWED_TWINS = {
    ("pdt-04", "pdt-25"): "the definition of data parallelism / what DDP adds over a split module",
    ("pdt-12", "pdt-26"): "a hand-placed layer split / where pipelining belongs",
}


@pytest.fixture(scope="module")
def questions() -> dict[str, dict[str, Any]]:
    data = yaml.safe_load(BANK_FILE.read_text(encoding="utf-8"))
    return {q["id"]: q for q in data["questions"]}


def _words(text: str) -> list[str]:
    return [w for w in re.findall(r"[a-z0-9]+", text.lower()) if len(w) >= 4 and w not in COMMON]


def _key(question: dict[str, Any]) -> str:
    return str(question["options"][LETTERS.index(question["answer"])])


def _echoes(stem_word: str, option_word: str) -> bool:
    """A stem word gives an option word away if they share a five-letter start
    or the option's word hides inside a longer identifier ('DistributedDataParallel')."""
    return stem_word[:5] == option_word[:5] or option_word in stem_word


def test_no_stem_word_points_at_the_keyed_option_alone(
    questions: dict[str, dict[str, Any]],
) -> None:
    for qid, question in questions.items():
        if qid in NAMED_BY_THE_CONCEPT:
            continue
        key = _key(question)
        wrong = [w for option in question["options"] if option != key for w in _words(option)]
        only_right = [w for w in _words(key) if not any(_echoes(w, x) for x in wrong)]
        stem = _words(question["prompt"])
        cues = sorted({w for w in only_right if any(_echoes(s, w) for s in stem)})
        assert not cues, f"{qid}: the stem points at {cues} of {key!r}"


def test_no_stem_restates_most_of_its_answer(questions: dict[str, dict[str, Any]]) -> None:
    for qid, question in questions.items():
        key = _key(question)
        wrong = {w[:5] for option in question["options"] if option != key for w in _words(option)}
        key_words = {w[:5] for w in _words(key)} - wrong
        stem = {w[:5] for w in _words(question["prompt"])}
        if len(key_words) >= 2:
            assert len(key_words & stem) * 2 < len(key_words), f"{qid} restates its key"
    # The two stems an expert found restating their answer in other words.
    assert "only so many" not in questions["pdt-14"]["prompt"]
    assert "until every worker" not in questions["pdt-19"]["prompt"]
    # pdt-12's stem must not hand out pdt-27's answer (fitting a model too big for one GPU).
    assert not re.search(r"too large|memory|fit", questions["pdt-12"]["prompt"])


def test_questions_sharing_options_and_key_ask_for_different_knowledge(
    questions: dict[str, dict[str, Any]],
) -> None:
    groups: dict[tuple[tuple[str, ...], str], list[str]] = {}
    for qid, question in questions.items():
        groups.setdefault((tuple(question["options"]), question["answer"]), []).append(qid)
    twins = {pair for ids in groups.values() for pair in combinations(sorted(ids), 2)}
    assert twins == set(REVIEWED_TWINS), "a new pair shares options and key: review it"
    for first, second in twins:
        a, b = (set(_words(questions[q]["prompt"])) for q in (first, second))
        assert len(a & b) * 4 < len(a | b), f"{first} and {second} ask alike: {sorted(a & b)}"
    # The twin of the definition question is not a "which does DDP implement" restatement.
    assert "DistributedDataParallel" not in questions["pdt-25"]["prompt"]
    assert "device_ids=None" in questions["pdt-25"]["prompt"]


def test_no_two_stems_open_alike_and_no_explanation_cites_a_question_id(
    questions: dict[str, dict[str, Any]],
) -> None:
    openings = Counter(" ".join(q["prompt"].split()[:6]) for q in questions.values())
    # The parameter-server role pair (13/29) differs only in the role asked about.
    roles = "In a parameter-server architecture, what is"
    repeated = {o for o, n in openings.items() if n > 1} - {roles}
    assert not repeated, repeated
    for qid, question in questions.items():
        assert not re.search(r"pdt-\d", question["explanation"]), qid


def test_explanations_agree_with_each_other_and_with_pytorch(
    questions: dict[str, dict[str, Any]],
) -> None:
    explanation = {qid: q["explanation"] for qid, q in questions.items()}
    # DDP can wrap a module spread over several devices; it never "never splits".
    assert "never splits" not in explanation["pdt-25"]
    assert "device_ids" in explanation["pdt-25"]
    # The all-reduce is skipped inside no_sync(), so not "every backward pass" unqualified.
    assert "no_sync()" in explanation["pdt-02"]
    # Accumulation equals a bigger batch only when each loss is divided by the steps.
    assert re.search(r"divided by the number of accumulation steps", explanation["pdt-28"])
    # PowerSGD warms up with plain all-reduce and leaves small tensors uncompressed.
    for name in ("start_powerSGD_iter", "min_compression_rate"):
        assert name in explanation["pdt-01"]
    assert "every matrix" not in explanation["pdt-01"]
    # Pipelining shrinks idle stages (pdt-14) rather than keeping every stage busy.
    for qid in ("pdt-26",):
        both = questions[qid]["prompt"] + explanation[qid]
        assert "every stage keeps busy" not in both and "keeps the stages busy" not in both
    # Task parallelism's results can be collected; they are not merged into one predictor.
    assert "never combines" not in explanation["pdt-23"]
    # The aim named for spreading a job that fits is speed, not model parallelism's aim.
    assert "model parallelism" not in explanation["pdt-16"]
    # pdt-17's explanation must not answer pdt-22 (scalability as the benefit).
    assert "scalability is the benefit" not in explanation["pdt-17"]
    # torch.distributed.rpc is named only with its status.
    for qid, text in explanation.items():
        if "torch.distributed.rpc" in text:
            assert "no longer actively developed" in text, qid


def test_barrier_question_asks_what_it_is_for(questions: dict[str, dict[str, Any]]) -> None:
    barrier = questions["pdt-24"]
    assert "guarantee" not in barrier["prompt"]
    assert all(option.startswith("To ") for option in barrier["options"])
    assert "not needed at every step" in barrier["explanation"]


def test_tags_name_the_topics_people_pick(questions: dict[str, dict[str, Any]]) -> None:
    tagged: dict[str, set[str]] = {}
    for qid, question in questions.items():
        for tag in question["tags"]:
            tagged.setdefault(tag, set()).add(qid)
    assert "optimization" not in tagged, "too coarse: say compression, accumulation, ..."
    assert tagged["compression"] == {"pdt-01", "pdt-11", "pdt-15"}
    assert {"pdt-07", "pdt-09"} <= tagged["fsdp"]
    assert "pdt-26" in tagged["pipeline-parallelism"]
    assert tagged["hybrid-parallelism"] == {"pdt-09"}
    assert "pdt-28" in tagged["gradient-accumulation"]
    assert "pdt-18" in tagged["asynchronous-training"]


def test_difficulty_matches_a_reading_of_the_questions(
    questions: dict[str, dict[str, Any]],
) -> None:
    counts = Counter(q["difficulty"] for q in questions.values())
    assert counts == {"easy": 18, "medium": 11, "hard": 1}
