"""Turning bytes of doubtful charset into text without ever failing."""

from __future__ import annotations

import codecs
import functools
import re
from email.policy import Compat32

import charset_normalizer

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
_ISO_2022_JP_ESCAPE = re.compile(rb"\x1b\$[@B]")
_DETECTION_SAMPLE = 64 * 1024
_DETECTION_MIN_8BIT = 16  # a word or two of accented Latin is no evidence of another script
# Mail text that arrives without a label is never in these: a stray NUL pattern must not make it UTF-16.
_NEVER_UNDECLARED = ["utf_16", "utf_16_be", "utf_16_le", "utf_32", "utf_32_be", "utf_32_le", "utf_7"]
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
    """Decode with the declared charset, else UTF-8, else (no usable label) the detected charset, else
    Windows-1252, else Latin-1 (which never fails)."""
    charset = normalise_charset(declared)
    if charset is not None:
        try:
            return data.decode(charset)
        except (UnicodeDecodeError, LookupError):
            pass
    elif _ISO_2022_JP_ESCAPE.search(data):
        # 7-bit Japanese (RFC 1468) reads as ASCII with escape sequences in it; UTF-8 would accept it as such.
        try:
            return data.decode("iso-2022-jp")
        except UnicodeDecodeError:
            pass
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        pass
    if charset is None:
        detected = detect_charset(data)
        if detected is not None:
            try:
                return data.decode(detected)
            except (UnicodeDecodeError, LookupError):
                pass
    try:
        return data.decode("windows-1252")
    except UnicodeDecodeError:
        return data.decode("latin-1")


def detect_charset(data: bytes) -> str | None:
    """The charset of undeclared 8-bit text that is not UTF-8, by charset-normalizer, when it names one that
    Windows-1252 (the fallback) would misread: Japanese, Chinese, Cyrillic and the like. None for text that reads
    the same in Windows-1252 (Western mail keeps its reading) or has too few 8-bit bytes to tell.
    Bounded: only a sample of the body is examined."""
    sample = data[:_DETECTION_SAMPLE]
    if sum(1 for byte in sample if byte > 0x7F) < _DETECTION_MIN_8BIT:
        return None
    if len(sample) < len(data):
        sample = sample[: sample.rfind(b"\n") + 1] or sample  # whole lines: a cut multi-byte character misleads
    results = charset_normalizer.from_bytes(sample, threshold=0.5, cp_exclusion=_NEVER_UNDECLARED)
    best = results.best()
    if best is None:
        return None
    western = sample.decode("windows-1252", errors="replace")
    if any(str(result) == western for result in results):
        return None
    detected = normalise_charset(best.encoding)
    return None if detected in ("iso8859-1", "ascii") else detected  # Latin-1 is read as Windows-1252 anyway


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


class _EightBitHeaders(Compat32):
    """compat32, except that a header carrying raw 8-bit octets (RFC 6532 allows UTF-8 there) is read as text the way
    a body without a label is, instead of compat32's U+FFFD for every such byte."""

    def header_fetch_parse(self, name: str, value: str) -> str:
        return repair_surrogates(value) if isinstance(value, str) else value


READING_POLICY = _EightBitHeaders()
