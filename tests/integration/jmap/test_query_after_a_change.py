"""A phone's list view right after a change (issue 36): Email/query chained into Email/get, in the unified account and
in one account, answers the new state and the new rows at once; nothing remembered from before the change is
served (RFC 8620 §5.5: queryState changes whenever the results may have; RFC 8621 §4.4: the query's results are the
emails that match now). The unified account's merge keeps every sort's order (RFC 8621 §4.4.2), and a state is
read only once the change log's writers in flight have committed, so /changes from it misses nothing (RFC 8620
§5.2)."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any

import asyncpg

from plmail.domain.enums import JmapObjectType, LabelRole, ProviderKind
from plmail.domain.mailstore import MailScope
from plmail.mail.ingest import parse_message
from plmail.mail.labels import LabelManager
from tests.integration.jmap.conftest import JmapBox
from tests.support.mail import BASE_DATE, make_message
from tests.support.repos import account_rows

LIST_PROPERTIES = ["threadId", "mailboxIds", "keywords", "from", "subject", "receivedAt", "preview"]


async def _list_view(box: JmapBox, account: str, inbox: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """What a phone asks for its Inbox: the first 50 conversations and their emails, in one request."""
    response = await box.request([
        ["Email/query", {"accountId": account, "filter": {"inMailbox": inbox}, "collapseThreads": True,
                         "limit": 50, "calculateTotal": True}, "q"],
        ["Email/get", {"accountId": account, "properties": LIST_PROPERTIES,
                       "#ids": {"resultOf": "q", "name": "Email/query", "path": "/ids"}}, "g"]])
    (query_name, query, _), (get_name, got, _) = response.json()["methodResponses"]
    assert (query_name, get_name) == ("Email/query", "Email/get"), (query, got)
    return query, got


async def _two_accounts(box: JmapBox) -> int:
    other = await account_rows(box.services).create(user_id=box.user.id, provider_kind=ProviderKind.LOCAL,
                                                    name="Second", email="second@example.org")
    inbox = box.roles[LabelRole.INBOX]
    await box.services.pipeline.ingest([
        parse_message(make_message(message_id=f"m{i}@x", subject=f"Mail {i}", date=BASE_DATE + timedelta(hours=i)),
                      account_id=other if i % 2 else box.account_id, label_ids=(inbox,)) for i in range(6)])
    return other


async def test_a_new_message_is_the_first_result_of_the_next_list_view_in_both_scopes(box: JmapBox) -> None:
    await _two_accounts(box)
    scopes = {box.primary: str(box.roles[LabelRole.INBOX]), box.account: await box.mailbox_id(LabelRole.INBOX)}
    before = {account: await _list_view(box, account, inbox) for account, inbox in scopes.items()}
    for account, inbox in scopes.items():
        again = await _list_view(box, account, inbox)
        assert again[0] == before[account][0]  # nothing changed: the same answer, the same queryState

    stored = await box.ingest(make_message(message_id="new@x", subject="Just arrived",
                                           sender="Nina <nina@example.org>", date=BASE_DATE + timedelta(days=1)))
    new_id = str(stored.messages[0].id)
    for account, inbox in scopes.items():
        query, got = await _list_view(box, account, inbox)
        old_query = before[account][0]
        assert query["queryState"] != old_query["queryState"], account
        assert query["ids"] == [new_id, *old_query["ids"]], account
        assert query["total"] == old_query["total"] + 1, account
        assert got["state"] != before[account][1]["state"], account
        email = got["list"][0]
        assert email["id"] == new_id and email["subject"] == "Just arrived"
        assert email["from"] == [{"name": "Nina", "email": "nina@example.org"}]
        assert email["mailboxIds"] == {inbox: True}, account  # a label id in the unified account, a binding in one
        assert email["keywords"] == {}
        assert set(email) == {"id", *LIST_PROPERTIES}  # only what was asked for

    # Moved out of the Inbox: the very next list view no longer has it, in either scope.
    archive = await box.mailbox_id(LabelRole.ARCHIVE)
    await box.call("Email/set", {"update": {new_id: {"mailboxIds": {archive: True}}}})
    for account, inbox in scopes.items():
        query, got = await _list_view(box, account, inbox)
        assert query["ids"] == before[account][0]["ids"], account
        assert new_id not in [e["id"] for e in got["list"]]


async def test_a_flag_shows_in_the_next_get_and_moves_the_query_state(box: JmapBox) -> None:
    await _two_accounts(box)
    inbox = str(box.roles[LabelRole.INBOX])
    query, got = await _list_view(box, box.primary, inbox)
    newest = query["ids"][0]
    assert got["list"][0]["keywords"] == {}
    response = await box.request([["Email/set", {"accountId": box.primary,
                                                 "update": {newest: {"keywords/$flagged": True}}}, "s"]])
    assert response.json()["methodResponses"][0][1]["updated"] == {newest: None}
    after, got = await _list_view(box, box.primary, inbox)
    assert after["queryState"] != query["queryState"]  # the results may have changed: a new queryState
    assert after["ids"] == query["ids"]  # a flag moves no email in a receivedAt sort
    assert got["list"][0]["keywords"] == {"$flagged": True}


async def test_the_unified_merge_keeps_each_sort_across_accounts(box: JmapBox) -> None:
    """Sorted by subject, size or a keyword, the unified account lists both accounts' mail as one list in that
    order, page by page, as if it were one account."""
    other = await account_rows(box.services).create(user_id=box.user.id, provider_kind=ProviderKind.LOCAL,
                                                    name="Second", email="second@example.org")
    inbox = box.roles[LabelRole.INBOX]
    subjects = ["delta", "Alpha", "echo", "Charlie", "bravo", "Foxtrot"]  # i;ascii-casemap: alpha, bravo, ...
    stored = await box.services.pipeline.ingest([
        parse_message(make_message(message_id=f"s{i}@x", subject=subject, body="x" * (100 * (i + 1)),
                                   date=BASE_DATE + timedelta(hours=i)),
                      account_id=other if i % 2 else box.account_id, label_ids=(inbox,), starred=i in (1, 4))
        for i, subject in enumerate(subjects)])
    by_subject = {str(m.parsed.subject): str(m.id) for m in stored.messages}
    alphabetical = [by_subject[s] for s in sorted(subjects, key=str.lower)]
    by_size_desc = [by_subject[s] for s in reversed(subjects)]  # each body 100 bytes longer than the one before

    async def unified(sort: list[dict[str, Any]], **paging: int) -> list[str]:
        response = await box.request([["Email/query", {"accountId": box.primary, "sort": sort, **paging}, "q"]])
        return list(response.json()["methodResponses"][0][1]["ids"])

    assert await unified([{"property": "subject"}]) == alphabetical
    assert await unified([{"property": "subject", "isAscending": False}]) == list(reversed(alphabetical))
    assert await unified([{"property": "subject"}], position=2, limit=3) == alphabetical[2:5]
    assert await unified([{"property": "size", "isAscending": False}]) == by_size_desc
    flagged_first = await unified([{"property": "hasKeyword", "keyword": "$flagged", "isAscending": False},
                                   {"property": "receivedAt", "isAscending": True}])
    assert flagged_first == [by_subject["Alpha"], by_subject["bravo"], by_subject["delta"], by_subject["echo"],
                             by_subject["Charlie"], by_subject["Foxtrot"]]


async def test_a_state_is_read_only_after_the_writers_in_flight_have_committed(box: JmapBox,
                                                                             database_url: str) -> None:
    """A change-log row whose transaction is still open has its sequence already: a state read then must wait for
    it, or a client would get a state past a change it never sees in /changes."""
    scope = MailScope.single(box.user.id, box.account_id)
    before = int(await box.services.changes.reader().state(scope, JmapObjectType.EMAIL))
    writer = await asyncpg.connect(database_url)
    try:
        transaction = writer.transaction()
        await transaction.start()
        sequence = await writer.fetchval(
            "INSERT INTO jmap_change_log (account_id, object_type, entity_id, change_type, created_at) "
            "VALUES ($1, 'Email', '999999', 'created', now()) RETURNING sequence", box.account_id)
        assert sequence > before
        reading = asyncio.create_task(box.services.changes.reader().state(scope, JmapObjectType.EMAIL))
        for _ in range(500):  # until the read waits for the writer's lock
            if await writer.fetchval("SELECT count(*) FROM pg_locks l JOIN pg_class c ON c.oid = l.relation "
                                     "WHERE c.relname = 'jmap_change_log' AND NOT l.granted"):
                break
            await asyncio.sleep(0.01)
        else:
            raise AssertionError("the state was read without waiting for the writer")
        assert not reading.done()
        await transaction.commit()
        assert int(await asyncio.wait_for(reading, 10)) == sequence
    finally:
        await writer.close()


async def test_a_label_made_in_the_web_ui_is_a_mailbox_of_the_next_email_get(box: JmapBox) -> None:
    """Every label is a Mailbox in every account (RFC 8621 §2 through the bindings): one made in the web UI since the
    last request, holding an email, shows in that email's mailboxIds in the very next Email/get, in one account
    (its new binding) and in the unified account (the label), and is announced as a created Mailbox."""
    stored = await box.ingest(make_message(message_id="r@x", subject="Receipt"))
    email = str(stored.messages[0].id)
    inbox = await box.mailbox_id(LabelRole.INBOX)
    mailbox_state = await box.state("Mailbox")
    label = await LabelManager(box.services.db).create(box.user.id, "Receipts")
    await box.services.operations.add_label(box.user.id, label, message_ids=[int(email)])
    got = await box.call("Email/get", {"ids": [email], "properties": ["mailboxIds"]})
    binding = await box.services.db.fetchval(
        "SELECT id FROM label_binding WHERE label_id = $1 AND account_id = $2", label, box.account_id)
    assert binding is not None
    assert got["list"] == [{"id": email, "mailboxIds": {inbox: True, str(binding): True}}]
    changes = await box.call("Mailbox/changes", {"sinceState": mailbox_state})
    assert str(binding) in changes["created"]
    unified = await box.request([["Email/get", {"accountId": box.primary, "ids": [email],
                                                "properties": ["mailboxIds"]}, "g"]])
    assert unified.json()["methodResponses"][0][1]["list"][0]["mailboxIds"] == {
        str(box.roles[LabelRole.INBOX]): True, str(label): True}


async def test_an_empty_mailbox_totals_zero_and_a_filled_one_its_count(box: JmapBox) -> None:
    """RFC 8620 §5.5: `total` is the number of results, also when there are none (no row to carry it), and with
    collapseThreads the number of threads (RFC 8621 §4.4.3)."""
    await _two_accounts(box)
    trash, inbox = str(box.roles[LabelRole.TRASH]), str(box.roles[LabelRole.INBOX])
    for collapse in (True, False):
        arguments = {"accountId": box.primary, "collapseThreads": collapse, "calculateTotal": True}
        empty = await box.request([["Email/query", {**arguments, "filter": {"inMailbox": trash}}, "q"]])
        assert empty.json()["methodResponses"][0][1]["ids"] == []
        assert empty.json()["methodResponses"][0][1]["total"] == 0
        full = await box.request([["Email/query", {**arguments, "filter": {"inMailbox": inbox}, "limit": 2}, "q"]])
        answer = full.json()["methodResponses"][0][1]
        assert len(answer["ids"]) == 2 and answer["total"] == 6  # six messages, six threads of their own
