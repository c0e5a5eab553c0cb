"""Mailbox/get, /query, /changes and /set: labels seen through one account's bindings."""

from __future__ import annotations

from plmail.domain.enums import LabelRole
from plmail.mail.labels import LabelManager
from tests.integration.jmap.conftest import JmapBox
from tests.support.mail import make_message


async def test_system_mailboxes_have_roles_order_rights_and_counts(box: JmapBox) -> None:
    await box.ingest(make_message(message_id="a@x", subject="One"),
                     make_message(message_id="b@x", subject="Re: One", in_reply_to="a@x", references=["a@x"]),
                     make_message(message_id="c@x", subject="Two"))
    await box.ingest(make_message(message_id="d@x", subject="Old"), role=LabelRole.ARCHIVE, seen=True)
    listed = await box.call("Mailbox/get", {"ids": None})
    by_role = {m["role"]: m for m in listed["list"]}
    assert set(by_role) == {"inbox", "snoozed", "sent", "drafts", "junk", "trash", "archive"}
    inbox = by_role["inbox"]
    assert inbox["name"] == "Inbox" and inbox["parentId"] is None and inbox["sortOrder"] == 0
    assert (inbox["totalEmails"], inbox["unreadEmails"], inbox["totalThreads"], inbox["unreadThreads"]) == (3, 3, 2, 2)
    assert (by_role["archive"]["totalEmails"], by_role["archive"]["unreadEmails"]) == (1, 0)
    assert by_role["archive"]["isSubscribed"] is False  # Archive is hidden bookkeeping until shown
    assert inbox["myRights"]["mayRename"] is False and inbox["myRights"]["mayDelete"] is False
    assert inbox["myRights"]["mayAddItems"] is True
    assert [m["sortOrder"] for m in listed["list"]] == sorted(m["sortOrder"] for m in listed["list"])
    ids = [m["id"] for m in listed["list"]]
    assert all(int(i) > 0 for i in ids)
    some = await box.call("Mailbox/get", {"ids": [inbox["id"], "999999"], "properties": ["name"]})
    assert some["list"] == [{"id": inbox["id"], "name": "Inbox"}] and some["notFound"] == ["999999"]
    one = (await box.call("Email/query", {"filter": {"subject": "Two"}}))["ids"][0]
    await box.call("Email/set", {"update": {one: {"keywords/$seen": True}}})
    again = (await box.call("Mailbox/get", {"ids": [inbox["id"]]}))["list"][0]
    assert (again["unreadEmails"], again["unreadThreads"]) == (2, 1)  # remembered counts follow the change


async def test_labels_made_in_the_web_ui_appear_as_created_mailboxes(box: JmapBox) -> None:
    state = await box.state("Mailbox")
    label = await LabelManager(box.services.db).create(box.user.id, "Receipts")
    changes = await box.call("Mailbox/changes", {"sinceState": state})
    listed = await box.call("Mailbox/get", {"ids": None})
    receipts = next(m for m in listed["list"] if m["name"] == "Receipts")
    assert receipts["role"] is None and receipts["myRights"]["mayDelete"] is True
    assert changes["created"] == [receipts["id"]] and changes["updatedProperties"] is None
    binding = await box.services.db.fetchval(
        "SELECT id FROM label_binding WHERE label_id = $1 AND account_id = $2", label, box.account_id)
    assert str(binding) == receipts["id"]


async def test_create_nest_rename_move_and_destroy(box: JmapBox) -> None:
    state = await box.state("Mailbox")
    created = await box.call("Mailbox/set", {"create": {
        "work": {"name": "Work"}, "inv": {"name": "Invoices", "parentId": "#work"}}})
    work, invoices = created["created"]["work"]["id"], created["created"]["inv"]["id"]
    assert created["oldState"] == state and created["newState"] != state
    listed = {m["id"]: m for m in (await box.call("Mailbox/get", {"ids": [work, invoices]}))["list"]}
    assert listed[invoices]["parentId"] == work and listed[work]["parentId"] is None

    renamed = await box.call("Mailbox/set", {"update": {invoices: {"name": "Bills", "parentId": None}}})
    assert renamed["updated"] == {invoices: None}
    after = {m["id"]: m for m in (await box.call("Mailbox/get", {"ids": [invoices]}))["list"]}
    assert after[invoices]["name"] == "Bills" and after[invoices]["parentId"] is None

    child = await box.call("Mailbox/set", {"create": {"c": {"name": "Q1", "parentId": work}}})
    q1 = child["created"]["c"]["id"]
    refused = await box.call("Mailbox/set", {"destroy": [work]})
    assert refused["notDestroyed"][work]["type"] == "mailboxHasChild"
    cycle = await box.call("Mailbox/set", {"update": {work: {"parentId": q1}}})
    assert cycle["notUpdated"][work]["type"] == "invalidProperties"

    result = await box.ingest(make_message(message_id="w@x", subject="Contract"))
    email = str(result.messages[0].id)
    await box.call("Email/set", {"update": {email: {f"mailboxIds/{q1}": True}}})
    has_mail = await box.call("Mailbox/set", {"destroy": [q1]})
    assert has_mail["notDestroyed"][q1]["type"] == "mailboxHasEmail"
    gone = await box.call("Mailbox/set", {"destroy": [q1], "onDestroyRemoveEmails": True})
    assert gone["destroyed"] == [q1]
    kept = (await box.call("Email/get", {"ids": [email], "properties": ["mailboxIds"]}))["list"][0]
    assert q1 not in kept["mailboxIds"] and kept["mailboxIds"]  # the mail stays, in its other mailboxes
    changes = await box.call("Mailbox/changes", {"sinceState": state})
    assert q1 in changes["destroyed"] and work in changes["created"] and invoices in changes["created"]


async def test_system_mailboxes_refuse_rename_and_destroy_and_duplicates_are_refused(box: JmapBox) -> None:
    inbox = await box.mailbox_id(LabelRole.INBOX)
    result = await box.call("Mailbox/set", {"update": {inbox: {"name": "Posteingang"}}, "destroy": [inbox],
                                            "create": {"r": {"name": "x", "role": "inbox"},
                                                       "n": {"name": "Inbox"}, "q": {"name": "Ok"},
                                                       "d": {"name": "Ok"}, "s": {"name": "T", "totalEmails": 3}}})
    assert result["notUpdated"][inbox]["type"] == "forbidden"
    assert result["notDestroyed"][inbox]["type"] == "forbidden"
    assert result["notCreated"]["r"]["type"] == "invalidProperties"
    assert result["notCreated"]["n"]["type"] == "invalidProperties"  # a label "Inbox" exists at the top
    assert "q" in result["created"] and result["notCreated"]["d"]["properties"] == ["name"]
    assert result["notCreated"]["s"]["properties"] == ["totalEmails"]
    hidden = await box.call("Mailbox/set", {"update": {inbox: {"isSubscribed": False, "sortOrder": 0}}})
    assert hidden["updated"] == {inbox: None}
    assert (await box.call("Mailbox/get", {"ids": [inbox]}))["list"][0]["isSubscribed"] is False
    unknown = await box.call("Mailbox/set", {"update": {"424242": {"name": "x"}}})
    assert unknown["notUpdated"]["424242"]["type"] == "notFound"


async def test_query_filters_sorts_and_trees(box: JmapBox) -> None:
    made = await box.call("Mailbox/set", {"create": {"a": {"name": "Alpha"}, "b": {"name": "beta", "parentId": "#a"},
                                                     "z": {"name": "Zulu"}}})
    alpha, beta, zulu = (made["created"][k]["id"] for k in "abz")
    by_name = await box.call("Mailbox/query", {"filter": {"hasAnyRole": False}, "sort": [{"property": "name"}]})
    assert by_name["ids"] == [alpha, beta, zulu] and by_name["canCalculateChanges"] is False
    tree = await box.call("Mailbox/query", {"filter": {"hasAnyRole": False}, "sortAsTree": True,
                                            "sort": [{"property": "name", "isAscending": False}]})
    assert tree["ids"] == [zulu, alpha, beta]
    children = await box.call("Mailbox/query", {"filter": {"parentId": alpha}})
    assert children["ids"] == [beta]
    named = await box.call("Mailbox/query", {"filter": {"operator": "OR", "conditions": [
        {"name": "ALP"}, {"role": "inbox"}]}, "calculateTotal": True})
    assert len(named["ids"]) == 2 and named["total"] == 2
    as_tree = await box.call("Mailbox/query", {"filter": {"name": "beta"}, "filterAsTree": True})
    assert as_tree["ids"] == []  # its parent Alpha does not match
    paged = await box.call("Mailbox/query", {"sort": [{"property": "sortOrder"}], "position": 1, "limit": 2})
    assert paged["position"] == 1 and len(paged["ids"]) == 2
