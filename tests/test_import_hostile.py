"""`quizmaster questions import` against files nobody meant to import: empty,
binary, wrongly encoded, huge, cut off or mangled. Each gets a reason and no
crash, and whatever is imported still loads."""

from __future__ import annotations

import codecs
import random
import time
from pathlib import Path

import pytest

from bot.quiz.importers import FORMATS, MAX_IMPORT_BYTES, BadArguments, ImportFailed
from tests.importing import load_back, run_import, skipped_at
from tests.test_import_formats import AIKEN, CSV, GIFT, RED

ALL_FORMATS = sorted(FORMATS)
SAMPLES = {"aiken": AIKEN, "gift": GIFT, "csv": CSV, "red": RED}


@pytest.mark.parametrize("format", ALL_FORMATS)
@pytest.mark.parametrize("content", ["", "  \n\n\t\n"])
def test_an_empty_file_is_refused_as_empty(tmp_path: Path, format: str, content: str) -> None:
    with pytest.raises(ImportFailed, match="is empty"):
        run_import(tmp_path, "empty.txt", content, format)


@pytest.mark.parametrize("format", ALL_FORMATS)
def test_binary_junk_is_refused_before_parsing(tmp_path: Path, format: str) -> None:
    junk = bytes(random.Random(7).randrange(256) for _ in range(4096)) + b"\x00"
    with pytest.raises(ImportFailed) as caught:
        run_import(tmp_path, "junk.bin", junk, format)
    assert "binary" in str(caught.value) or "not utf-8 text" in str(caught.value)


def test_a_file_in_another_encoding_is_named_with_its_line_and_can_be_read_with_encoding(
    tmp_path: Path,
) -> None:
    latin = "Naïve question?\nA. café\nB. thé\nANSWER: A\n".encode("latin-1")
    with pytest.raises(ImportFailed, match=r"not utf-8 text .* on line 1.*--encoding"):
        run_import(tmp_path, "latin.txt", latin, "aiken")
    result = run_import(tmp_path, "latin.txt", latin, "aiken", encoding="latin-1")
    assert load_back(tmp_path, result).questions[0].options == ["café", "thé"]


@pytest.mark.parametrize("encoding", ["utf-8", "UTF8", "utf_8"])
def test_a_utf8_byte_order_mark_is_dropped_however_the_encoding_is_spelled(
    tmp_path: Path, encoding: str
) -> None:
    content = "\ufeffprompt,option_a,option_b,answer\nIs it?,yes,no,A\n".encode()
    result = run_import(tmp_path, "bom.csv", content, "csv", encoding=encoding)
    assert load_back(tmp_path, result).questions[0].prompt == "Is it?"


def test_utf16_with_a_byte_order_mark_is_read(tmp_path: Path) -> None:
    text = "Question?\nA. oui\nB. non\nANSWER: B\n"
    content = codecs.BOM_UTF16_LE + text.encode("utf-16-le")
    bank = load_back(tmp_path, run_import(tmp_path, "windows.txt", content, "aiken"))
    assert bank.questions[0].options == ["oui", "non"]


def test_an_unknown_encoding_is_named(tmp_path: Path) -> None:
    with pytest.raises(BadArguments, match="unknown encoding 'klingon'"):
        run_import(tmp_path, "a.txt", AIKEN, "aiken", encoding="klingon")


def test_a_file_over_the_cap_is_refused_unread(tmp_path: Path) -> None:
    with pytest.raises(ImportFailed, match="larger than 5,000,000 bytes"):
        run_import(tmp_path, "huge.txt", "x" * (MAX_IMPORT_BYTES + 1), "aiken")


def test_a_huge_line_is_one_skipped_question_not_a_hang(tmp_path: Path) -> None:
    content = "Q" * 4_000_000 + "?\nA. a\nB. b\nANSWER: A\n\nSmall?\nA. a\nB. b\nANSWER: B\n"
    started = time.monotonic()
    result = run_import(tmp_path, "long.txt", content, "aiken")
    assert time.monotonic() - started < 10
    assert "at most 1000 characters" in skipped_at(result)["line 1"]
    assert load_back(tmp_path, result).questions[0].prompt == "Small?"


def test_an_unterminated_brace_costs_only_its_own_question(tmp_path: Path) -> None:
    content = "Never closed {=a ~b\n" + "~more\n" * 50_000 + "\nClosed? {=yes ~no}\n"
    result = run_import(tmp_path, "open.gift", content, "gift")
    assert "never closed" in skipped_at(result)["line 1"]
    assert load_back(tmp_path, result).questions[0].prompt == "Closed?"
    braces = run_import(tmp_path, "braces.gift", "{" * 100_000, "gift")
    assert braces.bank is None and "second {" in skipped_at(braces)["line 1"]


def test_a_bank_too_big_to_load_is_refused_with_advice(tmp_path: Path) -> None:
    rows = "".join(f"{'Why ' * 200}{n}?,yes,no,A\n" for n in range(1_300))
    with pytest.raises(ImportFailed, match="split the input"):
        run_import(tmp_path, "big.csv", "prompt,option_a,option_b,answer\n" + rows, "csv")


@pytest.mark.parametrize("format", sorted(SAMPLES))
def test_mangled_files_never_crash_and_what_survives_loads(tmp_path: Path, format: str) -> None:
    rng = random.Random(format)
    alphabet = "{}=~#:\\\n\r \"',;.)-ABab1%>[]\t"
    for attempt in range(80):
        chars = list(SAMPLES[format])
        for _ in range(rng.randrange(1, 40)):
            at = rng.randrange(len(chars) + 1)
            if chars and rng.random() < 0.5:
                del chars[min(at, len(chars) - 1)]
            else:
                chars.insert(at, rng.choice(alphabet))
        try:
            result = run_import(tmp_path, f"m{attempt}.txt", "".join(chars), format)
        except ImportFailed:
            continue
        if result.bank is not None:
            load_back(tmp_path, result)


def test_control_characters_are_dropped_from_imported_text(tmp_path: Path) -> None:
    content = "Ring\x07 the bell\x1b[31m?\nA. yes\x08\nB. no\nANSWER: A\n"
    bank = load_back(tmp_path, run_import(tmp_path, "ctl.txt", content, "aiken"))
    assert bank.questions[0].prompt == "Ring the bell[31m?"
    assert bank.questions[0].options == ["yes", "no"]


def test_the_same_question_twice_is_imported_once(tmp_path: Path) -> None:
    content = "Twice?\nA. a\nB. b\nANSWER: A\n\ntwice?\nA) B\nB) A\nANSWER: A\n"
    result = run_import(tmp_path, "dup.txt", content, "aiken")
    assert result.imported == 1
    assert skipped_at(result)["line 6"] == "the same question as line 1"


def test_ids_fit_even_under_the_longest_bank_id(tmp_path: Path) -> None:
    long_id = "b" * 64
    result = run_import(tmp_path, "quiz.txt", AIKEN, "aiken", bank_id=long_id)
    bank = load_back(tmp_path, result)
    for number, question in enumerate(bank.questions, 1):
        assert len(question.id) <= 64
        assert question.id.endswith(f"-{number:03d}")


def test_the_title_comes_from_the_option_the_file_or_its_name(tmp_path: Path) -> None:
    named = run_import(tmp_path, "pub_quiz-night.txt", AIKEN, "aiken")
    assert named.bank is not None and named.bank.title == "Pub quiz night"
    given = run_import(tmp_path, "pub_quiz-night.txt", AIKEN, "aiken", title="  Friday  quiz ")
    assert given.bank is not None and given.bank.title == "Friday quiz"


@pytest.mark.parametrize(
    ("bank_id", "format", "title", "said"),
    [
        ("Has Spaces", "aiken", None, "bank id 'Has Spaces'"),
        ("", "aiken", None, "bank id ''"),
        ("fine", "xml", None, "unknown format 'xml'"),
        ("fine", "aiken", "x" * 101, "at most 100"),
        ("fine", "aiken", "   ", "title is empty"),
    ],
)
def test_unusable_arguments_are_refused_before_the_file_is_read(
    tmp_path: Path, bank_id: str, format: str, title: str | None, said: str
) -> None:
    with pytest.raises(BadArguments, match=said):
        run_import(tmp_path, "quiz.txt", AIKEN, format, bank_id=bank_id, title=title)
