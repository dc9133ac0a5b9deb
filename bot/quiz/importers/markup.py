"""HTML from other quiz tools (Moodle's GIFT exports above all) as plain text.

Block elements and <br> become line breaks, runs of white space inside the
text collapse as a browser collapses them, entities are decoded (&nbsp; is a
space), and images are dropped: their sources are returned so the import can
report what was lost. Scripts and styles vanish with their content.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

# Elements that start a new line of text where they open and where they close.
_BLOCKS = {
    "address", "article", "blockquote", "dd", "div", "dl", "dt", "figcaption", "figure",
    "footer", "h1", "h2", "h3", "h4", "h5", "h6", "header", "hr", "li", "ol", "p", "pre",
    "section", "table", "tbody", "thead", "tr", "ul",
}  # fmt: skip
_HIDDEN = {"script", "style", "head", "title"}
_SPACES = re.compile(r"[ \t\r\n\f\u00a0]+")
# Enough to tell HTML from plain text that merely mentions '<' or '&'.
HTML_HINT = re.compile(r"</?[A-Za-z][^<>]*>|&(#\d+|#x[0-9A-Fa-f]+|[A-Za-z]+\d*);")


class _Text(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.pieces: list[str] = []
        self.images: list[str] = []
        self._hidden = 0
        self._pre = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _HIDDEN:
            self._hidden += 1
        elif tag == "br":
            self.pieces.append("\n")
        elif tag == "img":
            found = dict(attrs)
            self.images.append(found.get("src") or found.get("alt") or "an image")
        elif tag in _BLOCKS:
            self.pieces.append("\n")
            self._pre += tag == "pre"

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("br", "img"):
            self.handle_starttag(tag, attrs)

    def handle_endtag(self, tag: str) -> None:
        if tag in _HIDDEN:
            self._hidden = max(0, self._hidden - 1)
        elif tag in _BLOCKS:
            self.pieces.append("\n")
            if tag == "pre":
                self._pre = max(0, self._pre - 1)

    def handle_data(self, data: str) -> None:
        if self._hidden:
            return
        self.pieces.append(data.replace("\u00a0", " ") if self._pre else _SPACES.sub(" ", data))


def html_to_text(markup: str) -> tuple[str, list[str]]:
    """The text a reader sees in `markup`, lines trimmed and no blank lines, and
    the source (or alt text) of each image dropped."""
    parser = _Text()
    parser.feed(markup)
    parser.close()
    lines = [line.strip(" ") for line in "".join(parser.pieces).split("\n")]
    # One line break between blocks: "<p>a</p><p>b</p>" reads as two lines, not three.
    text = re.sub(r"\n{2,}", "\n", "\n".join(lines)).strip("\n")
    return text, parser.images


def looks_like_html(text: str) -> bool:
    return HTML_HINT.search(text) is not None
