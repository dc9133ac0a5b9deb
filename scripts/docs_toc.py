"""Write (or check) the table of contents of every page under docs/.

A page asks for one with a `<!-- toc -->` line; the list of its `##` and `###`
headings goes between that line and `<!-- /toc -->`. Run it after editing a
page's headings; `--check` exits 1 naming each page whose list is stale.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parents[1] / "docs"
TOC_BLOCK = re.compile(r"<!-- toc -->\n(?:.*?<!-- /toc -->\n)?", re.S)
HEADING = re.compile(r"^(#{2,3}) (.+)$")


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to -."""
    text = re.sub(r"[`*\[\]()]", "", heading).strip().lower()  # GitHub keeps _
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def headings(text: str) -> list[tuple[int, str]]:
    """The page's ## and ### headings, outside fenced code."""
    found, fenced = [], False
    for line in text.splitlines():
        if line.startswith("```"):
            fenced = not fenced
            continue
        match = None if fenced else HEADING.match(line)
        if match:
            found.append((len(match.group(1)), match.group(2).strip()))
    return found


def toc(text: str) -> str:
    lines = [
        f"{'  ' * (level - 2)}- [{re.sub(r'[`*]', '', title)}](#{slug(title)})"
        for level, title in headings(text)
    ]
    return "<!-- toc -->\n" + "\n".join(lines) + "\n<!-- /toc -->\n"


def with_toc(text: str) -> str:
    match = TOC_BLOCK.search(text)
    if match is None:
        return text
    return text[: match.start()] + toc(text) + text[match.end() :]


def main(argv: list[str]) -> int:
    stale = []
    for page in sorted(DOCS.glob("*.md")):
        text = page.read_text(encoding="utf-8")
        fresh = with_toc(text)
        if fresh != text:
            if "--check" in argv:
                stale.append(page.name)
            else:
                page.write_text(fresh, encoding="utf-8")
    for name in stale:
        print(f"docs/{name}: table of contents is stale; run python scripts/docs_toc.py")
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
