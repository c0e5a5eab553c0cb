"""Parsing raw messages: charsets, encoded words, repeated headers, bodies and parts, broken input."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from plmail.mail.headers import header, header_values, names_a_meeting
from plmail.mail.mime import parse_mime
from plmail.mail.structure import section


def test_latin1_windows1252_and_broken_charset_declarations_decode() -> None:
    latin1 = (b"From: a@example.org\r\nSubject: x\r\nContent-Type: text/plain; charset=iso-8859-1\r\n\r\n"
              b"Gr\xfc\xdfe \x80\r\n")
    assert parse_mime(latin1).body_text == "Grüße €\r\n"  # ISO-8859-1 is read as its superset Windows-1252
    unknown = b"From: a@example.org\r\nContent-Type: text/plain; charset=x-made-up\r\n\r\nna\xc3\xafve\r\n"
    assert parse_mime(unknown).body_text == "naïve\r\n"  # unknown label: UTF-8 first
    lying = b"From: a@example.org\r\nContent-Type: text/plain; charset=utf-8\r\n\r\nK\xf6ln\r\n"
    assert parse_mime(lying).body_text == "Köln\r\n"  # declared UTF-8 but Latin-1 bytes
    ascii_8bit = b"From: a@example.org\r\nContent-Type: text/plain; charset=us-ascii\r\n\r\ncaf\xe9\r\n"
    assert parse_mime(ascii_8bit).body_text == "café\r\n"


def test_encoded_words_and_addresses() -> None:
    raw = (b"From: =?utf-8?q?J=C3=BCrgen_M=C3=BCller?= <Juergen@Example.ORG>\r\n"
           b"To: \"Team, Ops\" <ops@example.org>, bob@example.net\r\n"
           b"Subject: =?iso-8859-1?q?=DCber_die_Br=FCcke?= =?utf-8?b?4pyU?=\r\n\r\nbody\r\n")
    parsed = parse_mime(raw)
    assert parsed.subject == "Über die Brücke✔"
    assert parsed.from_name == "Jürgen Müller"
    assert parsed.from_address == "juergen@example.org"
    assert [(a.name, a.address) for a in parsed.to] == [("Team, Ops", "ops@example.org"), ("", "bob@example.net")]


def test_raw_utf8_headers_as_rfc_6532_allows_read_as_text_in_names_subjects_and_file_names() -> None:
    """RFC 6532 lets headers carry UTF-8 unencoded; before, every such byte came out as U+FFFD ("J��rg")."""
    raw = ("From: Jörg Müller <joerg@example.org>\r\nTo: Zoë <zoe@example.org>\r\nSubject: Grüße aus Köln\r\n"
           "MIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=b\r\n\r\n--b\r\n"
           "Content-Type: text/plain; charset=utf-8\r\n\r\nHallo\r\n--b\r\n"
           'Content-Type: application/pdf; name="Prüfbericht.pdf"\r\n'
           'Content-Disposition: attachment; filename="Prüfbericht.pdf"\r\n'
           "Content-Transfer-Encoding: base64\r\n\r\nJVBERi0=\r\n--b--\r\n").encode()
    parsed = parse_mime(raw)
    assert parsed.from_name == "Jörg Müller"
    assert parsed.subject == "Grüße aus Köln"
    assert [(a.name, a.address) for a in parsed.to] == [("Zoë", "zoe@example.org")]
    assert parsed.headers["Subject"] == "Grüße aus Köln"  # the stored header, which JMAP's header:Subject reads
    assert [p.filename for p in parsed.parts if not p.is_inline] == ["Prüfbericht.pdf"]
    assert parsed.mime_tree is not None
    assert [c["name"] for c in parsed.mime_tree["parts"]] == [None, "Prüfbericht.pdf"]
    assert section(raw, "2").name == "Prüfbericht.pdf"  # the name a download is offered under


def test_raw_8bit_headers_that_are_not_utf8_read_as_windows_1252_like_unlabelled_bodies() -> None:
    raw = b"From: J\xf6rg M\xfcller <joerg@example.org>\r\nSubject: Gr\xfc\xdfe \x80 5\r\n\r\nx\r\n"
    parsed = parse_mime(raw)
    assert parsed.from_name == "Jörg Müller"
    assert parsed.subject == "Grüße € 5"


def test_headers_are_stored_raw_with_repeats_as_lists_and_read_case_insensitively() -> None:
    raw = (b"Received: from a\r\nReceived: from b\r\nX-Custom: One\r\nLIST-ID: <l.example.org>\r\n"
           b"Subject: =?utf-8?q?caf=C3=A9?=\r\n\r\nx")
    parsed = parse_mime(raw)
    assert parsed.headers["Received"] == ["from a", "from b"]
    assert parsed.headers["Subject"] == "=?utf-8?q?caf=C3=A9?="  # raw, not decoded
    assert header(parsed.headers, "list-id") == "<l.example.org>"
    assert header_values(parsed.headers, "RECEIVED") == ["from a", "from b"]
    assert header(parsed.headers, "received") == "from a from b"


def test_threading_headers_dates_and_defaults() -> None:
    raw = (b"Message-ID: <abc@x>\r\nIn-Reply-To: <p@x> (comment)\r\nReferences: <r1@x>\r\n <p@x>\r\n"
           b"Date: Tue, 3 Mar 2026 10:00:00 +0100\r\n\r\nhi")
    parsed = parse_mime(raw)
    assert parsed.message_id == "abc@x"
    assert parsed.in_reply_to == ("p@x",)
    assert parsed.references == ("r1@x", "p@x")
    assert parsed.sent_at == datetime(2026, 3, 3, 9, 0, tzinfo=UTC)
    broken_date = parse_mime(b"Date: yesterday-ish\r\nDate2: x\r\n\r\nhi")
    assert broken_date.sent_at is None and broken_date.message_id is None


def test_bodies_attachments_inline_parts_and_calendar_parts_by_content_type() -> None:
    raw = b"""From: a@example.org\r
Content-Type: multipart/mixed; boundary="outer"\r
\r
--outer\r
Content-Type: multipart/alternative; boundary="alt"\r
\r
--alt\r
Content-Type: text/plain; charset=utf-8\r
\r
Plain body\r
--alt\r
Content-Type: text/html; charset=utf-8\r
\r
<p>HTML <img src="cid:logo@x"></p>\r
--alt\r
Content-Type: text/calendar; method=REQUEST; charset=utf-8\r
\r
BEGIN:VCALENDAR\r
END:VCALENDAR\r
--alt--\r
--outer\r
Content-Type: image/png\r
Content-ID: <logo@x>\r
Content-Transfer-Encoding: base64\r
\r
iVBORw0KGgo=\r
--outer\r
Content-Type: application/pdf; name="=?utf-8?q?Rechnung_M=C3=A4rz.pdf?="\r
Content-Disposition: attachment\r
Content-Transfer-Encoding: base64\r
\r
JVBERi0xLjQK\r
--outer--\r
"""
    parsed = parse_mime(raw)
    assert parsed.body_text is not None and parsed.body_text.strip() == "Plain body"
    assert parsed.body_html is not None and "cid:logo@x" in parsed.body_html
    kinds = {p.content_type: p for p in parsed.parts}
    assert kinds["text/calendar"].is_calendar  # recognised by type alone, though it sits inline in the alternative
    assert kinds["image/png"].is_inline and kinds["image/png"].content_id == "logo@x"
    assert kinds["image/png"].data.startswith(b"\x89PNG")
    assert kinds["application/pdf"].filename == "Rechnung März.pdf"
    assert kinds["application/pdf"].disposition == "attachment"
    assert parsed.has_attachments


def test_html_only_mail_gets_a_text_body_for_search_and_preview() -> None:
    raw = (b"Content-Type: text/html\r\n\r\n<html><head><style>p{}</style><script>x()</script></head>"
           b"<body><p>Hello&nbsp;<b>world</b></p><p>second</p></body></html>")
    parsed = parse_mime(raw)
    assert parsed.body_text is not None
    assert "Hello" in parsed.body_text and "world" in parsed.body_text and "x()" not in parsed.body_text
    assert parsed.preview.startswith("Hello")


def test_garbage_never_raises() -> None:
    samples = [b"", b"\x00\x01\x02", b"\xff" * 1000, b"Content-Type: multipart/mixed; boundary=\r\n\r\n--\r\n--\r\n",
               b"From: <<<>>>\r\nTo: ,,,@@@\r\n\r\n", b"Subject: \x00nul\r\n\r\nbody\x00with nul"]
    nested = b"".join(f"Content-Type: multipart/mixed; boundary=b{i}\r\n\r\n--b{i}\r\n".encode() for i in range(200))
    samples.append(nested)
    for raw in samples:
        parsed = parse_mime(raw)
        assert "\x00" not in (parsed.subject + (parsed.body_text or ""))
    assert "too-complex" in parse_mime(nested).defects


def test_meeting_marks_are_found_in_names_and_values_of_stored_headers() -> None:
    graph_invite = parse_mime(
        b"From: a@x.example\r\nX-MS-Exchange-Calendar-Series-Instance-Id: BAAA\r\nSubject: Sync\r\n\r\nbody\r\n")
    assert names_a_meeting(json.dumps(graph_invite.headers))
    typed = {"Content-Type": "multipart/mixed; boundary=x", "Content-Class": "urn:content-classes:CalendarMessage"}
    assert names_a_meeting(json.dumps(typed))
    plain = parse_mime(b"From: a@x.example\r\nSubject: Calendar for next week\r\n\r\nbody\r\n")
    assert not names_a_meeting(json.dumps(plain.headers))
