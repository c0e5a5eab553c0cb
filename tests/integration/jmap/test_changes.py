"""/changes from the change log: exact sets, paging with maxChanges, merges, and pruning's horizon."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from plmail.domain.enums import LabelRole
from plmail.mail.states import fold
from tests.integration.jmap.conftest import JmapBox
from tests.support.mail import BASE_DATE, make_message


async def _all_changes(box: JmapBox, kind: str, since: str, max_changes: int) -> tuple[dict[str, set[str]], str, int]:
    """Follow hasMoreChanges to the end; returns the union of the pages, the final state, the page count."""
    union: dict[str, set[str]] = {"created": set(), "updated": set(), "destroyed": set()}
    pages = 0
    while True:
        page = await box.call(f"{kind}/changes", {"sinceState": since, "maxChanges": max_changes})
        pages += 1
        assert len(page["created"]) + len(page["updated"]) + len(page["destroyed"]) <= max_changes
        for key in union:
            union[key] |= set(page[key])
        since = page["newState"]
        if not page["hasMoreChanges"]:
            return union, since, pages


async def test_saved_state_then_five_arrive_two_archived_one_trashed(box: JmapBox) -> None:
    old = await box.ingest(*[make_message(message_id=f"old{i}@x", subject=f"Old {i}") for i in range(3)])
    o1, o2, _ = (m.id for m in old.messages)
    email_state, thread_state = await box.state("Email"), await box.state("Thread")
    mailbox_state = await box.state("Mailbox")

    new = await box.ingest(*[make_message(message_id=f"new{i}@x", subject=f"New {i}",
                                          date=BASE_DATE + timedelta(minutes=i)) for i in range(5)])
    n1 = new.messages[0].id
    ops = box.services.operations
    await ops.archive(box.user.id, message_ids=[o1, n1])  # the web UI's path
    await ops.trash(box.user.id, message_ids=[o2])

    changes = await box.call("Email/changes", {"sinceState": email_state})
    assert set(changes["created"]) == {str(m.id) for m in new.messages}  # created and then archived: created only
    assert set(changes["updated"]) == {str(o1), str(o2)}
    assert changes["destroyed"] == [] and changes["hasMoreChanges"] is False
    assert changes["oldState"] == email_state and changes["newState"] == await box.state("Email")
    again = await box.call("Email/changes", {"sinceState": changes["newState"]})
    assert again["created"] == again["updated"] == again["destroyed"] == []

    paged, final, pages = await _all_changes(box, "Email", email_state, 2)
    assert pages >= 3 and final == changes["newState"]
    assert paged["created"] == set(changes["created"])
    assert paged["updated"] | paged["created"] >= set(changes["updated"])

    threads = await box.call("Thread/changes", {"sinceState": thread_state})
    thread_of = {e["id"]: e["threadId"] for e in (await box.call("Email/get", {
        "ids": changes["created"], "properties": ["threadId"]}))["list"]}
    # RFC 8620 §5.2 created: "An array of ids for records that have been created since the old state": the five
    # new threads; archiving and trashing moved mailboxes, not thread membership
    assert set(threads["created"]) == set(thread_of.values()) and len(thread_of) == 5
    assert threads["updated"] == [] and threads["destroyed"] == []

    mailboxes = await box.call("Mailbox/changes", {"sinceState": mailbox_state})
    expected = {await box.mailbox_id(role) for role in (LabelRole.INBOX, LabelRole.ARCHIVE, LabelRole.TRASH)}
    assert set(mailboxes["updated"]) == expected


async def test_a_late_reply_merging_two_threads_is_destroyed_plus_updated(box: JmapBox) -> None:
    await box.ingest(make_message(message_id="gp@x", subject="Budget"))
    await box.ingest(make_message(message_id="gc@x", subject="Re: Budget", in_reply_to="parent@x",
                                  references=["parent@x"], date=BASE_DATE + timedelta(hours=2)))
    before = {e["subject"]: e for e in (await box.call("Email/get", {"ids": None,
                                                                      "properties": ["threadId", "subject"]}))["list"]}
    older, newer = sorted((before["Budget"]["threadId"], before["Re: Budget"]["threadId"]), key=int)
    thread_state, email_state = await box.state("Thread"), await box.state("Email")

    parent = await box.ingest(make_message(message_id="parent@x", subject="Re: Budget", in_reply_to="gp@x",
                                           references=["gp@x"], date=BASE_DATE + timedelta(hours=1)))
    threads = await box.call("Thread/changes", {"sinceState": thread_state})
    assert threads["destroyed"] == [newer] and threads["updated"] == [older] and threads["created"] == []
    emails = await box.call("Email/changes", {"sinceState": email_state})
    assert emails["created"] == [str(parent.messages[0].id)]
    assert emails["updated"] == [before["Re: Budget"]["id"]]  # it moved into the surviving thread
    got = await box.call("Thread/get", {"ids": [older, newer]})
    assert got["notFound"] == [newer] and len(got["list"][0]["emailIds"]) == 3


async def test_states_come_from_the_log_and_survive_pruning(box: JmapBox) -> None:
    await box.ingest(make_message(message_id="p1@x"))
    state = await box.state("Email")
    assert state == str(await box.services.db.fetchval(
        "SELECT max(sequence) FROM jmap_change_log WHERE account_id = $1 AND object_type = 'Email'", box.account_id))
    later = await box.ingest(make_message(message_id="p2@x"))
    removed = await box.services.changes.prune(datetime.now(UTC) + timedelta(seconds=1))
    assert removed > 0
    assert await box.state("Email") == str(await box.services.db.fetchval(
        "SELECT pruned_through FROM jmap_change_horizon WHERE account_id = $1 AND object_type = 'Email'",
        box.account_id))  # the state does not fall back when its rows are gone
    error = await box.error("Email/changes", {"accountId": box.account, "sinceState": state})
    assert error["type"] == "cannotCalculateChanges"
    current = await box.call("Email/changes", {"sinceState": await box.state("Email")})
    assert current["created"] == [] and later.messages


async def test_prune_job_removes_old_rows_and_unused_uploads(box: JmapBox) -> None:
    from plmail.jobs.jmap import prune_jmap

    await box.ingest(make_message(message_id="q1@x"))
    await box.services.db.execute("UPDATE jmap_change_log SET created_at = now() - interval '100 days'")
    pruned = await prune_jmap({"services": box.services})
    assert pruned > 0
    assert await box.services.db.fetchval("SELECT count(*) FROM jmap_change_log") == 0


def test_fold_follows_rfc_8620_section_5_2() -> None:
    def run(*changes: str) -> Any:
        result = None
        for change in changes:
            result = fold(result, change)
        return result

    assert run("created", "updated", "updated") == "created"
    assert run("updated", "updated") == "updated"
    assert run("updated", "destroyed") == "destroyed"
    assert run("created", "destroyed") == "destroyed"
