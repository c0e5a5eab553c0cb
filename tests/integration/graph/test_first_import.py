"""The Microsoft first import: folders discovered, each read newest first in pages of fifty in role order,
the last page bringing the folder's delta link; until then the sync asks only for new mail."""

from __future__ import annotations

import asyncio
import json
import time
from datetime import UTC, datetime, timedelta

from plmail.domain.enums import QueueName
from plmail.providers.graph.repos.messages import GraphMessageRepository
from tests.integration.graph.conftest import GraphSetup, old_message, rfc_id
from tests.support.fakes import rfc822


async def test_several_folders_import_newest_first_in_role_order_and_match_the_server(graph: GraphSetup) -> None:
    mailbox = graph.mailbox
    projects = mailbox.add_folder("Projects")
    mailbox.add_folder("2026", projects.id)
    mailbox.add_folder("Team", "inbox")
    inbox = [old_message(mailbox, "inbox", i, is_read=i % 3 == 0, flag_status="flagged" if i == 7 else "notFlagged",
                         categories=["Receipts"] if i % 10 == 0 else ()) for i in range(120)]
    for i in range(12):
        old_message(mailbox, "sentitems", i, is_read=True)
    old_message(mailbox, "drafts", 0, is_read=True)
    for i in range(7):
        old_message(mailbox, "Projects", i)
    for i in range(3):
        old_message(mailbox, "Projects/2026", i, categories=["Work/Q1", "Receipts"])
    old_message(mailbox, "Inbox/Team", 0)
    for i in range(5):
        old_message(mailbox, "archive", i, is_read=True)
    old_message(mailbox, "junkemail", 0)
    old_message(mailbox, "deleteditems", 0, is_read=True)
    mailbox.add_message(rfc822("Waiting to go out", message_id="<outbox-1@example.org>"), "outbox")

    await graph.sync()
    assert await graph.importing()
    state = await graph.state()
    assert set(state["graph_import"]) == {f.id for f in mailbox.folders.values()
                                          if f.well_known not in ("msgfolderroot", "outbox")}
    assert not state.get("graph_links")
    assert not await graph.services.db.fetchval("SELECT count(*) FROM message WHERE account_id = $1",
                                                graph.account_id)  # nothing new: history is the import's
    # The sync ended by starting the import on ingest_backlog.
    assert await graph.services.db.fetchval(
        "SELECT count(*) FROM saq_jobs WHERE queue = $1 AND convert_from(job, 'UTF8')::jsonb ->> 'function' = "
        "'import_mail_page'", QueueName.INGEST_BACKLOG.value) == 1

    first = await graph.import_page()
    assert first.page.stored == 50 and first.page.more
    newest = sorted(inbox, key=lambda m: m.received, reverse=True)[:50]
    stored = {r["rfc_message_id"] for r in await graph.services.db.fetch(
        "SELECT rfc_message_id FROM message WHERE account_id = $1", graph.account_id)}
    assert stored == {rfc_id(m) for m in newest}
    runs = [first, *await graph.import_all()]
    assert not await graph.importing()

    order = [run.page.folder for run in runs if run.page.stored]
    assert order[:3] == ["Inbox"] * 3  # 120 messages, fifty a page
    assert order.index("Sent") < order.index("Drafts") < order.index("Projects") < order.index("Archive")
    assert order.index("Archive") < order.index("Spam") < order.index("Trash")
    assert all(run.page.stored <= 50 for run in runs)
    for call in graph.delta_calls():
        assert "$deltatoken" not in str(call.query)  # the import never follows a link; only the sync does
    state = await graph.state()
    assert not state["graph_import"]
    assert set(state["graph_links"]) == {f.id for f in mailbox.folders.values()
                                         if f.well_known not in ("msgfolderroot", "outbox")}

    await graph.sync()
    await graph.assert_matches_server()
    # One thread per Graph conversation, keyed by conversationId.
    keys = await graph.services.db.fetch(
        "SELECT DISTINCT t.provider_thread_key FROM message m JOIN message_thread t ON t.id = m.thread_id "
        "WHERE m.account_id = $1", graph.account_id)
    assert {k["provider_thread_key"] for k in keys} == {m.conversation_id for m in mailbox.messages.values()
                                                        if mailbox.folders[m.folder_id].well_known != "outbox"}


async def test_the_next_page_is_asked_for_while_this_one_is_stored_and_never_asked_for_twice(
        graph: GraphSetup) -> None:
    """Graph answers while PostgreSQL writes: page two is requested during page one's job, before any job for
    it runs, and its job takes that answer instead of asking again."""
    for i in range(120):
        old_message(graph.mailbox, "inbox", i)
    await graph.sync()
    before = len(graph.delta_calls("inbox"))

    def import_requests() -> int:
        return len(graph.delta_calls("inbox")) - before

    first = await graph.import_page()
    assert first.page.stored == 50 and first.page.more
    deadline = time.monotonic() + 10
    while import_requests() < 2 and time.monotonic() < deadline:
        await asyncio.sleep(0.01)
    assert import_requests() == 2  # page two asked for, though only page one's job ran
    assert "$skiptoken" in str(graph.delta_calls("inbox")[-1].query)
    second = await graph.import_page()
    assert second.page.stored == 50
    await graph.import_all()
    assert import_requests() == 3  # 120 messages in pages of fifty: three requests, none twice
    await graph.sync()
    await graph.assert_matches_server()


async def test_placing_new_messages_rewrites_only_rows_stamped_before_their_listing(graph: GraphSetup) -> None:
    """A new row carries the app's clock as its listing time; where that is older than the listing (the app's
    clock behind the database's), the database's time replaces it, so the round's end does not hold the message
    as gone. A row stamped after its listing is left as written: no second row version per message."""
    for i in range(2):
        old_message(graph.mailbox, "inbox", i)
    await graph.sync()
    await graph.import_all()
    db = graph.services.db
    early, fresh = await db.fetch("SELECT id, provider_key, synced_at FROM message WHERE account_id = $1 ORDER BY id",
                                  graph.account_id)
    listed_at = fresh["synced_at"] - timedelta(seconds=1)
    await db.execute("UPDATE message SET synced_at = $2 WHERE id = $1", early["id"], listed_at - timedelta(minutes=5))
    versions = {r["id"]: r["v"] for r in await db.fetch(
        "SELECT id, xmin::text AS v FROM message WHERE account_id = $1", graph.account_id)}
    inbox = graph.mailbox.folder("inbox").id

    await GraphMessageRepository(db).place(graph.account_id, [early["provider_key"], fresh["provider_key"]],
                                           [inbox, inbox], listed_at)

    after = {r["id"]: r for r in await db.fetch(
        "SELECT id, xmin::text AS v, synced_at FROM message WHERE account_id = $1", graph.account_id)}
    assert after[early["id"]]["synced_at"] >= listed_at and after[early["id"]]["v"] != versions[early["id"]]
    assert after[fresh["id"]]["synced_at"] == fresh["synced_at"] and after[fresh["id"]]["v"] == versions[fresh["id"]]
    assert await GraphMessageRepository(db).unlisted(graph.account_id, inbox, listed_at) == {}


async def test_the_sync_asks_an_importing_folder_only_for_new_mail(graph: GraphSetup) -> None:
    mailbox = graph.mailbox
    for i in range(60):
        old_message(mailbox, "inbox", i)
    await graph.sync()
    fresh = mailbox.add_message(rfc822("Arrived just now", message_id="<fresh@example.org>",
                                       date=datetime.now(UTC)))
    await graph.sync()
    assert await graph.labels_of("fresh@example.org") == {"inbox"}
    assert await graph.services.db.fetchval("SELECT count(*) FROM message WHERE account_id = $1",
                                            graph.account_id) == 1
    assert await graph.importing()
    await graph.import_all()
    await graph.sync()
    await graph.assert_matches_server()
    assert (await graph.row("fresh@example.org"))["graph_id"] == fresh.id


async def test_a_429_during_the_import_schedules_the_next_page_for_later(graph: GraphSetup) -> None:
    for i in range(70):
        old_message(graph.mailbox, "inbox", i)
    await graph.sync()
    await graph.services.db.execute("DELETE FROM saq_jobs")
    graph.fake.throttle.throttle_next(1, retry_after=1)
    before = time.time()
    run = await graph.services.importer.run_page(graph.account_id)
    assert run.page.more and run.page.stored == 0 and run.page.wait_until is not None
    job = await graph.services.db.fetchrow(
        "SELECT convert_from(job, 'UTF8')::jsonb AS job FROM saq_jobs WHERE queue = $1",
        QueueName.INGEST_BACKLOG.value)
    assert job is not None
    body = json.loads(job["job"]) if isinstance(job["job"], str) else job["job"]
    assert body["function"] == "import_mail_page" and body.get("scheduled", 0) >= int(before)  # not at once
    state = await graph.services.importer.progress(graph.account_id)
    assert state is not None and state.importing
    assert not (await graph.services.db.fetchval("SELECT sync_state -> 'import' ->> 'last_error' FROM account "
                                                 "WHERE id = $1", graph.account_id))
    await asyncio.sleep(max((run.page.wait_until - datetime.now(UTC)).total_seconds(), 0.0))
    await graph.import_all()
    await graph.sync()
    await graph.assert_matches_server()


async def test_a_message_that_will_not_store_is_tried_five_times_then_the_folder_goes_on(graph: GraphSetup) -> None:
    """Seed: "nach fünf Versuchen rückt die Marke an ihr vorbei, und der Ordner geht weiter" — for Microsoft too."""
    await graph.services.db.execute(
        """CREATE FUNCTION refuse_poison() RETURNS trigger LANGUAGE plpgsql AS $$
           BEGIN RAISE EXCEPTION 'this message cannot be stored'; END $$;
           CREATE TRIGGER refuse_poison BEFORE INSERT ON message FOR EACH ROW
               WHEN (NEW.subject = 'poison') EXECUTE FUNCTION refuse_poison();""")
    for i in range(3):
        old_message(graph.mailbox, "inbox", i)
    old_message(graph.mailbox, "inbox", 3, subject="poison")
    await graph.sync()
    runs = await graph.import_all(limit=20)
    assert [run.page.failed for run in runs if run.page.failed] == [1] * 4  # the fifth failure gives it up
    assert not await graph.importing()  # and the folder went on to its end
    skip = await graph.services.db.fetchrow("SELECT reason FROM ingest_skip WHERE account_id = $1", graph.account_id)
    assert skip is not None and "cannot be stored" in skip["reason"]
    assert await graph.services.db.fetchval("SELECT count(*) FROM message WHERE account_id = $1",
                                            graph.account_id) == 3
