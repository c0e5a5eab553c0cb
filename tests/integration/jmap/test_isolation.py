"""User A's app password never reaches user B's accounts, mail, mailboxes, threads or blobs."""

from __future__ import annotations

from plmail.domain.enums import LabelRole
from tests.integration.jmap.conftest import JmapBox, make_box
from tests.support.mail import make_message

METHODS = ["Mailbox/get", "Mailbox/query", "Mailbox/changes", "Mailbox/set", "Email/get", "Email/query",
           "Email/changes", "Email/queryChanges", "Email/set", "Email/import", "Thread/get", "Thread/changes",
           "SearchSnippet/get"]


async def test_another_users_account_is_not_found_for_every_method(box: JmapBox) -> None:
    bob = await make_box(box.services, box.http, "bob@example.org")
    for method in METHODS:
        error = await box.error(method, {"accountId": bob.account})
        assert error["type"] == "accountNotFound", method
    identity = await box.request([["Identity/get", {"accountId": bob.account}, "i"]],
                                 using=["urn:ietf:params:jmap:core", "urn:ietf:params:jmap:submission"])
    assert identity.json()["methodResponses"][0][1]["type"] == "accountNotFound"
    for method in ("Email/get", "Mailbox/get", "Email/changes"):  # nor Bob's unified account
        extra = {"sinceState": "0"} if method.endswith("changes") else {}
        assert (await box.error(method, {"accountId": f"u{bob.user.id}", **extra}))["type"] == \
            "accountNotFound", method
    session = (await box.http.get("/jmap/session", headers=box.headers)).json()
    assert list(session["accounts"]) == [f"u{box.user.id}", box.account]


async def test_ids_of_another_users_objects_name_nothing_in_my_account(box: JmapBox) -> None:
    bob = await make_box(box.services, box.http, "bob@example.org")
    stored = await bob.ingest(make_message(message_id="secret@x", subject="Bob's secret", body="classified"))
    email, thread = str(stored.messages[0].id), str(stored.messages[0].thread_id)
    bob_inbox = await bob.mailbox_id(LabelRole.INBOX)
    await box.state("Mailbox")

    assert (await box.call("Email/get", {"ids": [email]}))["notFound"] == [email]
    assert (await box.call("Thread/get", {"ids": [thread]}))["notFound"] == [thread]
    assert (await box.call("Mailbox/get", {"ids": [bob_inbox]}))["notFound"] == [bob_inbox]
    assert (await box.call("Email/query", {"filter": {"inMailbox": bob_inbox}}))["ids"] == []
    assert (await box.call("Email/query", {"filter": {"text": "classified"}}))["ids"] == []
    snippets = await box.call("SearchSnippet/get", {"filter": {"text": "classified"}, "emailIds": [email]})
    assert snippets["list"] == [] and snippets["notFound"] == [email]
    changed = await box.call("Email/set", {"update": {email: {"keywords/$seen": True}}, "destroy": [email]})
    assert changed["notUpdated"][email]["type"] == "notFound" and changed["notDestroyed"][email]["type"] == "notFound"
    moved = await box.call("Mailbox/set", {"update": {bob_inbox: {"name": "Mine"}}, "destroy": [bob_inbox]})
    assert moved["notUpdated"][bob_inbox]["type"] == "notFound"
    mine = await box.mailbox_id(LabelRole.INBOX)
    stolen = await box.call("Email/set", {"update": {email: {f"mailboxIds/{mine}": True}}})
    assert stolen["notUpdated"][email]["type"] == "notFound"
    wrong_mailbox = await box.ingest(make_message(message_id="mine@x"))
    own = str(wrong_mailbox.messages[0].id)
    into_bob = await box.call("Email/set", {"update": {own: {f"mailboxIds/{bob_inbox}": True}}})
    assert into_bob["notUpdated"][own]["properties"] == ["mailboxIds"]
    state = await box.services.db.fetchval("SELECT seen_at FROM message WHERE id = $1", int(email))
    assert state is None


async def test_another_users_blobs_are_404_whatever_the_path(box: JmapBox) -> None:
    bob = await make_box(box.services, box.http, "bob@example.org")
    stored = await bob.ingest(make_message(message_id="b@x", subject="Bob only"))
    email = str(stored.messages[0].id)
    upload = (await bob.http.post(f"/jmap/upload/{bob.account}", content=b"bob's file", headers=bob.headers)).json()
    for account, blob in [(box.account, f"m-{email}"), (bob.account, f"m-{email}"), (box.account, f"t-{email}"),
                          (box.account, upload["blobId"]), (bob.account, upload["blobId"])]:
        response = await box.http.get(f"/jmap/download/{account}/{blob}/x", headers=box.headers)
        assert response.status_code == 404, (account, blob)
    assert (await bob.http.get(f"/jmap/download/{bob.account}/{upload['blobId']}/x",
                               headers=bob.headers)).content == b"bob's file"
    same_bytes = (await box.http.post(f"/jmap/upload/{box.account}", content=b"bob's file",
                                      headers=box.headers)).json()
    assert same_bytes["blobId"] == upload["blobId"]  # content-addressed, but each owner has their own row
    assert (await box.http.post(f"/jmap/upload/{bob.account}", content=b"x", headers=box.headers)).status_code == 404
    inbox = await box.mailbox_id(LabelRole.INBOX)
    imported = await box.call("Email/import", {"emails": {"a": {"blobId": f"m-{email}", "mailboxIds": {inbox: True}}}})
    assert imported["notCreated"]["a"]["properties"] == ["blobId"]
