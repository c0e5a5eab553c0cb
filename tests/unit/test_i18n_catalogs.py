"""The gettext catalogs: every string the code and templates show is in English and German, checked the way
Babel checks a catalog, and the compiled .mo files are the .po files as they are now."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from babel.messages.catalog import Catalog
from babel.messages.extract import extract_from_dir
from babel.messages.frontend import parse_mapping_cfg
from babel.messages.mofile import read_mo
from babel.messages.pofile import read_po

from plmail.web.i18n import LOCALE_DIR, translate, translate_in, translate_plural

ROOT = Path(__file__).resolve().parents[2]
KEYWORDS = {"_": None, "gettext": None, "ngettext": (1, 2), "pgettext": ((1, "c"), 2), "translate": None,
            "translate_in": ((1, "c"), 2), "translate_plural": (1, 2), "N_": None,
            "NC_": ((1, "c"), 2)}


def _extracted() -> Catalog:
    """What `tools/i18n` extracts (babel.cfg, the same keywords), in memory."""
    with open(ROOT / "babel.cfg") as cfg:
        method_map, options_map = parse_mapping_cfg(cfg)
    catalog = Catalog()
    for _file, _line, message, _comments, context in extract_from_dir(
            ROOT / "plmail", method_map, options_map, keywords=KEYWORDS):
        catalog.add(message, None, context=context)
    return catalog


def _po(language: str) -> Catalog:
    with open(LOCALE_DIR / language / "LC_MESSAGES" / "messages.po", "rb") as f:
        return read_po(f)


def test_every_shown_string_is_translated_in_english_and_german() -> None:
    extracted = _extracted()
    assert len(extracted) > 400  # the whole UI, not a sample
    for language in ("de", "en"):
        catalog = _po(language)
        missing = [m.id for m in extracted if m.id and catalog.get(m.id, context=m.context) is None]
        assert not missing, f"{language}: not in the catalog (run tools/i18n): {missing[:10]}"
        untranslated = [m.id for m in catalog if m.id and (m.fuzzy or not all(
            m.string if isinstance(m.string, tuple) else (m.string,)))]
        assert not untranslated, f"{language}: untranslated or fuzzy: {untranslated[:10]}"
        problems = [(m.id, [str(e) for e in errors]) for m, errors in catalog.check()]
        assert not problems, f"{language}: Babel's catalog check: {problems[:5]}"


def _entry(context: str | None, key: object, text: object) -> tuple[object, ...]:
    def flat(value: object) -> object:
        return tuple(value) if isinstance(value, list | tuple) else value
    return context, flat(key), flat(text)


def test_the_compiled_catalogs_are_the_current_po_files() -> None:
    for language in ("de", "en"):
        with open(LOCALE_DIR / language / "LC_MESSAGES" / "messages.mo", "rb") as f:
            compiled = {_entry(m.context, m.id, m.string) for m in read_mo(f) if m.id}
        written = {_entry(m.context, m.id, m.string) for m in _po(language) if m.id}
        assert compiled == written, f"{language}: messages.mo is stale; run tools/i18n"


def test_strings_chosen_at_run_time_are_in_the_catalog() -> None:
    from plmail.mail.labels import COLOURS
    from plmail.mail.snooze import snooze_presets
    from plmail.web.controllers.rules import ACTION_LABELS, FIELD_LABELS
    from plmail.web.pages import CATEGORY_TABS

    chosen = {"Inbox", "Sent", "Drafts", "Trash", "Spam", "Archive", "Snoozed", "Not found", "Not allowed",
              *FIELD_LABELS.values(), *ACTION_LABELS.values(), *COLOURS, *(name for _k, name in CATEGORY_TABS),
              *(p.label for p in snooze_presets(datetime(2026, 3, 4, 9, tzinfo=UTC), "UTC"))}
    german = _po("de")
    assert not [text for text in chosen if german.get(text) is None or not german.get(text).string]


def test_contexts_and_plural_forms() -> None:
    assert translate_in("verb", "Archive", "de") == "Archivieren"
    assert translate("Archive", "de") == "Archiv"  # the folder
    assert translate_plural("matches {n} message", "matches {n} messages", 1, "de") == "trifft 1 Nachricht"
    assert translate_plural("matches {n} message", "matches {n} messages", 3, "de") == "trifft 3 Nachrichten"
    assert translate_plural("matches {n} message", "matches {n} messages", 1, "en") == "matches 1 message"
