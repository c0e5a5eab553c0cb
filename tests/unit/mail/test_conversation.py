"""The thread shows who and in what order (issue 29): messages by their own Date, a reply never above the message
it answers; each header with From, To, Cc (Bcc on the user's own copies) and "me" for the user's addresses."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta
from typing import Any

from plmail.mail.conversation import conversation_order, parties
from plmail.mail.repos.views import MessageView

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
_ids = itertools.count(1)


def _message(mid: str, *, sent: datetime | None, received: datetime | None = None, in_reply_to: str | None = None,
             references: tuple[str, ...] = (), **fields: Any) -> MessageView:
    values: dict[str, Any] = {
        "id": next(_ids), "thread_id": 1, "account_id": 1, "subject": mid, "from_name": "", "from_address": "",
        "to": (), "cc": (), "sent_at": sent, "received_at": received or sent, "unread": False, "starred": False,
        "body_text": "", "body_html": None, "body_html_safe": None, "headers": {}, "provider_labels": None,
        "category": None, "attachments": (), "rfc_message_id": mid,
        "in_reply_to": (in_reply_to,) if in_reply_to else (), "references": references,
    }
    values.update(fields)
    return MessageView(**values)


def _subjects(messages: list[MessageView]) -> list[str]:
    return [m.subject for m in conversation_order(messages)]


def test_messages_follow_their_own_date_not_their_arrival() -> None:
    # The reply arrived (was synced) before the original: Date decides, as the writers wrote them.
    first = _message("a@x", sent=T0, received=T0 + timedelta(hours=5))
    second = _message("b@x", sent=T0 + timedelta(hours=1), received=T0 + timedelta(hours=1), in_reply_to="a@x")
    third = _message("c@x", sent=T0 + timedelta(hours=2), received=T0 + timedelta(hours=2), in_reply_to="b@x")
    assert _subjects([third, second, first]) == ["a@x", "b@x", "c@x"]


def test_a_reply_never_shows_above_the_message_it_answers() -> None:
    # The sender's clock ran 10 minutes slow: by Date the reply would come first.
    original = _message("orig@x", sent=T0)
    reply = _message("reply@x", sent=T0 - timedelta(minutes=10), in_reply_to="orig@x")
    unrelated = _message("other@x", sent=T0 - timedelta(minutes=30))
    assert _subjects([reply, original, unrelated]) == ["other@x", "orig@x", "reply@x"]


def test_same_second_parent_before_child_by_references_too() -> None:
    root = _message("root@x", sent=T0)
    # References only (no In-Reply-To), and all three in the same second with ids in reverse.
    grandchild = _message("gc@x", sent=T0, references=("root@x", "child@x"))
    child = _message("child@x", sent=T0, references=("root@x",))
    assert _subjects([grandchild, child, root]) == ["root@x", "child@x", "gc@x"]


def test_siblings_keep_date_order_and_loops_do_not_lose_messages() -> None:
    root = _message("r@x", sent=T0)
    late = _message("late@x", sent=T0 + timedelta(hours=3), in_reply_to="r@x")
    early = _message("early@x", sent=T0 + timedelta(hours=1), in_reply_to="r@x")
    undated = _message("undated@x", sent=None, received=None)
    assert _subjects([late, undated, early, root]) == ["r@x", "early@x", "late@x", "undated@x"]
    # Broken headers: two messages answering each other. Both shown, earliest first.
    one = _message("one@x", sent=T0 + timedelta(minutes=1), in_reply_to="two@x")
    two = _message("two@x", sent=T0 + timedelta(minutes=2), in_reply_to="one@x")
    assert _subjects([two, one]) == ["one@x", "two@x"]


def _addr(name: str, address: str) -> dict[str, str]:
    return {"name": name, "address": address}


def test_header_lines_name_to_cc_and_me() -> None:
    received = _message("m@x", sent=T0, from_name="Carol", from_address="carol@example.org",
                        to=(_addr("Me Myself", "Me@Example.com"), _addr("Dave", "dave@example.org")),
                        cc=(_addr("", "erin@example.org"), _addr("Alias", "alias@example.com")),
                        bcc=(_addr("Hidden", "hidden@example.org"),))
    shown = parties(received, {"me@example.com", "alias@example.com"})
    assert shown.sender is not None and (shown.sender.name, shown.sender.me) == ("Carol", False)
    assert [(p.name, p.address, p.me) for p in shown.to] == [("Me Myself", "Me@Example.com", True),
                                                             ("Dave", "dave@example.org", False)]
    assert [(p.address, p.me) for p in shown.cc] == [("erin@example.org", False), ("alias@example.com", True)]
    assert shown.bcc == ()  # someone else's message: its Bcc line is not the reader's to see


def test_bcc_shows_on_my_own_sent_copy() -> None:
    sent = _message("s@x", sent=T0, from_name="Me", from_address="me@example.com",
                    to=(_addr("Carol", "carol@example.org"),), bcc=(_addr("Boss", "boss@example.org"),))
    shown = parties(sent, {"me@example.com"})
    assert shown.sender is not None and shown.sender.me
    assert [(p.name, p.me) for p in shown.bcc] == [("Boss", False)]
