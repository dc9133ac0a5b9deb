"""The README and docs/ as a newcomer meets them: short front door, every link
followed, every page with a current table of contents, examples that work."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from bot.quiz.bank import load_banks

REPO = Path(__file__).resolve().parents[1]
PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
HEADING = re.compile(r"^#{1,6} (.+)$")

sys.path.insert(0, str(REPO / "scripts"))
from docs_toc import slug  # noqa: E402


def _outside_code(text: str, *, keep_inline: bool = False) -> list[str]:
    lines, fenced = [], False
    for line in text.splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced:
            # Inline code holds no link, but it is part of a heading's anchor.
            lines.append(line if keep_inline else re.sub(r"`[^`]*`", "", line))
    return lines


def _anchors(page: Path) -> set[str]:
    return {
        slug(match.group(1))
        for line in _outside_code(page.read_text(encoding="utf-8"), keep_inline=True)
        if (match := HEADING.match(line))
    }


def _relative_links(page: Path) -> list[str]:
    return [
        target
        for line in _outside_code(page.read_text(encoding="utf-8"))
        for target in LINK.findall(line)
        if not re.match(r"[a-z]+:", target)  # http:, https:, mailto:
    ]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(REPO).as_posix())
def test_every_relative_link_resolves(page: Path) -> None:
    broken = []
    for target in _relative_links(page):
        path, _, anchor = target.partition("#")
        linked = (page.parent / path).resolve() if path else page
        if not linked.exists():
            broken.append(f"{target}: no such file")
        elif anchor and linked.suffix == ".md" and anchor not in _anchors(linked):
            broken.append(f"{target}: no heading #{anchor} in {linked.name}")
    assert not broken, f"{page.name}: " + "; ".join(broken)


def test_readme_is_a_front_door() -> None:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 250
    first_screen = "\n".join(text.splitlines()[:40])
    assert "make run" in first_screen and "make test" in first_screen
    assert "quiz" in first_screen.lower()
    # Every docs page is reachable from the README.
    linked = {Path(t.partition("#")[0]).name for t in _relative_links(REPO / "README.md")}
    unlinked = [p.name for p in PAGES[1:] if p.name not in linked]
    assert not unlinked, f"docs pages the README does not link: {unlinked}"


def test_every_docs_page_has_a_current_table_of_contents() -> None:
    missing = [p.name for p in PAGES[1:] if "<!-- toc -->" not in p.read_text(encoding="utf-8")]
    assert not missing, f"pages without a table of contents: {missing}"
    checked = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "docs_toc.py"), "--check"],
        capture_output=True,
        text=True,
    )
    assert checked.returncode == 0, checked.stdout


def test_examples_name_banks_and_tags_the_shipped_banks_have() -> None:
    catalog, _ = load_banks([REPO / "questions"], log_problems=False)
    banks = set(catalog.banks)
    tags = {tag for bank in catalog.banks.values() for q in bank.questions for tag in q.tags}
    wrong = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for bank in re.findall(r"(?:bank=|--bank )([a-z0-9_-]+)", text):
            if bank not in banks and bank not in ("ID", "games", "community"):
                wrong.append(f"{page.name}: bank {bank}")
        for tag in re.findall(r"(?:tag=|--tag )([a-z0-9-]+)", text):
            if tag not in tags:
                wrong.append(f"{page.name}: tag {tag}")
        for start in re.findall(r"/quiz start \d+ \d+ (\S+) (\S+)`", text):
            if start[0] not in banks or start[1] not in tags:
                wrong.append(f"{page.name}: /quiz start … {start[0]} {start[1]}")
    assert not wrong, wrong
