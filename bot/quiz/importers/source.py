"""Reading an import file: capped in size, decoded, and refused if it is binary."""

from __future__ import annotations

import codecs
from pathlib import Path

from bot.quiz.importers.result import ImportFailed

# Five times what a bank may hold: source formats are wordier than ours, but a
# file much bigger than this could never become one loadable bank.
MAX_IMPORT_BYTES = 5_000_000


def read_source(path: Path, encoding: str = "utf-8") -> str:
    """The file's text. A UTF-8 or UTF-16 byte-order mark is honoured and dropped;
    `encoding` must be one Python knows (import_file checks it first)."""
    try:
        with path.open("rb") as file:
            data = file.read(MAX_IMPORT_BYTES + 1)
    except OSError as exc:
        raise ImportFailed(f"cannot read {path}: {exc.strerror or exc}") from None
    if len(data) > MAX_IMPORT_BYTES:
        raise ImportFailed(
            f"{path} is larger than {MAX_IMPORT_BYTES:,} bytes, the most an import reads; "
            "split it into several files"
        )
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        encoding = "utf-16"
    elif data.startswith(codecs.BOM_UTF8) and codecs.lookup(encoding).name == "utf-8":
        encoding = "utf-8-sig"
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise ImportFailed(
            f"{path} is not {encoding} text (byte 0x{data[exc.start]:02x} on line {line}); "
            "save it as UTF-8 or name its encoding with --encoding"
        ) from None
    if "\x00" in text:
        raise ImportFailed(
            f"{path} contains NUL bytes: it looks like a binary file, not text "
            "(or UTF-16 without a byte-order mark)"
        )
    if not text.strip():
        raise ImportFailed(f"{path} is empty")
    return text
