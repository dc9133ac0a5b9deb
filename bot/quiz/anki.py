"""An Anki package (`.apkg`) of questions, built with `genanki`: one note per
question, one deck per bank (named after it). Note GUIDs come from the question
id, so importing a newer export updates the notes instead of adding copies."""

from __future__ import annotations

import hashlib
import html
import itertools
import sqlite3
import tempfile
import zipfile
from collections.abc import Sequence
from io import BytesIO
from pathlib import Path

import genanki

from bot.quiz.bank import LETTERS, Bank, Question

ANKI_FIELDS = ("Prompt", "Options", "Answer", "Explanation")

# Fixed ids: Anki matches a re-imported note type and deck by them.
MODEL_ID = 1_734_120_001
MODEL = genanki.Model(
    MODEL_ID,
    "Quizmaster question",
    fields=[{"name": name} for name in ANKI_FIELDS],
    templates=[
        {
            "name": "Question",
            "qfmt": "{{Prompt}}<br><br>{{Options}}",
            "afmt": "{{FrontSide}}<hr id=answer>{{Answer}}<br><br>{{Explanation}}",
        }
    ],
    css=".card { font-family: sans-serif; font-size: 18px; text-align: left; }",
)


def deck_id(bank_id: str) -> int:
    """A stable deck id per bank (Anki wants a positive 63-bit integer)."""
    digest = hashlib.sha256(f"quizmaster-deck:{bank_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big") >> 2


def note_guid(question_id: str) -> str:
    return str(genanki.guid_for("quizmaster", question_id))


def package(questions: Sequence[tuple[Bank, Question]], timestamp: float) -> bytes:
    """The `.apkg` bytes; `timestamp` (the injected clock) stamps notes and cards."""
    decks: dict[str, genanki.Deck] = {}
    for bank, question in questions:
        deck = decks.get(bank.id)
        if deck is None:
            deck = decks[bank.id] = genanki.Deck(deck_id(bank.id), bank.title)
        deck.add_note(
            genanki.Note(
                model=MODEL,
                fields=list(anki_fields(question)),
                tags=[*question.tags, question.difficulty, bank.id],
                guid=note_guid(question.id),
            )
        )
    return _write(genanki.Package(list(decks.values())), timestamp)


def _write(made: genanki.Package, timestamp: float) -> bytes:
    # Package.write_to_file leaves its temporary database behind; write the
    # collection into a folder of our own, which is removed afterwards.
    with tempfile.TemporaryDirectory(prefix="quizmaster-anki-") as folder:
        path = Path(folder) / "collection.anki2"
        connection = sqlite3.connect(path)
        try:
            made.write_to_db(connection.cursor(), timestamp, itertools.count(int(timestamp * 1000)))
            connection.commit()
        finally:
            connection.close()
        out = BytesIO()
        with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
            archive.write(path, "collection.anki2")
            archive.writestr("media", "{}")
        return out.getvalue()


def anki_fields(question: Question) -> tuple[str, str, str, str]:
    """A question's note fields (HTML): prompt, options lettered in bank order
    (a true/false question's just True and False), the answer, the explanation."""
    right = question.options[question.answer_index]
    if question.true_false:
        options = "<br>".join(option.capitalize() for option in question.options)
        answer = f"<b>{right.capitalize()}</b>"
        return html.escape(question.prompt), options, answer, html.escape(question.explanation)
    options = "<br>".join(
        f"<b>{LETTERS[index]}.</b> {html.escape(option)}"
        for index, option in enumerate(question.options)
    )
    answer = f"<b>{question.answer}.</b> {html.escape(right)}"
    return html.escape(question.prompt), options, answer, html.escape(question.explanation)
