"""Red-DiscordBot list import: how long a large list takes, against how long the
bare YAML load of the same file takes (the floor no importer can beat).

The list is generated: `--questions` questions, each with two or three accepted
answers, some of them repeated keys and some answers numbers, padded to about
`--size` bytes. The import must stay linear: doubling the file should about
double the time.

    python bench/red_import.py [--size 1000000] [--runs 3]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bot.quiz.importers import ImportFailed, import_file
from bot.quiz.importers.red import parse


def make_list(size: int, seed: int = 7) -> str:
    rng = random.Random(seed)
    lines = ["AUTHOR: bench", "DESCRIPTION: a generated list for timing imports"]
    n = 0
    while sum(len(line) + 1 for line in lines) < size:
        n += 1
        key = n if rng.random() > 0.02 else max(1, n - rng.randrange(1, 50))  # a few repeats
        lines.append(f"Question number {key} about subject {rng.randrange(10**6)}?:")
        first = str(rng.randrange(3000)) if rng.random() < 0.2 else f"answer {n} word{n % 97}"
        lines.append(f"- {first}")
        for extra in range(rng.randrange(1, 3)):
            lines.append(f"- alternative {n}-{extra}")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    text = make_list(args.size)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "bench.yaml"
        path.write_text(text, encoding="utf-8")
        floors, parses, ours = [], [], []
        outcome = ""
        for _ in range(args.runs):
            start = time.perf_counter()
            yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
            floors.append(time.perf_counter() - start)
            start = time.perf_counter()
            entries = len(parse(text, path.name).entries)
            parses.append(time.perf_counter() - start)
            start = time.perf_counter()
            try:
                outcome = f"{import_file(path, 'red', 'bench').imported:,} questions imported"
            except ImportFailed as error:  # a big list makes a bank over the size cap
                outcome = f"refused: {error}"
            ours.append(time.perf_counter() - start)
    print(f"list: {len(text):,} bytes, {entries:,} questions read; {outcome}")
    for name, times in (
        ("whole import", ours),
        ("reading the list and drawing options", parses),
        ("bare yaml.load with libyaml", floors),
    ):
        low, high = min(times), max(times)
        print(f"{name}: median {statistics.median(times):.2f} s (range {low:.2f}-{high:.2f})")


if __name__ == "__main__":
    main()
