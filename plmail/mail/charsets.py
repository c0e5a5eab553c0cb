"""Turning bytes of doubtful charset into text without ever failing."""

from __future__ import annotations

import codecs
import functools

# Charset labels seen in real mail that Python's codec registry does not know, or knows wrongly.
_ALIASES = {
    "unknown-8bit": None,
    "x-unknown": None,
    "unknown": None,
    "x-user-defined": "windows-1252",
    "default": None,
    "iso-8859-8-i": "iso-8859-8",
    "ks_c_5601-1987": "cp949",
    "gb2312": "gb18030",  # senders label GBK text as gb2312; gb18030 is a superset of both
    "gbk": "gb18030",
    "x-gbk": "gb18030",
    "utf8": "utf-8",
    "utf-7": "utf-7",
    "x-mac-roman": "mac-roman",
}
# Text labelled ASCII or Latin-1 is, in practice, Windows-1252 (the HTML standard makes the same call).
_WIDEN = {"ascii": "windows-1252", "us-ascii": "windows-1252", "iso-8859-1": "windows-1252", "latin-1": "windows-1252",
          "latin1": "windows-1252", "iso8859-1": "windows-1252", "l1": "windows-1252"}


@functools.lru_cache(maxsize=256)
def normalise_charset(label: str | None) -> str | None:
    """A codec name Python can use, or None when the label says nothing useful."""
    if not label:
        return None
    name = label.strip().strip("\"'").lower()
    if not name:
        return None
    if name in _ALIASES:
        return _ALIASES[name]
    name = _WIDEN.get(name, name)
    try:
        return codecs.lookup(name).name
    except LookupError:
        return None


def decode_text(data: bytes, declared: str | None) -> str:
    """Decode with the declared charset, else UTF-8, else Windows-1252, else Latin-1 (which never fails)."""
    charset = normalise_charset(declared)
    if charset is not None:
        try:
            return data.decode(charset)
        except (UnicodeDecodeError, LookupError):
            pass
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        pass
    try:
        return data.decode("windows-1252")
    except UnicodeDecodeError:
        return data.decode("latin-1")


def repair_surrogates(value: str) -> str:
    """Headers parsed from bytes keep 8-bit octets as surrogate escapes; recover them as text."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return decode_text(value.encode("utf-8", "surrogateescape"), None)
    return value


def storable(value: str) -> str:
    """PostgreSQL text and jsonb refuse NUL characters; drop them."""
    return value.replace("\x00", "") if "\x00" in value else value
