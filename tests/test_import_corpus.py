"""The regression corpus: small files we wrote ourselves in the shapes real
exports take (tests/corpus/<format>/), each beside `<name>.expected.yaml`,
the bank a person should get from it. Every case is imported as
`quizmaster questions import` does, loaded back with the bot's own loader and
compared; on top of what each case expects, no imported text may carry HTML,
entities, percent-escapes, format markers or a list's metadata.

An expected file may hold:

    field_encoding: base64          # passed as --field-encoding
    refused: "text in the error"    # the whole file is refused
    questions:                      # in order, each field optional but prompt
      - prompt: exact prompt
        right: the right option's text
        options: [every option, in any order]
        never_options: [texts no option may be]
        explanation: exact explanation
        tags: [exact tags]
    skipped: {"line 3": "text in the reason"}   # exactly these are skipped
    notes: ["text in some note"]
    description: ["text in the description"]
    allowed: ["an HTML tag"]        # a leftover the case means to keep ([plain])
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from bot.quiz.importers import ImportFailed, import_file
from tests.importing import load_back, skipped_at

CORPUS = Path(__file__).parent / "corpus"
CASES = sorted(CORPUS.glob("*/*.expected.yaml"))
# What never belongs in a question a person reads.
LEFTOVERS = {
    "an HTML tag": re.compile(r"</?[A-Za-z][A-Za-z0-9]*(\s[^<>]*)?/?>"),
    "an HTML entity": re.compile(r"&(#\d+|#x[0-9a-fA-F]+|[A-Za-z]+);"),
    "a percent-escape": re.compile(r"%[0-9A-Fa-f]{2}"),
    "a format marker": re.compile(r"\[(html|moodle|plain|markdown)\]", re.IGNORECASE),
    "a list's metadata key": re.compile(r"^(AUTHOR|DESCRIPTION|CONFIG|\$schema)$"),
    "a doubled full stop": re.compile(r"(?<!\.)\.\.$"),
}


def _source(expected: Path) -> Path:
    stem = expected.name.removesuffix(".expected.yaml")
    [source] = [p for p in expected.parent.glob(f"{stem}.*") if p != expected]
    return source


@pytest.mark.parametrize("expected_file", CASES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_corpus_case_imports_as_expected(tmp_path: Path, expected_file: Path) -> None:
    expected: dict[str, Any] = yaml.safe_load(expected_file.read_text(encoding="utf-8"))
    source = _source(expected_file)
    kwargs = {"field_encoding": expected["field_encoding"]} if "field_encoding" in expected else {}
    if "refused" in expected:
        with pytest.raises(ImportFailed) as refused:
            import_file(source, expected_file.parent.name, "corpus", **kwargs)
        assert expected["refused"] in str(refused.value)
        return
    result = import_file(source, expected_file.parent.name, "corpus", **kwargs)
    bank = load_back(tmp_path, result)

    texts = [bank.title, bank.description]
    for question in bank.questions:
        texts += [question.prompt, question.explanation, *question.options]
    checks = {what: p for what, p in LEFTOVERS.items() if what not in expected.get("allowed", [])}
    for text in texts:
        for what, pattern in checks.items():
            assert not pattern.search(text), f"{what} in {text!r}"

    wanted = expected.get("questions", [])
    assert [q.prompt for q in bank.questions] == [w["prompt"] for w in wanted]
    for question, want in zip(bank.questions, wanted, strict=True):
        right = question.options[question.answer_index]
        if "right" in want:
            assert right == want["right"], question.prompt
        if "options" in want:
            assert sorted(question.options) == sorted(want["options"]), question.prompt
        for text in want.get("never_options", []):
            assert text not in question.options, (question.prompt, text)
        if "explanation" in want:
            assert question.explanation == want["explanation"], question.prompt
        if "tags" in want:
            assert question.tags == want["tags"], question.prompt

    skipped = skipped_at(result)
    assert set(skipped) == set(expected.get("skipped", {})), skipped
    for where, reason in expected.get("skipped", {}).items():
        assert reason in skipped[where], (where, skipped[where])
    for note in expected.get("notes", []):
        assert any(note in said for said in result.notes), (note, result.notes)
    for part in expected.get("description", []):
        assert part in bank.description


def test_the_corpus_covers_every_format_it_claims() -> None:
    assert {case.parent.name for case in CASES} >= {"red", "opentdb", "gift", "aiken", "csv"}
    for case in CASES:
        _source(case)  # exactly one source file beside each expectation
