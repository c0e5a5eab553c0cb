"""Email/query over the shared filter compiler, sorts, collapseThreads, paging; Email/queryChanges;
SearchSnippet/get; chaining by result reference."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from plmail.domain.enums import LabelRole, ProviderKind
from plmail.mail.ingest import parse_message
from tests.integration.jmap.conftest import JmapBox
from tests.support.mail import BASE_DATE, make_message
from tests.support.repos import account_rows


async def _corpus(box: JmapBox) -> dict[str, str]:
    """Six messages, four threads; returns subject -> email id."""
    messages = [
        make_message(message_id="a1@x", subject="Invoice 4711", sender="Bill <bill@acme.example>",
                     body="Payment is due on Friday.", date=BASE_DATE),
        make_message(message_id="a2@x", subject="Re: Invoice 4711", sender="Zed <zed@example.org>",
                     in_reply_to="a1@x", references=["a1@x"], body="Paid today.", date=BASE_DATE + timedelta(hours=5)),
        make_message(message_id="b1@x", subject="Lunch", sender="Carol <carol@example.org>", to=("Ann <a@x.org>",),
                     body="Pizza?", date=BASE_DATE + timedelta(hours=1)),
        make_message(message_id="c1@x", subject="Big report", sender="Dan <dan@example.org>",
                     body="x" * 5000, date=BASE_DATE + timedelta(hours=2)),
        make_message(message_id="d1@x", subject="Newsletter", sender="News <news@lists.example>",
                     headers={"List-Id": "<news.lists.example>", "List-Post": "<mailto:news@lists.example>",
                              "List-Unsubscribe": "<mailto:u@lists.example>"}, date=BASE_DATE + timedelta(hours=3)),
    ]
    result = await box.ingest(*messages)
    archived = await box.ingest(make_message(message_id="e1@x", subject="Old invoice", body="invoice archive",
                                             date=BASE_DATE - timedelta(days=30)), role=LabelRole.ARCHIVE, seen=True)
    # The box's account is a local archive, always importing: its mail is indexed for search afterwards.
    await box.services.search_index.catch_up()
    emails = (await box.call("Email/get", {"ids": [str(m.id) for m in (*result.messages, *archived.messages)],
                                           "properties": ["subject"]}))["list"]
    return {e["subject"]: e["id"] for e in emails}


async def _ids(box: JmapBox, **arguments: Any) -> list[str]:
    return list((await box.call("Email/query", arguments))["ids"])


async def test_filters_through_the_shared_compiler(box: JmapBox) -> None:
    s = await _corpus(box)
    inbox = await box.mailbox_id(LabelRole.INBOX)
    archive = await box.mailbox_id(LabelRole.ARCHIVE)
    assert set(await _ids(box, filter={"inMailbox": inbox})) == {s["Invoice 4711"], s["Re: Invoice 4711"],
                                                                 s["Lunch"], s["Big report"], s["Newsletter"]}
    assert await _ids(box, filter={"inMailboxOtherThan": [inbox]}) == [s["Old invoice"]]
    assert set(await _ids(box, filter={"text": "invoice"})) == {s["Invoice 4711"], s["Re: Invoice 4711"],
                                                                s["Old invoice"]}
    assert await _ids(box, filter={"from": "acme"}) == [s["Invoice 4711"]]
    assert await _ids(box, filter={"to": "a@x.org"}) == [s["Lunch"]]
    assert await _ids(box, filter={"subject": "lunch"}) == [s["Lunch"]]
    assert await _ids(box, filter={"body": "pizza"}) == [s["Lunch"]]
    assert await _ids(box, filter={"minSize": 5000}) == [s["Big report"]]
    assert s["Big report"] not in await _ids(box, filter={"maxSize": 5000})
    assert await _ids(box, filter={"hasKeyword": "$seen"}) == [s["Old invoice"]]
    assert s["Old invoice"] not in await _ids(box, filter={"notKeyword": "$seen"})
    assert await _ids(box, filter={"before": "2026-03-01T00:00:00Z"}) == [s["Old invoice"]]
    assert s["Old invoice"] not in await _ids(box, filter={"after": "2026-03-01T00:00:00Z"})
    assert await _ids(box, filter={"header": ["List-Id", "news.lists"]}) == [s["Newsletter"]]
    assert await _ids(box, filter={"hasAttachment": True}) == []
    assert await _ids(box, filter={"operator": "AND", "conditions": [{"text": "invoice"}, {"inMailbox": archive}]}
                      ) == [s["Old invoice"]]
    assert set(await _ids(box, filter={"operator": "OR", "conditions": [{"subject": "lunch"},
                                                                         {"subject": "report"}]})) == \
        {s["Lunch"], s["Big report"]}
    assert s["Lunch"] not in await _ids(box, filter={"operator": "NOT", "conditions": [{"subject": "lunch"}]})
    assert set(await _ids(box, filter={"someInThreadHaveKeyword": "$seen"})) == {s["Old invoice"]}
    assert set(await _ids(box, filter={"noneInThreadHaveKeyword": "$seen", "subject": "invoice"})) == \
        {s["Invoice 4711"], s["Re: Invoice 4711"]}
    categories = ["urn:ietf:params:jmap:core", "urn:ietf:params:jmap:mail", "urn:plmail:params:jmap:categories"]
    forums = await box.call("Email/query", {"filter": {"threadCategory": "forums"}}, using=categories)
    assert forums["ids"] == [s["Newsletter"]]


async def test_sorts_collapse_paging_anchor_and_total(box: JmapBox) -> None:
    s = await _corpus(box)
    newest_first = await _ids(box)
    assert newest_first == [s["Re: Invoice 4711"], s["Newsletter"], s["Big report"], s["Lunch"], s["Invoice 4711"],
                            s["Old invoice"]]
    assert await _ids(box, sort=[{"property": "receivedAt", "isAscending": True}]) == newest_first[::-1]
    assert (await _ids(box, sort=[{"property": "size", "isAscending": False}]))[0] == s["Big report"]
    assert (await _ids(box, sort=[{"property": "from"}]))[:3] == [s["Old invoice"], s["Invoice 4711"], s["Lunch"]]
    assert (await _ids(box, sort=[{"property": "subject", "collation": "i;unicode-casemap"}]))[0] == s["Big report"]
    assert (await _ids(box, sort=[{"property": "to"}]))[0] == s["Lunch"]  # "Ann" before "Bob"
    collapsed = await box.call("Email/query", {"collapseThreads": True, "calculateTotal": True})
    assert collapsed["ids"] == [s["Re: Invoice 4711"], s["Newsletter"], s["Big report"], s["Lunch"], s["Old invoice"]]
    assert collapsed["total"] == 5 and collapsed["canCalculateChanges"] is True
    page = await box.call("Email/query", {"collapseThreads": True, "position": 1, "limit": 2})
    assert page["ids"] == collapsed["ids"][1:3] and page["position"] == 1 and "limit" not in page
    anchored = await box.call("Email/query", {"collapseThreads": True, "anchor": s["Big report"], "anchorOffset": -1,
                                              "limit": 2})
    assert anchored["ids"] == collapsed["ids"][1:3] and anchored["position"] == 1
    tail = await box.call("Email/query", {"position": -2, "calculateTotal": True})
    assert tail["ids"] == newest_first[-2:] and tail["position"] == 4 and tail["total"] == 6
    capped = await box.call("Email/query", {"limit": 10_000})
    assert capped["limit"] == 500
    assert (await box.error("Email/query", {"accountId": box.account, "collapseThreads": True,
                                            "anchor": s["Invoice 4711"]}))["type"] == "anchorNotFound"


async def test_query_then_get_and_threads_by_result_reference(box: JmapBox) -> None:
    s = await _corpus(box)
    inbox = await box.mailbox_id(LabelRole.INBOX)
    response = (await box.request([
        ["Email/query", {"accountId": box.account, "filter": {"inMailbox": inbox}, "collapseThreads": True,
                         "limit": 2}, "q"],
        ["Email/get", {"accountId": box.account, "#ids": {"resultOf": "q", "name": "Email/query", "path": "/ids"},
                       "properties": ["threadId", "subject"]}, "g"],
        ["Thread/get", {"accountId": box.account, "#ids": {"resultOf": "g", "name": "Email/get",
                                                          "path": "/list/*/threadId"}}, "t"],
        ["Email/get", {"accountId": box.account, "#ids": {"resultOf": "t", "name": "Thread/get",
                                                         "path": "/list/*/emailIds"},
                       "properties": ["subject"]}, "all"],
    ])).json()["methodResponses"]
    assert [r[0] for r in response] == ["Email/query", "Email/get", "Thread/get", "Email/get"]
    assert [e["subject"] for e in response[1][1]["list"]] == ["Re: Invoice 4711", "Newsletter"]
    threads = response[2][1]["list"]
    assert threads[0]["emailIds"] == [s["Invoice 4711"], s["Re: Invoice 4711"]]  # oldest first
    assert [e["subject"] for e in response[3][1]["list"]] == ["Invoice 4711", "Re: Invoice 4711", "Newsletter"]


async def test_query_changes_reports_exact_membership_moves(box: JmapBox) -> None:
    s = await _corpus(box)
    inbox = await box.mailbox_id(LabelRole.INBOX)
    arguments = {"filter": {"inMailbox": inbox}, "sort": [{"property": "receivedAt", "isAscending": False}]}
    before = await box.call("Email/query", arguments)
    await box.call("Email/set", {"update": {s["Lunch"]: {f"mailboxIds/{inbox}": None,
                                                          f"mailboxIds/{await box.mailbox_id(LabelRole.ARCHIVE)}":
                                                          True}}})
    new = await box.ingest(make_message(message_id="n1@x", subject="Fresh", date=BASE_DATE + timedelta(hours=9)))
    fresh = str(new.messages[0].id)
    delta = await box.call("Email/queryChanges", {**arguments, "sinceQueryState": before["queryState"],
                                                  "calculateTotal": True})
    after = await box.call("Email/query", arguments)
    assert delta["oldQueryState"] == before["queryState"] and delta["newQueryState"] == after["queryState"]
    assert set(delta["removed"]) == {s["Lunch"], fresh}
    assert delta["added"] == [{"id": fresh, "index": 0}]
    assert delta["total"] == len(after["ids"])
    # Applying the delta to the old result gives the new one (RFC 8620 §5.6).
    ids = [i for i in before["ids"] if i not in delta["removed"]]
    for item in delta["added"]:
        ids.insert(item["index"], item["id"])
    assert ids == after["ids"]
    collapsed = {**arguments, "collapseThreads": True}
    start = await box.call("Email/query", collapsed)
    reply = await box.ingest(make_message(message_id="b2@x", subject="Re: Lunch", in_reply_to="b1@x",
                                          references=["b1@x"], date=BASE_DATE + timedelta(hours=10)))
    moved = await box.call("Email/queryChanges", {**collapsed, "sinceQueryState": start["queryState"]})
    now = await box.call("Email/query", collapsed)
    ids = [i for i in start["ids"] if i not in moved["removed"]]
    for item in moved["added"]:
        ids.insert(item["index"], item["id"])
    assert ids == now["ids"] and str(reply.messages[0].id) == now["ids"][0]
    assert (await box.error("Email/queryChanges", {"accountId": box.account, "sinceQueryState": "zz"}))["type"] == \
        "cannotCalculateChanges"


async def test_search_snippets_mark_matches_and_escape_the_rest(box: JmapBox) -> None:
    result = await box.ingest(make_message(message_id="sn@x", subject="Invoice <b>4711</b> & more",
                                           body="Dear customer, the invoice is attached. Pay by Friday."),
                              make_message(message_id="sn2@x", subject="Unrelated", body="Nothing here."))
    first, second = (str(m.id) for m in result.messages)
    snippets = await box.call("SearchSnippet/get", {"filter": {"text": "invoice"}, "emailIds": [first, second, "9"]})
    by_id = {s["emailId"]: s for s in snippets["list"]}
    assert by_id[first]["subject"] == "<mark>Invoice</mark> &lt;b&gt;4711&lt;/b&gt; &amp; more"
    assert "<mark>invoice</mark>" in by_id[first]["preview"]
    assert by_id[second]["subject"] is None and by_id[second]["preview"] is None
    assert snippets["notFound"] == ["9"]
    nothing = await box.call("SearchSnippet/get", {"filter": {"from": "alice"}, "emailIds": [first]})
    assert nothing["list"] == [{"emailId": first, "subject": None, "preview": None}]


async def test_remembered_results_and_totals_follow_every_change(box: JmapBox) -> None:
    s = await _corpus(box)
    inbox = await box.mailbox_id(LabelRole.INBOX)
    arguments = {"filter": {"inMailbox": inbox}, "collapseThreads": True, "calculateTotal": True}
    first = await box.call("Email/query", arguments)
    again = await box.call("Email/query", arguments)
    assert again == first  # nothing changed: the same answer (and the same state)
    await box.services.operations.archive(box.user.id, message_ids=[int(s["Lunch"])])
    after = await box.call("Email/query", arguments)
    assert after["queryState"] != first["queryState"]
    assert s["Lunch"] not in after["ids"] and after["total"] == first["total"] - 1
    deeper = await box.call("Email/query", {**arguments, "position": 1, "limit": 2})
    assert deeper["ids"] == after["ids"][1:3]
    await box.call("Email/set", {"update": {s["Newsletter"]: {"keywords/$seen": True}}})
    unread = await box.call("Email/query", {"filter": {"inMailbox": inbox, "notKeyword": "$seen"},
                                            "collapseThreads": True, "calculateTotal": True})
    assert s["Newsletter"] not in unread["ids"] and unread["total"] == after["total"] - 1


async def test_thread_category_queries_move_with_the_thread_state(box: JmapBox) -> None:
    s = await _corpus(box)
    using = ["urn:ietf:params:jmap:core", "urn:ietf:params:jmap:mail", "urn:plmail:params:jmap:categories"]
    arguments = {"filter": {"threadCategory": "primary"}, "collapseThreads": True}
    before = await box.call("Email/query", arguments, using=using)
    thread = await box.services.db.fetchval("SELECT thread_id FROM message WHERE id = $1", int(s["Lunch"]))
    await box.services.db.execute("UPDATE message_thread SET category = 'social' WHERE id = $1", thread)
    await box.services.db.execute(
        "INSERT INTO jmap_change_log (account_id, object_type, entity_id, change_type, created_at) "
        "VALUES ($1, 'Thread', $2, 'updated', now())", box.account_id, str(thread))
    after = await box.call("Email/query", arguments, using=using)
    assert after["queryState"] != before["queryState"] and s["Lunch"] not in after["ids"]
    delta = await box.call("Email/queryChanges", {**arguments, "sinceQueryState": before["queryState"]},
                           using=using)
    assert s["Lunch"] in delta["removed"] and s["Lunch"] not in [a["id"] for a in delta["added"]]


async def test_a_mailbox_total_is_the_number_of_its_results(box: JmapBox) -> None:
    """RFC 8620 §5.5: `total` is the number of results (RFC 8621 §4.4.3: of threads, with collapseThreads). A
    filter that is one mailbox alone reads it from the kept counts; it must still be the count of what the query
    lists, in one account and in the unified one, with mail binned and mail not in a thread."""
    s = await _corpus(box)
    other = await account_rows(box.services).create(user_id=box.user.id, provider_kind=ProviderKind.LOCAL,
                                                    name="Second", email="second@example.org")
    inbox_label = box.roles[LabelRole.INBOX]
    await box.services.pipeline.ingest([
        parse_message(make_message(message_id=f"o{i}@x", subject="Other" if i else "Other start",
                                   in_reply_to="o0@x" if i else None, references=["o0@x"] if i else None,
                                   date=BASE_DATE + timedelta(hours=10 + i)),
                      account_id=other, label_ids=(inbox_label,)) for i in range(3)])
    # One message of a two-message Inbox thread goes to the Trash: its thread is binned, its other message
    # stays in the Inbox (and in its results).
    await box.services.operations.trash(box.user.id, message_ids=[int(s["Invoice 4711"])])
    # Mail the threader has not placed yet counts as a thread of its own (the query's collapse key).
    await box.services.db.execute("UPDATE message SET thread_id = NULL WHERE id = $1", int(s["Lunch"]))
    scopes = {box.account: await box.mailbox_id(LabelRole.INBOX), box.primary: str(inbox_label)}
    for account, inbox in scopes.items():
        for collapse in (False, True):
            arguments = {"accountId": account, "collapseThreads": collapse, "limit": 500, "calculateTotal": True}
            alone = await box.call("Email/query", {**arguments, "filter": {"inMailbox": inbox}})
            # The same condition under an operator is counted from the mail itself.
            counted = await box.call("Email/query", {**arguments, "filter": {"operator": "AND", "conditions": [
                {"inMailbox": inbox}]}})
            assert alone["ids"] == counted["ids"], (account, collapse)
            assert alone["total"] == counted["total"] == len(alone["ids"]), (account, collapse, alone, counted)
    whole = await box.call("Email/query", {"accountId": box.primary, "filter": {"inMailbox": str(inbox_label)},
                                           "calculateTotal": True})
    # Re: Invoice, Big report, Newsletter, Lunch and the second account's three; the trashed message is not.
    assert whole["total"] == 7
    assert s["Invoice 4711"] not in whole["ids"] and s["Re: Invoice 4711"] in whole["ids"]
