"""Small banks for the play features (hints, pictures, true/false, long
questions), one bank each so a one-question quiz knows what it draws."""

from __future__ import annotations

from pathlib import Path

import yaml

from bot.quiz.bank import Catalog, load_banks

HINT = "Count the ranks: every one of them holds a copy."
IMAGE = "https://images.example.org/quiz/ring-allreduce.png"
IMAGE_ALT = "Four GPUs in a ring, each passing one chunk of its gradient to the next"
LONG_WORDS = 150  # prompt and options together: 150 // 15 = 10 s to read

_LONG_PROMPT = " ".join(["word"] * (LONG_WORDS - 8)) + " — which is it?"

BANKS = {
    "hints": {
        "id": "hints",
        "title": "Hints",
        "questions": [
            {
                "id": "hint-01",
                "prompt": "With plain data parallelism on 8 GPUs, how many full copies of the "
                "model's parameters exist?",
                "options": ["1", "2", "4", "8"],
                "answer": "D",
                "explanation": "Each rank keeps its own replica, so there are eight.",
                "hint": HINT,
            }
        ],
    },
    "pictures": {
        "id": "pictures",
        "title": "Pictures",
        "questions": [
            {
                "id": "picture-01",
                "prompt": "Which collective does the picture show?",
                "options": ["Ring all-reduce", "Broadcast", "Gather"],
                "answer": "A",
                "explanation": "Chunks travel round the ring until every rank has the sum.",
                "image": IMAGE,
                "image_alt": IMAGE_ALT,
            }
        ],
    },
    "truefalse": {
        "id": "truefalse",
        "title": "True or false",
        "questions": [
            {
                "id": "tf-01",
                "prompt": "DistributedDataParallel averages gradients across ranks.",
                "options": ["TRUE", "false"],
                "answer": "A",
                "explanation": "Its all-reduce sums them and divides by the world size.",
            }
        ],
    },
    "long": {
        "id": "long",
        "title": "Long questions",
        "questions": [
            {
                "id": "long-01",
                "prompt": _LONG_PROMPT,
                # 4 words of options: with the prompt's, LONG_WORDS in all.
                "options": ["this", "that", "none", "both"],
                "answer": "A",
                "explanation": "A long read.",
            }
        ],
    },
}


def play_catalog(folder: Path) -> Catalog:
    folder.mkdir(parents=True, exist_ok=True)
    for name, bank in BANKS.items():
        (folder / f"{name}.yaml").write_text(yaml.safe_dump(bank, allow_unicode=True))
    found, problems = load_banks([folder])
    assert not problems, problems
    return found
