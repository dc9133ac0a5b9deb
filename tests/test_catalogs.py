"""The message catalogs: complete in every shipped language, placeholders as in
English, compiled files in step with their sources, the template in step with the
code, and the pseudo-locale the platform tests use to find untranslated replies."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from babel.messages.catalog import Catalog as Messages
from babel.messages.mofile import read_mo
from babel.messages.pofile import read_po

from bot import i18n
from bot.i18n import LANGUAGES, LOCALE_DIR, pseudo, speaking, t, tn
from bot.quiz import texts

ROOT = Path(__file__).resolve().parent.parent
TRANSLATED = [code for code in LANGUAGES if code != "en"]
PLACEHOLDER = re.compile(r"\{(\w*)\}")


def template() -> Messages:
    with (LOCALE_DIR / "messages.pot").open("rb") as source:
        return read_po(source)


def catalog(code: str) -> Messages:
    with (LOCALE_DIR / code / "LC_MESSAGES" / "messages.po").open("rb") as source:
        return read_po(source, locale=code)


def placeholders(text: str) -> set[str]:
    return set(PLACEHOLDER.findall(text))


def test_the_five_languages_ship() -> None:
    assert set(LANGUAGES) == {"en", "de", "es", "fr", "pt_BR"}


@pytest.mark.parametrize("code", TRANSLATED)
def test_every_message_is_translated_with_the_placeholders_of_the_english(code: str) -> None:
    shipped = catalog(code)
    missing, wrong = [], []
    for message in template():
        if not message.id:
            continue
        found = shipped.get(message.id)
        strings = (
            found.string
            if found is not None and isinstance(found.string, tuple)
            else (found and found.string,)
        )
        if found is None or not all(strings) or found.fuzzy:
            missing.append(message.id)
            continue
        if isinstance(message.id, tuple):
            allowed = placeholders(message.id[0]) | placeholders(message.id[1])
            # Every form may leave out {count} ("one day"), none may invent one;
            # the last form (the many) names what the English plural names.
            ok = all(placeholders(form) <= allowed for form in strings) and placeholders(
                strings[-1]
            ) == placeholders(message.id[1])
        else:
            ok = placeholders(strings[0]) == placeholders(message.id)
        if not ok:
            wrong.append((message.id, strings))
    assert not missing, f"{code}: {len(missing)} untranslated, e.g. {missing[:3]}"
    assert not wrong, f"{code}: placeholders differ from the English: {wrong[:3]}"


@pytest.mark.parametrize("code", TRANSLATED)
def test_markup_and_emoji_survive_translation(code: str) -> None:
    shipped = catalog(code)
    for message in template():
        if not message.id or isinstance(message.id, tuple):
            continue
        english, translated = message.id, shipped[message.id].string
        assert isinstance(translated, str)
        for mark in ("**", "`", "\n", "✅", "❌", "🔥", "📚", "💡", "⚠️", "🎉", "⏱", "⏰"):
            assert english.count(mark) == translated.count(mark), (code, english, translated)


def test_the_template_holds_every_message_the_code_and_templates_use(tmp_path: Path) -> None:
    """`make messages` was run after the last text changed: extracting again
    finds exactly the template's messages."""
    fresh = tmp_path / "messages.pot"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "babel.messages.frontend",
            "-q",
            "extract",
            "-F",
            "babel.cfg",
            *("-k", "t", "-k", "tn:1,2", "-k", "N_", "-k", "described"),
            "--no-location",
            "-o",
            str(fresh),
            ".",
        ],
        cwd=ROOT,
        check=True,
    )
    with fresh.open("rb") as source:
        extracted = {message.id for message in read_po(source) if message.id}
    assert extracted == {message.id for message in template() if message.id}, (
        "run `make messages`, then translate what it added"
    )


@pytest.mark.parametrize("code", TRANSLATED)
def test_the_compiled_catalogs_are_up_to_date_with_their_sources(code: str) -> None:
    compiled = LOCALE_DIR / code / "LC_MESSAGES" / "messages.mo"
    assert compiled.exists(), "run `make catalogs` (make and the package build do it)"
    with compiled.open("rb") as source:
        built = {_key(m.id): _key(m.string) for m in read_mo(source) if m.id}
    wanted = {_key(m.id): _key(m.string) for m in catalog(code) if m.id}
    assert built == wanted


def _key(value: object) -> object:
    return tuple(value) if isinstance(value, list | tuple) else value


def test_plural_forms_follow_each_language() -> None:
    with speaking("de"):
        assert tn("1 day", "{count} days", 1) == "1 Tag"
        assert tn("1 day", "{count} days", 0) == "0 Tage"
    with speaking("fr"):  # French counts zero as singular
        assert tn("1 day", "{count} days", 0).startswith("0 ")
        assert tn("1 day", "{count} days", 0) == tn("1 day", "{count} days", 1).replace("1", "0")


def test_a_member_locale_maps_to_the_nearest_shipped_language() -> None:
    assert i18n.supported("es-ES") == "es"
    assert i18n.supported("es-419") == "es"
    assert i18n.supported("pt-BR") == "pt_BR"
    assert i18n.supported("pt-PT") == "pt_BR"
    assert i18n.supported("de") == "de"
    assert i18n.supported("en-GB") == "en"
    assert i18n.supported("ja") is None
    assert i18n.supported("en_XA") is None  # the pseudo-locale is not for members


def test_german_texts_read_german_and_keep_what_members_type() -> None:
    with speaking("de"):
        reply = texts.live.no_quiz_running().text
        assert reply == "In diesem Kanal läuft kein Quiz. Starte eins mit `/quiz start`."
        assert t("Hint") == "Tipp"
    with speaking("en"):
        assert texts.live.no_quiz_running().text.startswith("No quiz is running")


def test_the_pseudo_locale_accents_letters_but_not_placeholders_code_or_markup() -> None:
    shown = pseudo("Use `/quiz stop` in <#123>, {count} left: see https://example.org/x")
    assert "`/quiz stop`" in shown and "<#123>" in shown and "{count}" in shown
    assert "https://example.org/x" in shown
    assert not re.search(
        r"[A-Za-z]", PLACEHOLDER.sub("", re.sub(r"`[^`]*`|<[^>]*>|https?://\S+", "", shown))
    )
