"""What the user does in plmail reaches Graph: archive, trash, snooze and a folder label are moves (which
replace the location), star and read are PATCHes, and the user's own labels become categories."""

from __future__ import annotations

import asyncio
import json
import time
from datetime import UTC, datetime, timedelta

import pytest

from plmail.domain.enums import LabelRole
from tests.integration.graph.conftest import GraphSetup, old_message, rfc_id

CHANGING_IDS = pytest.mark.parametrize("graph_fake", [{"immutable_ids": True}, {"immutable_ids": False}],
                                       indirect=True, ids=["immutable-ids", "changing-ids"])


@CHANGING_IDS
async def test_every_operation_is_visible_at_the_fake(graph: GraphSetup) -> None:
    mailbox = graph.mailbox
    mailbox.add_folder("Projects")
    for i in range(8):
        old_message(mailbox, "inbox", i)
    old_message(mailbox, "Projects", 0)
    await graph.sync_all()
    inbox = mailbox.in_folder("inbox")
    names = ["archived", "trashed", "starred", "read", "labelled", "snoozed", "filed", "unstarred"]
    target = {name: rfc_id(m) for name, m in zip(names, inbox, strict=True)}
    ids = {name: (await graph.row(rfc))["id"] for name, rfc in target.items()}
    thread = {name: (await graph.row(rfc))["thread_id"] for name, rfc in target.items()}
    ops = graph.services.operations
    user = graph.user.id
    follow_up = await graph.services.labels.find_or_create(user, "Follow up")
    projects = await graph.services.labels.find_path(user, "Projects")
    assert projects is not None

    await ops.archive(user, message_ids=[ids["archived"]])
    await ops.trash(user, message_ids=[ids["trashed"]])
    await ops.set_starred(user, True, message_ids=[ids["starred"], ids["unstarred"]])
    await ops.set_starred(user, False, message_ids=[ids["unstarred"]])
    await ops.set_seen(user, True, message_ids=[ids["read"]])
    await ops.add_label(user, follow_up, message_ids=[ids["labelled"]])
    await ops.snooze(user, [thread["snoozed"]], datetime.now(UTC) + timedelta(days=1))
    await ops.move_to_label(user, projects, message_ids=[ids["filed"]])
    assert await graph.propagate() > 0
    assert not await graph.services.db.fetchval(
        "SELECT count(*) FROM provider_change WHERE account_id = $1 AND done_at IS NULL", graph.account_id)

    def at_fake(name: str) -> tuple[str, bool, bool, frozenset[str]]:
        return graph.server_view()[target[name]]

    assert at_fake("archived")[0] == "archive"
    assert at_fake("trashed")[0] == "trash"
    assert at_fake("starred")[2] and not at_fake("unstarred")[2]
    assert at_fake("read")[1]
    assert at_fake("labelled") == ("inbox", False, False, frozenset({"Follow up"}))
    assert at_fake("snoozed")[0] == "archive"
    assert at_fake("filed")[0] == "Projects"
    # The moved messages' new ids are known at once, so the next delta recognises them.
    for name in ("archived", "trashed", "snoozed", "filed"):
        row = await graph.row(target[name])
        assert row["graph_id"] in mailbox.messages and row["id"] == ids[name]
    assert await graph.labels_of(target["snoozed"]) == {"snoozed", "archive"}
    assert await graph.labels_of(target["trashed"]) == {"trash"}

    await graph.sync()
    await graph.assert_matches_server()
    assert await graph.labels_of(target["snoozed"]) == {"snoozed", "archive"}
    assert await graph.labels_of(target["labelled"]) == {"inbox", "Follow up"}

    # Waking brings it back to the Inbox, unread.
    await ops.wake(user, [thread["snoozed"]])
    await graph.propagate()
    assert graph.server_view()[target["snoozed"]][0] == "inbox"
    await graph.sync()
    await graph.assert_matches_server()


async def test_a_change_made_in_outlook_meanwhile_does_not_undo_a_pending_local_one(graph: GraphSetup) -> None:
    mailbox = graph.mailbox
    old_message(mailbox, "inbox", 0)
    await graph.sync_all()
    message = mailbox.in_folder("inbox")[0]
    row = await graph.row(rfc_id(message))
    await graph.services.operations.set_seen(graph.user.id, True, message_ids=[row["id"]])
    await graph.services.operations.archive(graph.user.id, message_ids=[row["id"]])
    mailbox.update(message.id, flag_status="flagged")  # Outlook touched it: an "updated" in the Inbox delta
    await graph.sync()  # before the propagator ran: the local read state and location stand
    assert await graph.labels_of(rfc_id(message)) == {"archive"}
    seen = await graph.services.db.fetchval("SELECT seen_at IS NOT NULL FROM message WHERE id = $1", row["id"])
    assert seen
    await graph.propagate()
    await graph.sync()
    await graph.assert_matches_server()
    assert graph.server_view()[rfc_id(message)] == ("archive", True, True, frozenset())
    assert (await graph.services.labels.role_ids(graph.user.id))[LabelRole.ARCHIVE]


async def test_a_429_while_propagating_waits_for_the_time_graph_named(graph: GraphSetup) -> None:
    mailbox = graph.mailbox
    for i in range(2):
        old_message(mailbox, "inbox", i)
    await graph.sync_all()
    rows = [await graph.row(rfc_id(m)) for m in mailbox.in_folder("inbox")]
    await graph.services.operations.set_starred(graph.user.id, True, message_ids=[r["id"] for r in rows])
    await graph.services.db.execute("DELETE FROM saq_jobs")
    graph.fake.throttle.throttle_next(1, retry_after=1)
    before = time.time()
    assert await graph.propagate() == 0  # no error: the changes wait
    pending = await graph.services.db.fetchval(
        "SELECT count(*) FROM provider_change WHERE account_id = $1 AND done_at IS NULL AND attempts = 0",
        graph.account_id)
    assert pending == 2
    job = await graph.services.db.fetchrow(
        "SELECT convert_from(job, 'UTF8')::jsonb AS job FROM saq_jobs WHERE queue = 'ingest'")
    assert job is not None
    body = json.loads(job["job"]) if isinstance(job["job"], str) else job["job"]
    assert body["function"] == "propagate_provider_changes" and body.get("scheduled", 0) >= int(before)  # not at once
    await asyncio.sleep(1.1)
    assert await graph.propagate() == 2
    assert all(m.flag_status == "flagged" for m in mailbox.in_folder("inbox"))
