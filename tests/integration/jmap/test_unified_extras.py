"""The unified account's methods beyond get/set: Email/copy and Blob/copy between the user's accounts (RFC 8621
§4.7, RFC 8620 §6.3), the hasKeyword sorts (RFC 8621 §4.4.2), blobNotFound on Email/set create, Email/import
keeping its keywords, Mailbox sortOrder kept, and the unified Mailboxes being the web sidebar's labels."""

from __future__ import annotations

from datetime import timedelta

from plmail.domain.enums import LabelRole, ProviderKind
from plmail.mail.ingest import parse_message
from tests.integration.jmap.conftest import JmapBox
from tests.support.mail import BASE_DATE, make_message
from tests.support.repos import account_rows

UNIFIED_USING = ["urn:ietf:params:jmap:core", "urn:ietf:params:jmap:mail"]


async def _second(box: JmapBox, *raws: bytes) -> tuple[int, list[str]]:
    """A second local account of the same user, holding `raws` in its Inbox."""
    account = await account_rows(box.services).create(user_id=box.user.id, provider_kind=ProviderKind.LOCAL,
                                                      name="Old mail", email="old@example.org")
    stored = await box.services.pipeline.ingest([
        parse_message(raw, account_id=account, label_ids=(box.roles[LabelRole.INBOX],)) for raw in raws])
    return account, [str(m.id) for m in stored.messages]


async def _in(box: JmapBox, account: str, name: str, arguments: dict[str, object]) -> dict[str, object]:
    response = await box.request([[name, {"accountId": account, **arguments}, "c"]])
    result_name, result, _ = response.json()["methodResponses"][0]
    assert result_name == name, result
    return dict(result)


async def test_email_copy_into_the_archive_account_keeps_keywords(box: JmapBox) -> None:
    other, [email] = await _second(box, make_message(message_id="copy@x", subject="Keep a copy"))
    inbox = await box.mailbox_id(LabelRole.INBOX)
    unified = f"u{box.user.id}"
    copied = await box.call("Email/copy", {"fromAccountId": str(other), "create": {
        "c1": {"id": email, "mailboxIds": {inbox: True}, "keywords": {"$flagged": True, "Project": True}},
        "c2": {"id": "424242", "mailboxIds": {inbox: True}},
        "c3": {"id": email, "mailboxIds": {}}}})
    assert copied["fromAccountId"] == str(other) and copied["accountId"] == box.account
    new_id = copied["created"]["c1"]["id"]
    assert new_id != email
    assert copied["notCreated"]["c2"]["type"] == "notFound"
    assert copied["notCreated"]["c3"]["type"] == "invalidProperties"
    got = (await box.call("Email/get", {"ids": [new_id], "properties": ["subject", "keywords", "mailboxIds"]}))
    assert got["list"] == [{"id": new_id, "subject": "Keep a copy", "keywords": {"$flagged": True, "project": True},
                            "mailboxIds": {inbox: True}}]
    into_unified = await _in(box, unified, "Email/copy", {"fromAccountId": str(other), "create": {
        "u": {"id": email, "mailboxIds": {str(box.roles[LabelRole.INBOX]): True}}}})
    assert into_unified["notCreated"]["u"]["type"] == "alreadyExists"  # the unified account holds it already
    assert into_unified["notCreated"]["u"]["existingId"] == email
    same = await box.error("Email/copy", {"accountId": box.account, "fromAccountId": box.account, "create": {}})
    assert same["type"] == "invalidArguments"


async def test_blob_copy_between_accounts(box: JmapBox) -> None:
    other, _ = await _second(box)
    uploaded = await box.http.post(f"/jmap/upload/{other}", content=b"report bytes",
                                   headers={**box.headers, "Content-Type": "text/plain"})
    blob = uploaded.json()["blobId"]
    assert (await box.http.get(f"/jmap/download/{box.account}/{blob}/r.txt", headers=box.headers)).status_code == 404
    copied = await box.call("Blob/copy", {"fromAccountId": str(other), "blobIds": [blob, "u-" + "1" * 64]},
                            using=UNIFIED_USING)
    assert copied["copied"] == {blob: blob}  # the same bytes have the same id, now reachable here
    assert copied["notCopied"]["u-" + "1" * 64]["type"] == "notFound"
    fetched = await box.http.get(f"/jmap/download/{box.account}/{blob}/r.txt", headers=box.headers)
    assert fetched.status_code == 200 and fetched.content == b"report bytes"


async def test_has_keyword_sorts(box: JmapBox) -> None:
    stored = await box.ingest(*[make_message(message_id=f"k{i}@x", subject=f"K{i}") for i in range(4)])
    ids = [str(m.id) for m in stored.messages]
    await box.call("Email/set", {"update": {ids[1]: {"keywords/$flagged": True}, ids[2]: {"keywords/todo": True}}})
    flagged_first = await box.call("Email/query", {"sort": [
        {"property": "hasKeyword", "keyword": "$flagged", "isAscending": False},
        {"property": "receivedAt", "isAscending": False}]})
    assert flagged_first["ids"][0] == ids[1]
    todo_first = await box.call("Email/query", {"sort": [
        {"property": "someInThreadHaveKeyword", "keyword": "TODO", "isAscending": False}]})
    assert todo_first["ids"][0] == ids[2]  # keywords are case-insensitive
    last = await box.call("Email/query", {"sort": [{"property": "hasKeyword", "keyword": "$flagged"}]})
    assert last["ids"][-1] == ids[1]  # ascending: without the keyword first
    missing = await box.error("Email/query", {"accountId": box.account, "sort": [{"property": "hasKeyword"}]})
    assert missing["type"] == "invalidArguments"  # a keyword sort needs its keyword


async def test_create_with_an_unknown_blob_is_blob_not_found(box: JmapBox) -> None:
    drafts = await box.mailbox_id(LabelRole.DRAFTS)
    result = await box.call("Email/set", {"create": {"d": {
        "mailboxIds": {drafts: True}, "subject": "With a file",
        "attachments": [{"blobId": "u-" + "2" * 64, "type": "application/pdf", "name": "a.pdf"}]}}})
    refused = result["notCreated"]["d"]
    assert refused["type"] == "blobNotFound" and refused["notFound"] == ["u-" + "2" * 64]


async def test_import_keeps_the_keywords_it_is_given(box: JmapBox) -> None:
    uploaded = await box.http.post(f"/jmap/upload/{box.account}", content=make_message(message_id="imp@x"),
                                   headers={**box.headers, "Content-Type": "message/rfc822"})
    inbox = await box.mailbox_id(LabelRole.INBOX)
    imported = await box.call("Email/import", {"emails": {"i": {
        "blobId": uploaded.json()["blobId"], "mailboxIds": {inbox: True},
        "keywords": {"$seen": True, "$answered": True, "$forwarded": True, "Client-Tag": True}}}})
    email = imported["created"]["i"]["id"]
    got = await box.call("Email/get", {"ids": [email], "properties": ["keywords"]})
    assert got["list"][0]["keywords"] == {"$answered": True, "$forwarded": True, "$seen": True, "client-tag": True}


async def test_unified_mailboxes_are_the_labels_with_sort_order(box: JmapBox) -> None:
    unified = f"u{box.user.id}"
    other, _ = await _second(box, make_message(message_id="s1@x"), make_message(message_id="s2@x"))
    await box.ingest(make_message(message_id="s3@x"))
    listed = await _in(box, unified, "Mailbox/get", {"ids": None})
    boxes = {m["role"]: m for m in listed["list"] if m["role"]}
    assert boxes["inbox"]["id"] == str(box.roles[LabelRole.INBOX])  # a unified Mailbox id is the label's id
    assert boxes["inbox"]["totalEmails"] == 3  # both accounts' Inbox mail, as the sidebar counts it
    labels = await box.services.db.fetch("SELECT id FROM label WHERE user_id = $1", box.user.id)
    assert {m["id"] for m in listed["list"]} == {str(r["id"]) for r in labels}
    made = await _in(box, unified, "Mailbox/set", {"create": {"n": {"name": "Receipts", "sortOrder": 7}}})
    label = made["created"]["n"]["id"]
    again = await _in(box, unified, "Mailbox/get", {"ids": [label], "properties": ["name", "sortOrder", "myRights"]})
    assert again["list"][0]["sortOrder"] == 7
    moved = await _in(box, unified, "Mailbox/set", {"update": {label: {"sortOrder": 3, "name": "Receipts",
                                                                     "myRights": again["list"][0]["myRights"]}}})
    assert moved["updated"] == {label: None}  # unchanged server-set values may be repeated
    assert (await _in(box, unified, "Mailbox/get", {"ids": [label]}))["list"][0]["sortOrder"] == 3
    assert str(other) in (await box.http.get("/jmap/session", headers=box.headers)).json()["accounts"]


async def test_a_user_without_mail_sources_has_the_unified_account_empty(box: JmapBox) -> None:
    newcomer = await box.services.users.create_user("new@example.org", "correct horse")
    token = (await box.services.app_passwords.create(newcomer.id, "Phone")).token
    headers = {"Authorization": f"Bearer {token}"}
    session = (await box.http.get("/jmap/session", headers=headers)).json()
    unified = f"u{newcomer.id}"
    assert list(session["accounts"]) == [unified]
    assert session["primaryAccounts"]["urn:ietf:params:jmap:mail"] == unified
    response = await box.request([
        ["Mailbox/get", {"accountId": unified, "ids": None}, "m"],
        ["Email/query", {"accountId": unified, "filter": None}, "q"],
        ["Email/changes", {"accountId": unified, "sinceState": "0"}, "c"],
        ["Identity/get", {"accountId": unified}, "i"],
    ], using=[*UNIFIED_USING, "urn:ietf:params:jmap:submission"], token=token)
    mailboxes, query, changes, identities = (r[1] for r in response.json()["methodResponses"])
    inbox = next(m for m in mailboxes["list"] if m["role"] == "inbox")
    assert inbox["totalEmails"] == 0 and inbox["unreadEmails"] == 0  # the labels are there, with nothing in them
    assert query["ids"] == [] and changes["created"] == [] and identities["list"] == []


async def test_unified_query_merges_the_accounts_in_order_and_pages(box: JmapBox) -> None:
    """Newest first across both accounts, whichever account a message is in; pages and totals agree."""
    other, _ = await _second(box)
    inbox_label = box.roles[LabelRole.INBOX]
    stored = await box.services.pipeline.ingest([
        parse_message(make_message(message_id=f"n{i}@x", subject=f"N{i}"),
                      account_id=other if i % 2 else box.account_id, label_ids=(inbox_label,),
                      received_at=BASE_DATE + timedelta(minutes=i))
        for i in range(12)])  # the accounts take turns, one minute apart
    number = {m.id: int(str(m.parsed.message_id)[1:].split("@")[0]) for m in stored.messages}
    oldest_first = [str(i) for i in sorted(number, key=number.__getitem__)]
    newest_first = list(reversed(oldest_first))
    unified = f"u{box.user.id}"
    whole = await _in(box, unified, "Email/query", {"filter": {"inMailbox": str(inbox_label)},
                                                    "collapseThreads": True, "calculateTotal": True})
    assert whole["ids"] == newest_first and whole["total"] == 12
    page = await _in(box, unified, "Email/query", {"filter": {"inMailbox": str(inbox_label)}, "position": 3,
                                                   "limit": 4})
    assert page["ids"] == newest_first[3:7]
    oldest = await _in(box, unified, "Email/query", {"sort": [{"property": "receivedAt", "isAscending": True}],
                                                     "limit": 3})
    assert oldest["ids"] == oldest_first[:3]
