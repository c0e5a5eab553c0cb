"""Response shapes Dovecot does not produce but other servers do, fed to the parser the way aioimaplib hands
them over (one bytes per line, literals as separate bytearrays). No server needed."""

from __future__ import annotations

import datetime as dt

import pytest

from plmail.providers.imap import _syntax as syn
from plmail.providers.imap.errors import ImapProtocolError


def test_xlist_roles_are_mapped_to_special_use() -> None:
    lines: list[syn.Part] = [
        b'(\\HasNoChildren \\Inbox) "/" "Inbox"',
        b'(\\HasNoChildren \\AllMail) "/" "[Gmail]/All Mail"',
        b'(\\HasNoChildren \\Spam) "/" "[Gmail]/Spam"',
        b'(\\HasNoChildren \\Starred) "/" "[Gmail]/Starred"',
        b'(\\Noselect \\HasChildren) "/" "[Gmail]"',
        b"Success",
    ]
    boxes = {m.path: m for m in syn.parse_list(lines, xlist=True)}
    assert {p: m.special_use for p, m in boxes.items()} == {
        "INBOX": "\\Inbox", "[Gmail]/All Mail": "\\All", "[Gmail]/Spam": "\\Junk",
        "[Gmail]/Starred": "\\Flagged", "[Gmail]": None,
    }
    assert not boxes["[Gmail]"].selectable


def test_list_with_literal_names_and_nil_delimiter() -> None:
    lines: list[syn.Part] = [
        b'(\\HasNoChildren) "." {11}', bytearray(b'odd "name"\\'),
        b"(\\HasNoChildren \\SENT) NIL Outbox",
        b'() "/" "Dr&AOQ-fte"',
        b"LIST completed",
    ]
    boxes = syn.parse_list(lines)
    assert [(m.path, m.delimiter) for m in boxes] == [('odd "name"\\', "."), ("Outbox", None), ("Dräfte", "/")]
    assert boxes[1].special_use == "\\Sent"
    assert boxes[1].segments == ("Outbox",)


def test_fetch_with_two_literals_and_unsolicited_update() -> None:
    lines: list[syn.Part] = [
        b'1 FETCH (UID 7 FLAGS (\\Seen) INTERNALDATE " 4-Jul-2026 09:05:01 -0700" RFC822.SIZE 5 BODY[] {5}',
        bytearray(b"a)\r\n("),
        b" BODY[HEADER.FIELDS (SUBJECT)] {0}",
        bytearray(b""),
        b")",
        b"2 FETCH (FLAGS (\\Deleted))",  # another client's change, no UID, no body: not ours
        b"Fetch completed",
    ]
    parsed = syn.parse_fetch(lines)
    assert len(parsed) == 2
    message = syn.fetched_message(parsed[0][1])
    assert message is not None
    assert message.raw == b"a)\r\n("
    assert message.uid == 7
    assert message.internaldate == dt.datetime(2026, 7, 4, 9, 5, 1, tzinfo=dt.timezone(dt.timedelta(hours=-7)))
    assert parsed[0][1]["BODY[HEADER.FIELDS (SUBJECT)]"] == b""
    assert syn.fetched_message(parsed[1][1]) is None
    assert syn.flag_state(parsed[1][1]) is None


def test_size_listings_in_either_item_order_and_with_updates_in_between() -> None:
    plain: list[syn.Part] = [b"1 FETCH (UID 7 RFC822.SIZE 1200)", b"2 FETCH (RFC822.SIZE 31 UID 9)",
                             b"Fetch completed"]
    assert syn.parse_sizes(plain) == {7: 1200, 9: 31}
    mixed: list[syn.Part] = [
        b"1 FETCH (UID 7 RFC822.SIZE 1200)",
        b"2 FETCH (FLAGS (\\Deleted))",  # another client's change, no UID: not a size
        b"3 FETCH (UID 12 FLAGS (\\Seen) RFC822.SIZE 77)",  # a server that adds the flags it changed
        b"Fetch completed",
    ]
    assert syn.parse_sizes(mixed) == {7: 1200, 12: 77}
    assert syn.parse_sizes([b"Fetch completed"]) == {}


def test_literal_of_wrong_size_is_a_protocol_error() -> None:
    with pytest.raises(ImapProtocolError):
        syn.parse_fetch([b"1 FETCH (UID 1 BODY[] {9}", bytearray(b"short"), b")", b"done"])


def test_copyuid_keeps_listed_order() -> None:
    lines: list[syn.Part] = [b"OK [COPYUID 38505 304,319:320 3956:3958] Moved", b"304 EXPUNGE", b"done"]
    assert syn.parse_copyuid(lines) == (38505, {304: 3956, 319: 3957, 320: 3958})
    assert syn.parse_copyuid([b"[COPYUID 9 5:3 10:12] Done"]) == (9, {5: 10, 4: 11, 3: 12})
    assert syn.parse_copyuid([b"Copy completed"]) == (None, {})


def test_events() -> None:
    events = syn.parse_events([
        b"3 EXISTS", b"1 RECENT", b"2 EXPUNGE", b"VANISHED 5:6,9", b"VANISHED (EARLIER) 12",
        b"4 FETCH (UID 8 MODSEQ (77) FLAGS (\\Seen $Work))", b"OK [HIGHESTMODSEQ 77] Highest",
    ])
    assert [(e.kind, e.number, e.uids) for e in events] == [
        ("exists", 3, ()), ("recent", 1, ()), ("expunge", 2, ()), ("vanished", None, (5, 6, 9)),
        ("vanished", None, (12,)), ("fetch", 4, (8,)),
    ]
    assert events[-1].flags == frozenset({"\\Seen", "$Work"})
    assert events[-1].modseq == 77


def test_search_responses() -> None:
    assert syn.parse_search([b"2 5 9 (MODSEQ 100)", b"done"], esearch=False) == [2, 5, 9]
    assert syn.parse_search([b"", b"done"], esearch=False) == []
    assert syn.parse_search([b'(TAG "A5") UID ALL 1:3,8', b"done"], esearch=True) == [1, 2, 3, 8]
    assert syn.parse_search([b'(TAG "A5") UID', b"done"], esearch=True) == []


@pytest.mark.parametrize(
    ("name", "encoded"),
    [("INBOX", "INBOX"), ("Entwürfe", "Entw&APw-rfe"), ("A & B", "A &- B"), ("日本語", "&ZeVnLIqe-"),
     ("~peter/mail/台北/日本語", "~peter/mail/&U,BTFw-/&ZeVnLIqe-")],
)
def test_modified_utf7(name: str, encoded: str) -> None:
    assert syn.encode_mailbox(name) == encoded
    assert syn.decode_mailbox(encoded.encode()) == name


def test_uid_sets_and_quoting() -> None:
    assert syn.uid_set([9, 1, 2, 3, 5, 3]) == "1:3,5,9"
    assert syn.expand_uid_set("1:3,5") == [1, 2, 3, 5]
    assert syn.quote('a "b" \\c') == '"a \\"b\\" \\\\c"'
    with pytest.raises(ValueError, match="empty"):
        syn.uid_set([])
    with pytest.raises(ValueError, match="CR"):
        syn.quote("x\r\nA1 DELETE INBOX")
    with pytest.raises(ValueError, match="UID set"):
        syn.check_uid_set("1:*) (BODY[]")
