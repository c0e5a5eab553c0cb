"""Gmail syncs after the import: history deltas (adds, deletions, label changes), the relabel pass that moves a
thread between tabs without running the pipeline again, and an expired history id falling back to a backfill."""

from __future__ import annotations

from typing import Any

from plmail.domain.enums import LabelRole, ProviderKind, QueueName
from plmail.domain.jobs import JobSpec
from plmail.providers.gmail.importer import BackfillState
from plmail.providers.gmail.syncer import GmailAccountSyncer
from tests.integration.gmail.conftest import GmailSetup
from tests.support.fakes import rfc822
from tests.support.repos import account_admin


async def _imported(gmail: GmailSetup, messages: int = 12) -> list[str]:
    ids = [gmail.mailbox.add_message(rfc822(f"Mail {n}", message_id=f"<m{n}@example.org>"),
                                     label_ids=("INBOX", "UNREAD", "CATEGORY_PERSONAL")).id for n in range(messages)]
    await gmail.sync()
    await gmail.import_all()
    assert await gmail.count() == messages
    return ids


async def test_history_deltas_apply_adds_deletions_and_label_changes(gmail: GmailSetup) -> None:
    ids = await _imported(gmail)
    project = gmail.mailbox.add_label("Projects/Apollo")
    first_thread = gmail.mailbox.messages[ids[0]].thread_id
    reply = gmail.mailbox.add_message(
        rfc822("Re: Mail 0", in_reply_to="<m0@example.org>", message_id="<reply@example.org>"),
        label_ids=("INBOX", "UNREAD", "CATEGORY_PERSONAL"), thread_id=first_thread)
    fresh = gmail.mailbox.add_message(rfc822("Brand new"), label_ids=("INBOX", "UNREAD", "CATEGORY_UPDATES"))
    gmail.mailbox.delete(ids[1])
    gmail.mailbox.modify(ids[2], remove=("INBOX",))  # archived in Gmail's web interface
    gmail.mailbox.modify(ids[3], add=(project.id,), remove=("UNREAD",))
    gmail.mailbox.modify(ids[4], add=("STARRED",))
    gmail.mailbox.trash(ids[5])
    history_calls = sum(1 for c in gmail.fake.calls if c.method == "users.history.list")

    await gmail.sync()
    assert sum(1 for c in gmail.fake.calls if c.method == "users.history.list") == history_calls + 1
    assert await gmail.gmail_ids() == set(gmail.mailbox.messages)
    assert await gmail.thread_of(reply.id) == await gmail.thread_of(ids[0])
    assert await gmail.labels_of(fresh.id) == {LabelRole.INBOX.value}
    assert await gmail.thread_category(fresh.id) == "updates"
    assert await gmail.labels_of(ids[2]) == {LabelRole.ARCHIVE.value}
    assert await gmail.labels_of(ids[3]) == {LabelRole.INBOX.value, "Apollo"}
    assert await gmail.labels_of(ids[5]) == {LabelRole.INBOX.value, LabelRole.TRASH.value}
    flags = {r["gmail_id"]: (r["seen"], r["starred"]) for r in await gmail.services.db.fetch(
        "SELECT provider_key AS gmail_id, seen_at IS NOT NULL AS seen, starred_at IS NOT NULL AS starred FROM message "
        "WHERE account_id = $1", gmail.account_id)}
    assert flags[ids[3]] == (True, False) and flags[ids[4]] == (False, True) and flags[ids[6]] == (False, False)
    # the deletion reached JMAP clients as a destroyed Email
    destroyed = await gmail.services.db.fetchval(
        "SELECT count(*) FROM jmap_change_log WHERE account_id = $1 AND object_type = 'Email' "
        "AND change_type = 'destroyed'", gmail.account_id)
    assert destroyed == 1
    record = await account_admin(gmail.services).for_job(gmail.account_id)
    assert record is not None and record.sync_state["gmail"]["history_id"] == str(gmail.mailbox.history_id)

    await gmail.sync()  # nothing new: nothing changes, nothing is fetched
    assert await gmail.gmail_ids() == set(gmail.mailbox.messages)


async def test_relabel_moves_a_thread_between_tabs_without_running_the_pipeline(gmail: GmailSetup) -> None:
    ids = await _imported(gmail, 3)
    assert await gmail.thread_category(ids[0]) == "primary"
    message_id = await gmail.message_id(ids[0])
    before = await gmail.services.db.fetchval("SELECT coalesce(max(sequence), 0) FROM jmap_change_log")
    gmail.mailbox.modify(ids[0], add=("CATEGORY_PROMOTIONS",), remove=("CATEGORY_PERSONAL",))

    await gmail.sync()
    assert await gmail.thread_category(ids[0]) == "promotions"
    row = await gmail.services.db.fetchrow(
        "SELECT category, provider_labels AS gmail_label_ids FROM message WHERE id = $1", message_id)
    assert row is not None and row["category"] == "promotions" and "CATEGORY_PROMOTIONS" in row["gmail_label_ids"]
    changes = await gmail.services.db.fetch(
        "SELECT object_type, entity_id, change_type FROM jmap_change_log WHERE sequence > $1 AND account_id = $2",
        before, gmail.account_id)
    kinds = {(r["object_type"], r["change_type"]) for r in changes}
    assert ("Email", "updated") in kinds and ("Thread", "updated") in kinds
    assert ("Email", "created") not in kinds  # the pipeline did not run again
    reads = [c for c in gmail.fake.calls if c.method == "users.messages.get" and c.query.get("format") == ["minimal"]]
    assert len(reads) == 1  # the relabel re-reads labels, not the message

    gmail.mailbox.modify(ids[0], add=("CATEGORY_PERSONAL",), remove=("CATEGORY_PROMOTIONS",))
    await gmail.sync()
    assert await gmail.thread_category(ids[0]) == "primary"


async def test_an_expired_history_id_falls_back_to_a_backfill(gmail: GmailSetup) -> None:
    await _imported(gmail, 5)
    gmail.mailbox.expire_history()
    late = [gmail.mailbox.add_message(rfc822(f"Late {n}")).id for n in range(3)]
    gmail.mailbox.expire_history()  # the gap is gone from the history too

    await gmail.sync()
    record = await account_admin(gmail.services).for_job(gmail.account_id)
    assert record is not None
    state = BackfillState.of(record)
    assert state is not None and state.status == "pending" and state.reason == "history expired"
    assert record.sync_state["gmail"]["history_id"] == str(gmail.mailbox.history_id)  # a new snapshot first
    assert await gmail.services.import_state.is_importing(ProviderKind.GMAIL, gmail.account_id)
    await gmail.import_all()
    assert set(late) <= await gmail.gmail_ids()
    assert await gmail.count() == 8
    assert not await gmail.services.import_state.is_importing(ProviderKind.GMAIL, gmail.account_id)
    new = gmail.mailbox.add_message(rfc822("After the gap")).id
    await gmail.sync()  # the new snapshot is where incremental sync resumes
    assert new in await gmail.gmail_ids()


async def test_mail_arriving_during_the_import_is_seen_by_the_sync(gmail: GmailSetup) -> None:
    for n in range(250):
        gmail.mailbox.add_message(rfc822(f"Old {n}"), label_ids=("CATEGORY_UPDATES",))
    await gmail.sync()
    await gmail.import_page()
    arrived = gmail.mailbox.add_message(rfc822("Arrived during the import")).id
    await gmail.sync()
    assert arrived in await gmail.gmail_ids()
    progress = await gmail.importer.progress(gmail.account_id)
    assert progress is not None and progress.importing
    await gmail.import_all()
    assert await gmail.count() == 251


class RecordingQueues:
    """Stands in for the queues: keeps what would have been enqueued."""

    def __init__(self) -> None:
        self.jobs: list[tuple[QueueName, str, float, dict[str, Any]]] = []

    async def enqueue(self, job: JobSpec, *, queue: QueueName | None = None, delay_seconds: float = 0,
                      unique_key: str | None = None, **arguments: Any) -> None:
        self.jobs.append((queue or job.queue, job.name, delay_seconds, arguments))


async def test_many_new_messages_are_fetched_by_jobs_of_100_ids_put_back_on_a_refusal(gmail: GmailSetup) -> None:
    await _imported(gmail, 2)
    queues = RecordingQueues()
    stack = gmail.gmail
    syncer = GmailAccountSyncer(account_admin(gmail.services), stack.api, stack.ingest, stack.backfill,
                                queues, gmail.time, inline_fetch=100)
    for n in range(250):
        gmail.mailbox.add_message(rfc822(f"Burst {n}"))
    record = await account_admin(gmail.services).for_job(gmail.account_id)
    assert record is not None
    await syncer.sync(record.account)
    assert [(q, f, len(a["ids"])) for q, f, _, a in queues.jobs] == [
        (QueueName.INGEST, "gmail_fetch_batch", 100), (QueueName.INGEST, "gmail_fetch_batch", 100),
        (QueueName.INGEST, "gmail_fetch_batch", 50)]
    jobs, queues.jobs = queues.jobs, []

    until = await stack.pacer.rejected(gmail.account_id, gmail.fake.client_id, limit_value=None, retry_after=40)
    assert await syncer.fetch_batch(gmail.account_id, jobs[0][3]["ids"]) == 0  # put back, not failed
    assert [(f, d, a["ids"]) for _, f, d, a in queues.jobs] == [("gmail_fetch_batch", 40.0, jobs[0][3]["ids"])]
    gmail.time.until(until)
    for _, _, _, arguments in [*queues.jobs, *jobs[1:]]:
        await syncer.fetch_batch(gmail.account_id, arguments["ids"])
    assert await gmail.gmail_ids() == set(gmail.mailbox.messages)


async def test_a_gmail_original_is_stored_at_ingest(gmail: GmailSetup) -> None:
    """The deliberate difference from the seed (which fetches Gmail originals on first use): the raw fetch
    already brought the bytes, so the pipeline keeps them and "show original" needs no second call."""
    raw = rfc822("Kept as it came", body="Exactly these bytes.")
    gmail_id = gmail.mailbox.add_message(raw).id
    await gmail.sync()
    await gmail.import_all()
    raw_path = await gmail.services.db.fetchval(
        "SELECT raw_path FROM message WHERE account_id = $1 AND provider_key = $2", gmail.account_id, gmail_id)
    assert raw_path is not None
    assert await gmail.services.blobs.get(raw_path) == raw
