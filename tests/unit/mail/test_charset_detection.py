"""A body with no declared charset is decoded by detection (issue 29), so undeclared Japanese, Cyrillic or UTF-8
reads correctly, while undeclared Western text keeps its Windows-1252 reading.

The bodies are real text: undeclared Japanese and Russian mail from the SpamAssassin corpus as it arrived, and
declared Japanese/Russian bodies from the corpora with their declaration taken away (and re-encoded in the other
charsets such mail is sent in).
"""

from __future__ import annotations

import email
import email.policy
import tarfile
from functools import cache

import pytest
from babel import Locale

from plmail.mail.charsets import decode_text, detect_charset
from plmail.mail.html_text import html_to_text
from plmail.mail.mime import parse_mime
from tests.support.mail import CORPUS


@cache
def _spamassassin(name: str) -> bytes:
    archive, member = name.split("/")
    with tarfile.open(CORPUS / "spamassassin-public-corpus" / f"{archive}.tar.gz") as tar:
        for info in tar.getmembers():
            if info.isfile() and info.name.endswith("/" + member):
                handle = tar.extractfile(info)
                assert handle is not None
                return handle.read()
    raise AssertionError(f"{name} is not in the SpamAssassin corpus")


def _text_part(raw: bytes) -> tuple[bytes, str | None]:
    message = email.message_from_bytes(raw, policy=email.policy.compat32)
    part = next(p for p in message.walk() if p.get_content_maintype() == "text")
    payload = part.get_payload(decode=True)
    assert isinstance(payload, bytes)
    return payload, part.get_content_charset()


def _undeclared(body: bytes, subtype: str = "plain") -> bytes:
    """A message whose text part has no charset parameter, its 8-bit body as it is."""
    return (f"From: a@example.org\r\nSubject: x\r\nMIME-Version: 1.0\r\nContent-Type: text/{subtype}\r\n"
            "Content-Transfer-Encoding: 8bit\r\n\r\n").encode() + body


def _japanese_reference() -> str:
    """A real Japanese business mail (ISO-2022-JP declared), about 5,000 characters."""
    body, charset = _text_part(_spamassassin("hard_ham/00042.5b7f2a0e87c853e8c8e13d556c1320d2"))
    assert charset == "iso-2022-jp"
    return body.decode("iso-2022-jp")


def test_real_undeclared_japanese_mail_reads_as_japanese() -> None:
    raw = _spamassassin("spam/00323.9e36bf05304c99f2133a4c03c49533a9")
    body, charset = _text_part(raw)
    assert charset is None and not body.isascii()
    text = parse_mime(raw).body_text or ""
    assert "しじみともものコラボレーション" in text
    assert "ã" not in text and "\x81" not in text  # not the Windows-1252 / Latin-1 reading


def test_real_undeclared_russian_mail_reads_as_cyrillic() -> None:
    raw = _spamassassin("spam_2/00789.ffe4e3c5dc50f5a9ac33a653b5f8b566")
    body, charset = _text_part(raw)
    assert charset is None and not body.isascii()
    parsed = parse_mime(raw)
    assert "ЗДЕСЬ РЕАЛЬНЫЕ ДЕНЬГИ!!!" in (parsed.body_html or "")
    assert "ЗДЕСЬ РЕАЛЬНЫЕ ДЕНЬГИ!!!" in (parsed.body_text or "")


@pytest.mark.parametrize("encoding", ["shift_jis", "euc-jp", "iso-2022-jp", "utf-8"])
def test_undeclared_japanese_in_each_charset_it_is_sent_in(encoding: str) -> None:
    text = _japanese_reference()
    parsed = parse_mime(_undeclared(text.encode(encoding)))
    assert parsed.body_text == text


def test_original_iso_2022_jp_bytes_without_their_label() -> None:
    body, _ = _text_part(_spamassassin("hard_ham/00039.b2b936a8501444b213f61f9ff193b480"))
    assert body.isascii()  # 7-bit: read as ASCII it would show escape sequences
    assert "いつもお世話になっております。" in (parse_mime(_undeclared(body)).body_text or "")


def _russian_reference() -> str:
    """Russian from the corpora: the Cyrillic lines of real Mailgun mails (flanker fixtures) and of a real KOI8-R
    mail, then the Russian names of the world's countries from CLDR (Babel's data): a short mail's worth."""
    lines: list[str] = []
    for name in ("enclosed.eml", "bilingual-simple.eml", "mailgun-pic.eml"):
        message = email.message_from_bytes((CORPUS / "flanker-fixtures" / "messages" / name).read_bytes(),
                                           policy=email.policy.compat32)
        for part in message.walk():
            if part.get_content_type() == "text/plain":
                payload = part.get_payload(decode=True)
                assert isinstance(payload, bytes)
                text = payload.decode(part.get_content_charset() or "utf-8")
                lines += [line for line in text.splitlines() if any("\u0400" <= c <= "\u04ff" for c in line)]
    body, _ = _text_part(_spamassassin("spam_2/00789.ffe4e3c5dc50f5a9ac33a653b5f8b566"))
    lines += [line for line in html_to_text(body.decode("koi8-r")).splitlines()
              if any("\u0400" <= c <= "\u04ff" for c in line)]
    assert len(lines) >= 4
    countries = sorted(Locale("ru").territories.values())[:40]
    return "\n".join(dict.fromkeys(lines)) + "\n\n" + ", ".join(countries) + "\n"


@pytest.mark.parametrize("encoding", ["koi8-r", "windows-1251", "iso-8859-5", "utf-8"])
def test_undeclared_russian_in_each_charset_it_is_sent_in(encoding: str) -> None:
    text = _russian_reference()
    assert parse_mime(_undeclared(text.encode(encoding))).body_text == text


def test_undeclared_western_text_keeps_its_windows_1252_reading() -> None:
    """German mail (the spec's own text) sent without a label stays as it was read before detection."""
    german = (CORPUS.parent / "seeds" / "mail-ingest.de.txt").read_text(encoding="utf-8")[:6000]
    encoded = german.encode("windows-1252", errors="replace")
    assert detect_charset(encoded) is None
    assert decode_text(encoded, None) == encoded.decode("windows-1252")
    quoted = "Stock Symbol \u201cIBXG\u201d \u2013 trading around \u20ac 1 \u00e0 la carte."
    assert decode_text(quoted.encode("cp1252"), None) == quoted
    assert decode_text("Köln".encode("latin-1"), None) == "Köln"  # too little to detect anything from


def test_a_declared_charset_is_believed_and_never_detected() -> None:
    text = _russian_reference()
    # Declared windows-1251, the bytes are windows-1251: the label wins, no guessing.
    assert decode_text(text.encode("windows-1251"), "windows-1251") == text
    # Declared us-ascii with 8-bit bytes: the label's Windows-1252 reading, as before (a declared label).
    assert decode_text(b"caf\xe9", "us-ascii") == "café"


def test_detection_examines_a_bounded_sample() -> None:
    """A very long undeclared body is decoded whole, from a detection over its beginning only."""
    text = _japanese_reference() * 40  # about 600 KB in Shift_JIS
    data = text.encode("shift_jis")
    assert len(data) > 512 * 1024
    assert decode_text(data, None) == text
