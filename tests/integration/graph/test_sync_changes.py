"""Following the delta links: moves between folders (with ids that survive a move and with ids that do
not), flags and categories from Outlook, deletions, an expired link, removals while folders are still
being imported, and a 429 in the middle of a sync."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime

import pytest

from plmail.domain.enums import QueueName
from tests.integration.graph.conftest import GraphSetup, old_message, rfc_id
from tests.support.fakes import ManualClock, rfc822

CHANGING_IDS = pytest.mark.parametrize("graph_fake", [{"immutable_ids": True}, {"immutable_ids": False}],
                                       indirect=True, ids=["immutable-ids", "changing-ids"])


async def _imported(graph: GraphSetup, inbox: int = 6, archive: int = 3) -> None:
    graph.mailbox.add_folder("Projects")
    for i in range(inbox):
        old_message(graph.mailbox, "inbox", i)
    for i in range(archive):
        old_message(graph.mailbox, "archive", i)
    old_message(graph.mailbox, "Projects", 0)
    await graph.sync_all()
    await graph.assert_matches_server()


@CHANGING_IDS
async def test_a_move_between_folders_during_sync_keeps_the_row_and_replaces_the_location(graph: GraphSetup) -> None:
    await _imported(graph)
    mailbox = graph.mailbox
    out_of_inbox = mailbox.in_folder("inbox")[0]
    into_inbox = mailbox.in_folder("archive")[0]
    to_projects = mailbox.in_folder("inbox")[1]
    rows = {rfc_id(m): await graph.row(rfc_id(m)) for m in (out_of_inbox, into_inbox, to_projects)}
    mailbox.move(out_of_inbox.id, "archive")
    mailbox.move(into_inbox.id, "inbox")  # Inbox is read before Archive: the arrival comes before the removal
    mailbox.move(to_projects.id, "Projects")
    mailbox.update(to_projects.id, is_read=True, flag_status="flagged", categories=["Follow up"])

    await graph.sync()
    await graph.assert_matches_server()
    for rfc, before in rows.items():
        after = await graph.row(rfc)
        assert after["id"] == before["id"] and after["thread_id"] == before["thread_id"]
        assert after["graph_id"] == next(m.id for m in mailbox.messages.values() if rfc_id(m) == rfc)
    assert await graph.labels_of(rfc_id(out_of_inbox)) == {"archive"}
    assert await graph.labels_of(rfc_id(into_inbox)) == {"inbox"}
    assert await graph.labels_of(rfc_id(to_projects)) == {"Projects", "Follow up"}
    assert not (await graph.state()).get("graph_removals")


async def test_deletions_and_new_mail_after_the_import(graph: GraphSetup) -> None:
    await _imported(graph)
    mailbox = graph.mailbox
    gone = mailbox.in_folder("inbox")[2]
    thread = (await graph.row(rfc_id(gone)))["thread_id"]
    mailbox.delete(gone.id)
    mailbox.add_message(rfc822("New today", message_id="<new-today@example.org>", date=datetime.now(UTC)))
    await graph.sync()
    await graph.assert_matches_server()
    assert not await graph.services.db.fetchval("SELECT count(*) FROM message_thread WHERE id = $1", thread)
    destroyed = await graph.services.db.fetchval(
        "SELECT count(*) FROM jmap_change_log WHERE account_id = $1 AND object_type = 'Email' "
        "AND change_type = 'destroyed'", graph.account_id)
    assert destroyed == 1


async def test_an_expired_delta_link_hands_the_folder_back_to_the_import(graph: GraphSetup) -> None:
    await _imported(graph)
    mailbox = graph.mailbox
    mailbox.expire_delta_links("inbox")
    deleted = mailbox.in_folder("inbox")[0]
    mailbox.delete(deleted.id)  # reported by no delta: the expired link cannot say so
    mailbox.add_message(rfc822("Meanwhile", message_id="<meanwhile@example.org>"),
                        received=datetime(2026, 1, 1, tzinfo=UTC))
    archive_calls = len(graph.delta_calls("archive"))

    await graph.sync()
    state = await graph.state()
    inbox_id = mailbox.folder("inbox").id
    assert inbox_id in state["graph_import"] and inbox_id not in state["graph_links"]
    assert len(state["graph_links"]) == len(state["graph_folders"]) - 1  # only the Inbox went back
    assert len(graph.delta_calls("archive")) == archive_calls + 1  # the others were followed as usual
    assert await graph.importing()
    assert await graph.row(rfc_id(deleted))  # not judged while a folder is being read

    runs = await graph.import_all()
    assert [run.page.folder for run in runs] == ["Inbox"]
    await graph.sync()
    await graph.assert_matches_server()
    assert not await graph.importing()


@CHANGING_IDS
async def test_removals_during_the_import_are_held_until_every_folder_has_answered(graph: GraphSetup) -> None:
    mailbox = graph.mailbox
    for i in range(30):
        old_message(mailbox, "inbox", i)
    for i in range(70):
        old_message(mailbox, "archive", i)
    await graph.sync()
    await graph.import_page()  # the whole Inbox: it has its delta link now
    await graph.import_page()  # the first fifty of the Archive
    state = await graph.state()
    assert mailbox.folder("inbox").id in state["graph_links"] and state["graph_import"]

    moved = mailbox.in_folder("inbox")[0]  # to the Archive, whose import has not reached it
    moved_row = await graph.row(rfc_id(moved))
    deleted = mailbox.in_folder("inbox")[1]
    mailbox.move(moved.id, "archive")
    mailbox.delete(deleted.id)
    await graph.sync()
    held = (await graph.state())["graph_removals"]
    assert set(held.values()) == {mailbox.folder("inbox").id} and len(held) == 2
    assert await graph.row(rfc_id(deleted)) and await graph.row(rfc_id(moved))  # nothing judged yet

    await graph.import_all()
    await graph.sync()
    await graph.assert_matches_server()
    assert (await graph.row(rfc_id(moved)))["id"] == moved_row["id"]
    assert await graph.labels_of(rfc_id(moved)) == {"archive"}
    assert not (await graph.state())["graph_removals"]


@pytest.mark.parametrize("graph_fake", [{"clock": ManualClock()}], indirect=True)
async def test_a_429_mid_sync_reschedules_the_sync_instead_of_failing(graph: GraphSetup) -> None:
    await _imported(graph)
    mailbox = graph.mailbox
    for folder in ("inbox", "Projects", "archive"):
        mailbox.add_message(rfc822(f"New in {folder}", message_id=f"<new-{folder.lower()}@example.org>"), folder)
    mailbox.delete(mailbox.in_folder("inbox")[0].id)
    throttle = graph.fake.throttle
    throttle.window_seconds = 2.0
    throttle.requests_per_window = 3  # the folder listing, the Inbox and Sent, then 429 with Retry-After: 2
    clock = graph.fake.clock
    assert isinstance(clock, ManualClock)
    clock.advance(throttle.window_seconds)  # a fresh window starts with the sync
    await graph.services.db.execute("DELETE FROM saq_jobs")

    await graph.sync()  # no exception: the sync is rescheduled
    assert throttle.throttled >= 1
    state = await graph.state()
    until = datetime.fromisoformat(state["graph_throttled_until"])
    assert until > datetime.now(UTC)
    jobs = await graph.services.db.fetch(
        "SELECT convert_from(job, 'UTF8')::jsonb AS job FROM saq_jobs WHERE queue = $1", QueueName.INGEST.value)
    later = [json.loads(j["job"]) if isinstance(j["job"], str) else j["job"] for j in jobs]
    assert any(j["function"] == "sync_account" and j.get("scheduled", 0) >= int(until.timestamp()) - 1
               for j in later)
    assert await graph.row("new-inbox@example.org")  # what answered before the 429 was kept

    assert not await graph.services.db.fetchval(
        "SELECT count(*) FROM message WHERE account_id = $1 AND rfc_message_id = 'new-archive@example.org'",
        graph.account_id)  # the Archive had not answered yet
    throttle.requests_per_window = None
    calls = len(graph.fake.calls)
    await graph.sync()  # too early: Graph asked for a pause, so nothing is asked
    assert len(graph.fake.calls) == calls
    await asyncio.sleep(max((until - datetime.now(UTC)).total_seconds(), 0) + 0.1)
    await graph.sync()
    await graph.assert_matches_server()
