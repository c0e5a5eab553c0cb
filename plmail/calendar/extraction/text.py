"""Text as extractors hand it on: decoded whatever the bytes were, free of control characters, capped."""

from __future__ import annotations

import codecs
import re

# Control characters, byte-order marks and lone surrogates (which no database encoding accepts).
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ufeff\ufffe\uffff\ud800-\udfff]")
_LINE_SPACE = re.compile(r"[ \t\u00a0]+")
_ANY_SPACE = re.compile(r"\s+")
_BLANK_LINES = re.compile(r"\n{3,}")


def decode_bytes(data: bytes, charset: str | None = None) -> str:
    """Bytes as text, never raising: UTF-8 if they are that, else the declared charset, else Latin-1.

    Latin-1 maps every byte, so a calendar from a client that never heard of UTF-8 still reads as
    its sender wrote it rather than as a row of replacement characters.
    """
    data = data.removeprefix(codecs.BOM_UTF8)
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return data.decode("utf-16", errors="replace").replace("\x00", "")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        try:
            text = data.decode(_codec(charset) or "latin-1", errors="replace")
        except LookupError:  # a bytes-to-bytes codec ("base64") named as a charset
            text = data.decode("latin-1")
    return text.replace("\x00", "")


def _codec(charset: str | None) -> str | None:
    if not charset or len(charset) > 40:
        return None
    try:
        name = codecs.lookup(charset.strip().strip('"')).name
    except (LookupError, ValueError):
        return None
    return None if name.startswith("utf-8") else name  # a declared UTF-8 that failed to decode is wrong


def clean_line(value: str | None, limit: int) -> str | None:
    """One line of text (a title, a place): whitespace collapsed, control characters gone, capped."""
    if value is None:
        return None
    text = _ANY_SPACE.sub(" ", _CONTROL.sub("", value[: limit * 4])).strip()
    return clip(text, limit) or None


def clean_block(value: str | None, limit: int) -> str | None:
    """Multi-line text (a description): line breaks kept, runs of blank lines squeezed, capped."""
    if value is None:
        return None
    text = _CONTROL.sub("", value[: limit * 4].replace("\r\n", "\n").replace("\r", "\n"))
    lines = (_LINE_SPACE.sub(" ", line).strip() for line in text.split("\n"))
    return clip(_BLANK_LINES.sub("\n\n", "\n".join(lines)).strip(), limit) or None


def clip(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return text[: limit - 1].rstrip() + "…"
