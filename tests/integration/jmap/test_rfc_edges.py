"""The edges of RFC 8620/8621 a conformance run finds (issue 35): /changes, /set ordering, Mailbox defaults and
destroy, Email/query's sentAt, Email/import's required argument, and how Email/get renders subjects, body values
and multipart structure. Each test quotes the sentence it checks."""

from __future__ import annotations

from datetime import timedelta

from plmail.domain.enums import LabelRole
from tests.integration.jmap.conftest import JmapBox
from tests.support.mail import BASE_DATE, make_message
from tests.support.web import sign_in


async def test_thread_changes_lists_a_new_thread_as_created(box: JmapBox) -> None:
    """RFC 8620 §5.2 created: "An array of ids for records that have been created since the old state." A reply
    to a thread that existed before is that thread's update, not a creation."""
    first = await box.ingest(make_message(message_id="t1@x", subject="Plans"))
    old_thread = str(first.messages[0].thread_id)
    state = await box.state("Thread")
    arrived = await box.ingest(make_message(message_id="t2@x", subject="Other"),
                               make_message(message_id="t3@x", subject="Re: Plans", in_reply_to="t1@x",
                                            references=["t1@x"], date=BASE_DATE + timedelta(hours=1)))
    new_thread = str(arrived.messages[0].thread_id)
    changes = await box.call("Thread/changes", {"sinceState": state})
    assert changes["created"] == [new_thread]
    assert changes["updated"] == [old_thread] and changes["destroyed"] == []


async def test_mailbox_set_creates_parents_first_whatever_the_map_order(box: JmapBox) -> None:
    """RFC 8620 §5.3: a creation id may be referenced with "#" by another create in the same call; the server
    has to create the referenced record first, so the child naming "#parent" succeeds although it comes first."""
    result = await box.call("Mailbox/set", {"create": {
        "child": {"name": "Q3", "parentId": "#parent"},
        "grandchild": {"name": "Week 1", "parentId": "#child"},
        "parent": {"name": "Reports"}}})
    assert result["notCreated"] is None, result["notCreated"]
    ids = {k: v["id"] for k, v in result["created"].items()}
    got = {m["id"]: m for m in (await box.call("Mailbox/get", {"ids": list(ids.values())}))["list"]}
    assert got[ids["child"]]["parentId"] == ids["parent"]
    assert got[ids["grandchild"]]["parentId"] == ids["child"]
    cycle = await box.call("Mailbox/set", {"create": {"a": {"name": "A", "parentId": "#b"},
                                                      "b": {"name": "B", "parentId": "#a"}}})
    assert set(cycle["notCreated"]) == {"a", "b"}  # a cycle cannot be created, and nothing half of it is


async def test_new_mailbox_sort_order_defaults_to_zero(box: JmapBox) -> None:
    """RFC 8621 §2: "sortOrder: UnsignedInt (default: 0)"."""
    result = await box.call("Mailbox/set", {"create": {"m": {"name": "Receipts"}}})
    assert result["created"]["m"]["sortOrder"] == 0
    got = await box.call("Mailbox/get", {"ids": [result["created"]["m"]["id"]], "properties": ["sortOrder"]})
    assert got["list"][0]["sortOrder"] == 0


async def test_destroy_with_remove_emails_destroys_what_was_only_there(box: JmapBox) -> None:
    """RFC 8621 §2.5 onDestroyRemoveEmails: "If true, any Emails that were in this Mailbox will be removed from it,
    and if in no other Mailboxes, they will be destroyed when the Mailbox is destroyed.\""""
    stored = await box.ingest(make_message(message_id="only@x", subject="Only here"),
                              make_message(message_id="both@x", subject="Also in Inbox"))
    only, both = (str(m.id) for m in stored.messages)
    inbox = await box.mailbox_id(LabelRole.INBOX)
    folder = (await box.call("Mailbox/set", {"create": {"f": {"name": "Doomed"}}}))["created"]["f"]["id"]
    await box.call("Email/set", {"update": {only: {"mailboxIds": {folder: True}},
                                            both: {"mailboxIds": {folder: True, inbox: True}}}})
    refused = await box.call("Mailbox/set", {"destroy": [folder]})
    assert refused["notDestroyed"][folder]["type"] == "mailboxHasEmail"
    state = await box.state("Email")
    done = await box.call("Mailbox/set", {"destroy": [folder], "onDestroyRemoveEmails": True})
    assert done["destroyed"] == [folder]
    got = await box.call("Email/get", {"ids": [only, both], "properties": ["mailboxIds"]})
    assert got["notFound"] == [only]
    assert got["list"] == [{"id": both, "mailboxIds": {inbox: True}}]
    changes = await box.call("Email/changes", {"sinceState": state})
    assert changes["destroyed"] == [only] and changes["updated"] == [both]


async def test_a_flag_alone_does_not_update_the_inbox_mailbox(box: JmapBox) -> None:
    """RFC 8620 §5.2 updated: "An array of ids for records that have been updated since the old state." A Mailbox
    has no property a $flagged change moves (its counts are of emails and unread ones); $seen moves unreadEmails."""
    stored = await box.ingest(make_message(message_id="f@x"))
    email = str(stored.messages[0].id)
    inbox = await box.mailbox_id(LabelRole.INBOX)
    state = await box.state("Mailbox")
    await box.call("Email/set", {"update": {email: {"keywords/$flagged": True}}})
    flagged = await box.call("Mailbox/changes", {"sinceState": state})
    assert flagged["updated"] == [] and flagged["newState"] == state
    await box.call("Email/set", {"update": {email: {"keywords/$seen": True}}})
    seen = await box.call("Mailbox/changes", {"sinceState": state})
    assert inbox in seen["updated"]


async def test_email_query_sorts_by_sent_at(box: JmapBox) -> None:
    """RFC 8621 §4.4.2 lists "sentAt - The sentAt property on the Email object" among the sort properties; the
    session's emailQuerySortOptions names it."""
    stored = await box.ingest(
        make_message(message_id="a@x", subject="Written last", date=BASE_DATE + timedelta(days=2)),
        make_message(message_id="b@x", subject="Written first", date=BASE_DATE),
        make_message(message_id="c@x", subject="Written between", date=BASE_DATE + timedelta(days=1)))
    last, first, between = (str(m.id) for m in stored.messages)
    ascending = await box.call("Email/query", {"sort": [{"property": "sentAt", "isAscending": True}]})
    assert ascending["ids"] == [first, between, last]
    descending = await box.call("Email/query", {"sort": [{"property": "sentAt", "isAscending": False}]})
    assert descending["ids"] == [last, between, first]
    session = (await box.http.get("/jmap/session", headers=box.headers)).json()
    capability = session["accounts"][box.account]["accountCapabilities"]["urn:ietf:params:jmap:mail"]
    assert "sentAt" in capability["emailQuerySortOptions"]


async def test_email_import_without_emails_is_invalid_arguments(box: JmapBox) -> None:
    """RFC 8621 §4.8: the request's "emails: Id[EmailImport]" has no default; RFC 8620 §3.6.2 invalidArguments:
    "One of the arguments is of the wrong type or otherwise invalid, or a required argument is missing.\""""
    error = await box.error("Email/import", {"accountId": box.account})
    assert error["type"] == "invalidArguments"


async def test_subject_is_null_without_a_subject_header(box: JmapBox) -> None:
    """RFC 8621 §4.1.3: "subject: String|null", the value of header:Subject:asText, and a header form is null
    "If there is no header field with the given name" (§4.1.2). An empty Subject header is the empty string."""
    without = b"From: a@example.org\r\nTo: b@example.org\r\nMessage-ID: <nosubj@x>\r\n\r\nNo subject.\r\n"
    empty = b"From: a@example.org\r\nTo: b@example.org\r\nSubject:\r\nMessage-ID: <empty@x>\r\n\r\nEmpty.\r\n"
    stored = await box.ingest(without, empty)
    ids = [str(m.id) for m in stored.messages]
    got = {e["id"]: e["subject"] for e in (await box.call("Email/get", {"ids": ids, "properties": ["subject"]}))[
        "list"]}
    assert got == {ids[0]: None, ids[1]: ""}


async def test_body_values_have_lf_line_endings_and_structure_is_rfc_shaped(box: JmapBox) -> None:
    """RFC 8621 §4.1.4 EmailBodyValue value: "after decoding Content-Transfer-Encoding and the Content-Type
    charset ... and with any CRLF replaced with a single LF". subParts: "If the type is multipart/*, this contains
    the body parts of each child", so a leaf asked for subParts has null; a multipart has no blob (blobId "null if
    multipart") and so no size of its own."""
    stored = await box.ingest(make_message(message_id="lf@x", body="line one\r\nline two\r\n",
                                           html="<p>line one</p>\n<p>line two</p>"))
    email = str(stored.messages[0].id)
    got = (await box.call("Email/get", {
        "ids": [email], "properties": ["bodyStructure", "bodyValues", "textBody"], "fetchTextBodyValues": True,
        "bodyProperties": ["partId", "blobId", "size", "type", "subParts"]}))["list"][0]
    [text] = got["textBody"]
    value = got["bodyValues"][text["partId"]]["value"]
    assert "\r" not in value and value.startswith("line one\nline two")
    structure = got["bodyStructure"]
    assert structure["type"].startswith("multipart/") and structure["size"] is None and structure["blobId"] is None
    assert all(p["subParts"] is None and p["size"] > 0 for p in structure["subParts"])
    assert text["subParts"] is None


async def test_full_text_search_finds_stop_words(box: JmapBox) -> None:
    """RFC 8621 §4.4.1 text: "Looks for the text in emails" — a word that is in the message finds it, whether or
    not the language's stemmer calls it a stop word; the web's search box (the same vector) agrees."""
    stored = await box.ingest(make_message(message_id="stop@x", subject="Where to meet",
                                           body="Come here, to be or not to be.\n"),
                              make_message(message_id="other@x", subject="Lunch", body="Pizza at noon.\n"))
    # The box's account is a local archive, always importing: its mail is indexed for search afterwards.
    await box.services.search_index.catch_up()
    wanted = str(stored.messages[0].id)
    for text in ("here", "to be or not to be", "Where", "meet"):
        found = await box.call("Email/query", {"filter": {"text": text}})
        assert found["ids"] == [wanted], text
    body = await box.call("Email/query", {"filter": {"body": "here"}})
    assert body["ids"] == [wanted]
    assert (await sign_in(box.http, box.user.email, "correct horse")).status_code == 200
    page = (await box.http.get("/search", params={"q": "here"})).text
    assert "Where to meet" in page and "Lunch" not in page
