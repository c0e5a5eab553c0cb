"""User-facing text in English and German, from gettext catalogs (plmail/locale/<lang>/LC_MESSAGES/messages.mo).

English strings are the message ids; `tools/i18n` extracts them from the code and templates and merges them into
the catalogs. `pgettext` tells words apart that English spells the same ("Archive" the verb and the folder),
`ngettext` picks the plural form the language needs.
"""

from __future__ import annotations

import sys
from functools import cache
from pathlib import Path

from babel.support import NullTranslations, Translations

from plmail.domain.enums import Locale

LOCALE_DIR = Path(__file__).resolve().parent.parent / "locale"
DOMAIN = "messages"
LANGUAGES = tuple(locale.value for locale in Locale)


@cache
def catalog(locale: str) -> NullTranslations:
    """The compiled catalog of a language; English (and anything unknown) shows the message ids themselves."""
    if locale not in LANGUAGES:
        locale = Locale.EN.value
    return Translations.load(str(LOCALE_DIR), [locale], DOMAIN)


def _format(template: str, values: dict[str, object]) -> str:
    return template.format(**values) if values else template


def translate(text: str, locale: Locale | str, **values: object) -> str:
    return _format(catalog(str(locale)).gettext(text), values)


def translate_in(context: str, text: str, locale: Locale | str, **values: object) -> str:
    return _format(str(catalog(str(locale)).pgettext(context, text)), values)


def translate_plural(singular: str, plural: str, n: int, locale: Locale | str, **values: object) -> str:
    """`{n}` in either form is the count."""
    return _format(catalog(str(locale)).ngettext(singular, plural, n), {"n": n, **values})


def pick_locale(accept_language: str | None) -> Locale:
    """The best of our two languages for a visitor who is not signed in."""
    if not accept_language:
        return Locale.EN
    best = Locale.EN
    best_q = -1.0
    for item in accept_language.split(","):
        tag, _, params = item.strip().partition(";")
        q = 1.0
        if params.strip().startswith("q="):
            try:
                q = float(params.strip()[2:])
            except ValueError:
                q = 0.0
        primary = tag.strip().lower().split("-")[0]
        if primary in ("de", "en") and q > best_q:
            best, best_q = Locale(primary), q
    return best


def _fill_source(path: str) -> None:
    """The source language's catalog translates every entry as itself (run by tools/i18n)."""
    from babel.messages.pofile import read_po, write_po

    with open(path, "rb") as f:
        po = read_po(f)
    for message in po:
        filled = all(message.string) if isinstance(message.string, tuple) else bool(message.string)
        if message.id and not filled:
            message.string = message.id
    with open(path, "wb") as f:
        write_po(f, po, width=120, omit_header=False)


if __name__ == "__main__" and sys.argv[1:2] == ["fill-source"]:
    _fill_source(sys.argv[2])
