"""Pure parts of the Graph provider: reading Graph's JSON, building the pipeline's message from it, and where
a label change puts a message."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from plmail.domain.enums import LabelRole
from plmail.domain.providers import PendingChange
from plmail.providers.graph.convert import MEETING_HEADER, ingested
from plmail.providers.graph.models import remote_message
from plmail.providers.graph.propagator import Folders, choose_folder
from plmail.providers.graph.repos.messages import FolderLabel, PlacedMessage
from plmail.providers.graph.sent_items import NotFileable, sent_item
from tests.support.fakes import rfc822

INBOX, ARCHIVE, TRASH, SPAM, SENT, PROJECTS, RECEIPTS, SNOOZED, CATEGORY = range(1, 10)
FOLDERS = [FolderLabel(INBOX, 11, LabelRole.INBOX, "f-inbox"), FolderLabel(ARCHIVE, 12, LabelRole.ARCHIVE, "f-arch"),
           FolderLabel(TRASH, 13, LabelRole.TRASH, "f-trash"), FolderLabel(SPAM, 14, LabelRole.SPAM, "f-spam"),
           FolderLabel(SENT, 15, LabelRole.SENT, "f-sent"), FolderLabel(PROJECTS, 16, None, "f-projects"),
           FolderLabel(RECEIPTS, 17, None, "f-receipts")]
ALL = Folders({f.label_id: f for f in FOLDERS}, {f.folder_id: f for f in FOLDERS})


def change(added: tuple[int, ...] = (), removed: tuple[int, ...] = (), change_id: int = 1) -> PendingChange:
    return PendingChange(change_id, 100, "labels", added, removed, None, None, 0)


def placed(folder: str, *labels: int) -> PlacedMessage:
    return PlacedMessage(100, "g-1", folder, 7, frozenset(labels))


def target(message: PlacedMessage, *changes: PendingChange, folders: Folders = ALL) -> str | None:
    found = choose_folder(message, changes, folders, {})
    return found.folder_id if found else None


def test_a_folder_label_put_on_moves_the_message_there_trash_and_spam_first() -> None:
    assert target(placed("f-inbox", TRASH), change(added=(TRASH,), removed=(INBOX,))) == "f-trash"
    assert target(placed("f-inbox", INBOX, PROJECTS), change(added=(PROJECTS,))) == "f-projects"
    assert target(placed("f-inbox", PROJECTS, TRASH), change(added=(PROJECTS, TRASH))) == "f-trash"
    assert target(placed("f-arch", INBOX), change(added=(INBOX,), removed=(SNOOZED,))) == "f-inbox"  # wake


def test_taking_off_the_location_label_moves_to_what_remains_else_the_archive() -> None:
    assert target(placed("f-inbox"), change(removed=(INBOX,))) == "f-arch"  # archive
    assert target(placed("f-inbox", SNOOZED), change(added=(SNOOZED,), removed=(INBOX,))) == "f-arch"  # snooze
    assert target(placed("f-projects", SENT), change(removed=(PROJECTS,))) == "f-sent"
    no_archive = Folders({k: v for k, v in ALL.by_label.items() if k != ARCHIVE},
                         {k: v for k, v in ALL.by_folder.items() if k != "f-arch"})
    assert target(placed("f-inbox"), change(removed=(INBOX,)), folders=no_archive) is None  # stays put


def test_a_category_label_does_not_move_the_message() -> None:
    assert target(placed("f-inbox", INBOX, CATEGORY), change(added=(CATEGORY,))) == "f-inbox"


def test_graph_json_becomes_the_pipelines_message() -> None:
    message = remote_message({
        "@odata.type": "#microsoft.graph.eventMessage", "id": "AAMk=1", "parentFolderId": "f-inbox",
        "conversationId": "AAQk=9", "internetMessageId": "<abc@example.org>", "subject": "Planning",
        "from": {"emailAddress": {"name": "Ann", "address": "Ann@Example.org"}},
        "toRecipients": [{"emailAddress": {"name": "bob@example.net", "address": "bob@example.net"}}],
        "receivedDateTime": "2026-03-02T09:00:00Z", "sentDateTime": "2026-03-02T08:59:00Z", "isRead": True,
        "flag": {"flagStatus": "flagged"}, "categories": ["Receipts"], "meetingMessageType": "meetingRequest",
        "body": {"contentType": "html", "content": "<p>Let us <b>plan</b>.</p>"}, "hasAttachments": False,
    })
    assert message.is_meeting and message.flagged and message.is_read and message.categories == ("Receipts",)
    result = ingested(5, message, label_ids=(1, 2))
    parsed = result.parsed
    assert result.raw is None and result.ref.key == "AAMk=1" and result.provider_thread_key == "AAQk=9"
    assert result.received_at == datetime(2026, 3, 2, 9, tzinfo=UTC) and result.seen and result.starred
    assert parsed.message_id == "abc@example.org" and parsed.from_address == "ann@example.org"
    assert parsed.to[0].name == "" and parsed.body_html == "<p>Let us <b>plan</b>.</p>"
    assert "plan" in (parsed.body_text or "") and parsed.headers[MEETING_HEADER] == "meetingRequest"
    moved = ingested(5, remote_message({**_json(message.id), "id": "AAMk=2", "parentFolderId": "f-arch"}),
                     label_ids=(3,))
    assert moved.parsed.content_hash == ingested(5, remote_message(_json("AAMk=3")), label_ids=()).parsed.content_hash


def _json(graph_id: str) -> dict[str, object]:
    return {"id": graph_id, "internetMessageId": "<same@example.org>", "subject": "Same",
            "sentDateTime": "2026-03-02T08:59:00Z", "body": {"contentType": "text", "content": "Same text."}}


def test_a_plain_message_is_not_a_meeting() -> None:
    message = remote_message({"id": "x", "meetingMessageType": "none", "body": {"contentType": "text",
                                                                                  "content": "hi"}})
    assert not message.is_meeting and message.body == "hi" and not message.body_is_html
    assert MEETING_HEADER not in ingested(1, message, label_ids=()).parsed.headers


def test_a_sent_copy_becomes_graphs_message_json_and_a_file_over_the_limit_is_refused() -> None:
    """The JSON create of a copy for Sent Items: PR_MESSAGE_FLAGS mfRead without mfUnsent (MS-OXCMSG 2.2.1.6),
    the Date as PR_CLIENT_SUBMIT_TIME, only x- headers as internetMessageHeaders (Graph: "name them starting with
    x-"), the reply reference as PR_IN_REPLY_TO_ID; an attachment over the limit (Graph: 150 MB) is refused."""
    raw = rfc822("Hi", sender="Alex <alex@outlook.com>", to="bob@example.net", in_reply_to="<a@example.net>",
                 headers={"X-Mailer": "laptop", "List-Id": "<list.example>"},
                 attachments=[("a.txt", "text/plain", b"a" * 2048)])
    item = sent_item(raw)
    properties = {p["id"]: p["value"] for p in item.message["singleValueExtendedProperties"]}
    assert properties["Integer 0x0E07"] == "1"
    assert properties["SystemTime 0x0039"] == "2026-01-02T09:30:00Z"
    assert properties["String 0x1042"] == "<a@example.net>"
    assert item.message["internetMessageHeaders"] == [{"name": "X-Mailer", "value": "laptop"}]
    assert item.message["toRecipients"] == [{"emailAddress": {"address": "bob@example.net"}}]
    assert [(a.name, a.posted) for a in item.attachments] == [("a.txt", True)]
    with pytest.raises(NotFileable, match=r"a\.txt"):
        sent_item(raw, max_attachment=1024)
