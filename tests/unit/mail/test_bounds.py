"""Parsing is bounded (issue 19): nesting deeper than 100 levels, more than 10,000 parts, a header block over
1 MB or a header over 64 KB are cut, and the message is read as far as that and says what was cut."""

from __future__ import annotations

import email
from email.policy import compat32

import pytest

from plmail.mail import bounds
from plmail.mail.bounds import MAX_DEPTH, MAX_PARTS, bound_message
from plmail.mail.mime import parse_mime
from tests.support.hostile import deep_multipart, good, long_header_line, many_attachments

MB = 1024 * 1024


def _depth(raw: bytes) -> int:
    part = email.message_from_bytes(raw, policy=compat32)
    depth = 0
    while part.is_multipart():
        part = part.get_payload()[0]
        depth += 1
    return depth


def test_an_ordinary_message_is_read_as_it_is() -> None:
    raw = many_attachments(50)
    bounded = bound_message(raw)
    assert bounded.data is raw and bounded.cuts == ()
    assert parse_mime(raw).cut_note is None


def test_nesting_is_read_to_level_one_hundred_and_no_deeper() -> None:
    for levels, cut in ((100, False), (101, True), (5_000, True)):
        bounded = bound_message(deep_multipart(levels))
        assert bool(bounded.cuts) is cut, levels
        assert _depth(bounded.data) == min(levels, 100)
    parsed = parse_mime(deep_multipart(5_000))
    assert parsed.message_id == "deep@x" and parsed.subject == "Deep"
    assert parsed.cut_note is not None and "deeper than 100 levels" in parsed.cut_note
    assert "too-complex" in parsed.defects


def test_parts_after_the_ten_thousandth_are_not_read() -> None:
    parsed = parse_mime(many_attachments(20_000))
    assert len(parsed.parts) == 10_000 - 1  # the first of the 10,000 parts is the text body
    assert parsed.body_text is not None and "see attached" in parsed.body_text
    assert parsed.cut_note is not None and "10,000" in parsed.cut_note
    assert parse_mime(many_attachments(10_000 - 1)).cut_note is None  # 10,000 parts exactly: all read


def test_a_header_over_64_kb_is_shortened_and_the_rest_of_the_message_read() -> None:
    parsed = parse_mime(long_header_line(2 * MB))
    assert 60_000 < len(parsed.subject) <= 64 * 1024
    assert parsed.to[0].address == "me@example.org" and (parsed.body_text or "").strip() == "body after a long header"
    assert parsed.cut_note is not None and "64 KB" in parsed.cut_note
    assert parsed.size == len(long_header_line(2 * MB))  # the original is what is stored
    folded = b"Subject: start\n" + b"".join(b" more folded text %d\n" % i for i in range(10_000)) + b"\nbody\n"
    assert len(parse_mime(folded).subject) <= 64 * 1024  # a header's folded lines count together


def test_a_header_block_over_1_mb_keeps_its_first_megabyte() -> None:
    head = b"".join(b"X-Filler-%d: %s\n" % (i, b"v" * 1000) for i in range(2_000))
    raw = head + b"Subject: late\n\nstill the body\n"
    parsed = parse_mime(raw)
    kept = [name for name in parsed.headers if name.startswith("X-Filler-")]
    assert 1_000 <= len(kept) < 1_100 and "Subject" not in parsed.headers
    assert (parsed.body_text or "").strip() == "still the body"
    assert parsed.cut_note is not None and "1 MB" in parsed.cut_note


def test_encapsulated_messages_count_as_nesting() -> None:
    raw = b"Content-Type: message/rfc822\n\n" * 3_000 + b"Subject: inner\n\nx"
    bounded = bound_message(raw)
    assert bounded.cuts
    email.message_from_bytes(bounded.data, policy=compat32)  # no RecursionError
    assert parse_mime(raw).cut_note is not None


def test_quoted_boundaries_and_crlf_lines_are_followed() -> None:
    raw = many_attachments(10_005).replace(b"boundary=z", b'boundary="z"').replace(b"\n", b"\r\n")
    parsed = parse_mime(raw)
    assert len(parsed.parts) == 10_000 - 1 and parsed.cut_note is not None
    assert parse_mime(good(1)).cut_note is None


def test_mail_that_cannot_reach_a_limit_is_not_scanned(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_scan(raw: bytes) -> None:
        raise AssertionError("scanned a message that cannot reach a limit")

    ordinary = many_attachments(50)
    monkeypatch.setattr(bounds, "_Scan", no_scan)
    bounded = bound_message(ordinary)
    assert bounded.data is ordinary and bounded.cuts == ()


def test_small_messages_at_each_limit_are_still_cut() -> None:
    head = b"Subject: small\nContent-Type: multipart/mixed; boundary=b\n\n"
    too_many_parts = head + b"--b\n\n" * (MAX_PARTS + 1) + b"--b--\n"
    encapsulated = b"Content-Type: message/rfc822\n\n" * (MAX_DEPTH + 1) + b"Subject: inner\n\nx"
    for raw in (too_many_parts, encapsulated, deep_multipart(MAX_DEPTH + 1)):
        assert len(raw) <= 64 * 1024  # small enough that size alone would not send it to the scan
        assert bound_message(raw).cuts, raw[:60]


def test_counting_agrees_with_the_scan_just_below_each_limit() -> None:
    head = b"Subject: small\nContent-Type: multipart/mixed; boundary=b\n\n"
    for raw in (head + b"--b\n\n" * (MAX_PARTS - 1) + b"--b--\n",
                b"Content-Type: message/rfc822\n\n" * (MAX_DEPTH - 1) + b"Subject: inner\n\nx",
                deep_multipart(MAX_DEPTH), good(3), long_header_line(60_000)):
        assert bound_message(raw) == bounds._Scan(raw).run()
        assert bound_message(raw).cuts == ()
