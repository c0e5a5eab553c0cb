"""The sanitised copy, and splitting mbox files and Maildirs."""

from __future__ import annotations

import json
from pathlib import Path

from plmail.mail.mailfiles import read_maildir, read_mbox
from plmail.mail.sanitizer import sanitize_html
from tests.support.mail import CORPUS

HOSTILE = """<html><head><style>body{background:url(http://t.example/x)}</style>
<script type="application/ld+json">{"@type":"FlightReservation"}</script></head>
<body onload="steal()"><p style="color:red;background-image:url(http://t.example/p)" onclick="x()">Hi
<a href="javascript:alert(1)">js</a> <a href="https://ok.example/">ok</a> <a href="data:text/html,<b>">data</a></p>
<img src="http://tracker.example/pixel.gif" width=1><img src="cid:logo@example.org">
<form action="https://phish.example/"><input name="password"></form><iframe src="https://x.example/"></iframe>
<object data="x.swf"></object><svg onload="x()"><script>y()</script></svg>
<table background="https://t.example/bg.png"><tr><td>cell</td></tr></table></body></html>"""


def test_scripts_styles_forms_frames_handlers_and_javascript_urls_are_gone() -> None:
    safe = sanitize_html(HOSTILE, message_id=42)
    html = safe.html.lower()
    for banned in ("<script", "<style", "<form", "<input", "<iframe", "<object", "<svg", "onload", "onclick",
                   "javascript:", "ld+json", "url(", "data:text/html"):
        assert banned not in html, banned
    assert 'style="color:red"' in safe.html  # harmless inline style survives
    assert 'href="https://ok.example/"' in safe.html and 'rel="noopener noreferrer nofollow"' in safe.html


def test_remote_images_blocked_until_allowed_and_cid_points_at_our_part_url() -> None:
    blocked = sanitize_html(HOSTILE, message_id=42)
    assert "tracker.example" not in blocked.html and "t.example/bg" not in blocked.html
    assert blocked.remote_images_blocked == 2
    assert 'src="/message/42/cid/logo%40example.org"' in blocked.html
    allowed = sanitize_html(HOSTILE, message_id=42, allow_remote_images=True)
    assert "http://tracker.example/pixel.gif" in allowed.html and allowed.remote_images_blocked == 0


def test_mbox_split_matches_mimekit_expected_offsets_and_keeps_unescaped_from_lines() -> None:
    folder = CORPUS / "mimekit-testdata" / "mbox"
    expected = [entry["mboxMarkerOffset"] for entry in json.loads((folder / "issue1189.unix-offsets.json").read_text())]
    assert [int(m.source_ref.rsplit("@", 1)[1]) for m in read_mbox(folder / "issue1189.mbox.txt")] == expected
    summary = (folder / "content-length-summary.txt").read_text(errors="replace")
    assert len(list(read_mbox(folder / "content-length.mbox.txt"))) == summary.count("From - ") == 29
    unmunged = list(read_mbox(folder / "unmunged.mbox.txt"))
    assert len(unmunged) == 2
    assert b"From Russia with love" in unmunged[0].raw and b"From Russia with love" in unmunged[1].raw


def test_mbox_unescapes_quoted_from_and_reads_takeout_and_mozilla_flags(tmp_path: Path) -> None:
    mbox = tmp_path / "All mail.mbox"
    mbox.write_bytes(
        b"From 1@xxx Mon Apr 24 14:31:33 +0000 2023\nX-Gmail-Labels: Inbox,Unread,Category Promotions,Work/Invoices\n"
        b"Subject: one\n\nbody\n>From the start\n\n"
        b"From - Tue Apr 25 10:00:00 2023\nX-Mozilla-Status: 0005\nSubject: two\n\nsecond\n"
    )
    first, second = list(read_mbox(mbox))
    assert b"\nFrom the start\n" in first.raw
    assert first.gmail_labels == ("Inbox", "Unread", "Category Promotions", "Work/Invoices")
    assert (first.seen, first.starred) == (False, False)
    assert (second.seen, second.starred) == (True, True)


def test_maildir_flags(tmp_path: Path) -> None:
    for sub in ("cur", "new", "tmp"):
        (tmp_path / sub).mkdir()
    (tmp_path / "cur" / "1.host:2,FS").write_bytes(b"Subject: seen and flagged\n\nx")
    (tmp_path / "new" / "2.host").write_bytes(b"Subject: new\n\ny")
    read = {m.source_ref: (m.seen, m.starred) for m in read_maildir(tmp_path)}
    assert read == {"cur/1.host:2,FS": (True, True), "new/2.host": (False, False)}
