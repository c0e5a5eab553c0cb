"""The Gmail first import: inbox first by name, then the whole mailbox with spam and trash, one page per job,
complete and exact; a quota refusal on the way is learnt from, never an error; what cannot be stored is noted."""

from __future__ import annotations

import json
import random
from datetime import UTC, datetime, timedelta

import asyncpg

from plmail.domain.enums import LabelRole, ProviderKind
from plmail.mail.batching import RAW_BATCH_BYTES
from plmail.providers.gmail.importer import BACKFILL_COOLDOWN, BackfillState
from plmail.providers.gmail.pacer import SHARE
from tests.integration.gmail.conftest import GmailSetup
from tests.support.fakes import rfc822
from tests.support.imap_mail import large_message
from tests.support.repos import account_admin

MB = 1024 * 1024

CATEGORIES = {
    "CATEGORY_PERSONAL": "primary", "CATEGORY_SOCIAL": "social", "CATEGORY_PROMOTIONS": "promotions",
    "CATEGORY_UPDATES": "updates", "CATEGORY_FORUMS": "forums",
}


def seed_mailbox(gmail: GmailSetup, messages: int, *, seed: int = 7) -> dict[str, str]:
    """`messages` messages in threads of one to five, each thread in one tab; returns thread id -> category."""
    rng = random.Random(seed)
    mailbox = gmail.mailbox
    work = mailbox.add_label("Work/Invoices")
    receipts = mailbox.add_label("Receipts")
    tabs: dict[str, str] = {}
    made = 0
    thread_no = 0
    while made < messages:
        thread_no += 1
        size = min(rng.randint(1, 5), messages - made)
        category = rng.choice(list(CATEGORIES))
        place = rng.choices(["INBOX", "archive", "SENT", "SPAM", "TRASH", work.id, receipts.id],
                            weights=[40, 30, 10, 5, 5, 6, 4])[0]
        root = f"<t{thread_no}@example.org>"
        thread_id: str | None = None
        for n in range(size):
            labels = [category] + ([] if place == "archive" else [place])
            if rng.random() < 0.3:
                labels.append("UNREAD")
            if rng.random() < 0.05:
                labels.append("STARRED")
            raw = rfc822(f"Thread {thread_no}" if n == 0 else f"Re: Thread {thread_no}",
                         message_id=root if n == 0 else f"<t{thread_no}.{n}@example.org>",
                         in_reply_to=root if n else None, body=f"Message {made}")
            added = mailbox.add_message(raw, label_ids=labels, thread_id=thread_id)
            thread_id = thread_id or added.thread_id
            made += 1
        assert thread_id is not None
        tabs[thread_id] = CATEGORIES[category]
    return tabs


async def test_a_3000_message_mailbox_imports_completely_inbox_first(gmail: GmailSetup) -> None:
    tabs = seed_mailbox(gmail, 3000)
    assert await gmail.sync() == []  # the first sync takes the history snapshot and asks for a backfill
    assert await gmail.count() == 0
    assert await gmail.services.import_state.is_importing(ProviderKind.GMAIL, gmail.account_id)

    await gmail.import_all()
    stored = await gmail.gmail_ids()
    assert stored == set(gmail.mailbox.messages)  # spam and trash included, nothing twice
    assert await gmail.count() == 3000
    assert all(run.page.stored <= 100 for run in gmail.pages)
    phases = list(dict.fromkeys(run.page.folder for run in gmail.pages if run.page.folder))
    assert phases == ["inbox", "all"]
    # the inbox was in before anything else: every inbox message got an earlier row id than any other
    rows = await gmail.services.db.fetch(
        "SELECT id, provider_labels ? 'INBOX' AS inbox FROM message WHERE account_id = $1", gmail.account_id)
    assert max(r["id"] for r in rows if r["inbox"]) < min(r["id"] for r in rows if not r["inbox"])

    # Gmail's threads are the threads, and Gmail's tabs their categories
    threads = await gmail.services.db.fetch(
        "SELECT provider_thread_key, category, message_count FROM message_thread WHERE account_id = $1",
        gmail.account_id)
    assert {r["provider_thread_key"]: r["category"] for r in threads} == tabs
    assert sum(r["message_count"] for r in threads) == 3000

    # labels: system labels to roles, nested names to a chain, archived mail to Archive
    some = gmail.mailbox.with_label("Work/Invoices")[0]
    assert await gmail.labels_of(some.id) == {"Invoices"}
    chain = await gmail.services.db.fetch(
        "SELECT c.name AS child, p.name AS parent FROM label c JOIN label p ON p.id = c.parent_id WHERE c.user_id = $1",
        gmail.user.id)
    assert ("Work", "Invoices") in {(r["parent"], r["child"]) for r in chain}
    for label, role in (("SPAM", LabelRole.SPAM), ("TRASH", LabelRole.TRASH), ("SENT", LabelRole.SENT)):
        assert await gmail.labels_of(gmail.mailbox.with_label(label)[0].id) == {role.value}
    archived = next(m for m in gmail.mailbox.messages.values()
                    if not set(m.label_ids) & {"INBOX", "SENT", "SPAM", "TRASH", "Label_1", "Label_2"})
    assert await gmail.labels_of(archived.id) == {LabelRole.ARCHIVE.value}
    unread = {m.id for m in gmail.mailbox.messages.values() if "UNREAD" in m.label_ids}
    assert unread == {r["gmail_id"] for r in await gmail.services.db.fetch(
        "SELECT provider_key AS gmail_id FROM message WHERE account_id = $1 AND seen_at IS NULL", gmail.account_id)}

    progress = await gmail.importer.progress(gmail.account_id)
    assert progress is not None and not progress.importing and progress.done == progress.total == 3000
    assert not await gmail.services.import_state.is_importing(ProviderKind.GMAIL, gmail.account_id)
    assert gmail.fake.quota.rejections == []
    listings = [c for c in gmail.fake.calls if c.method == "users.messages.list"]
    assert {c.query.get("maxResults", [""])[0] for c in listings} == {"500"}
    assert all(c.query.get("includeSpamTrash") == ["true"] for c in listings if "labelIds" not in c.query)


async def test_a_refusal_mid_import_teaches_the_pacer_and_the_import_still_ends(gmail: GmailSetup) -> None:
    gmail.fake.quota.units_per_minute = 6_000  # a project created since May 2026
    seed_mailbox(gmail, 400)
    await gmail.sync()
    await gmail.import_all()
    assert await gmail.count() == 400
    rejections = gmail.fake.quota.rejections
    assert len(rejections) == 1, rejections  # learnt from the first refusal, never refused again
    learned = await gmail.services.db.fetchval("SELECT limit_units FROM gmail_quota_limit")
    assert learned == 6_000
    budget = await gmail.gmail.pacer.budget(gmail.account_id, gmail.fake.client_id)
    assert budget.limit == 6_000 and budget.units_per_minute == 6_000 * SHARE
    state = await account_admin(gmail.services).for_job(gmail.account_id)
    assert state is not None and state.sync_state["import"].get("last_error") is None
    assert any(run.page.wait_until is not None for run in gmail.pages)  # put back, not failed
    # After the refusal the account was paced at 85 %: no fixed minute saw more than 6,000 units.
    spent: dict[int, int] = {}
    for call in gmail.fake.calls:
        spent[int(call.at // 60)] = spent.get(int(call.at // 60), 0) + call.units
    assert max(spent.values()) <= 6_000


async def test_a_chat_and_a_gone_id_are_noted_and_the_import_ends_in_one_pass(gmail: GmailSetup) -> None:
    for n in range(20):
        gmail.mailbox.add_message(rfc822(f"Mail {n}", to="alice@gmail.com"))
    chat = gmail.mailbox.add_chat("hi, are you there?")
    gone = gmail.mailbox.add_message(rfc822("Vanishing", sender="Carol <carol@example.net>", cc="dave@example.net"),
                                     label_ids=("INBOX", "CATEGORY_UPDATES"))
    gmail.mailbox.mark_gone(gone.id)
    await gmail.sync()
    await gmail.import_all()
    assert await gmail.count() == 20
    notes = {r["gmail_id"]: r for r in await gmail.services.db.fetch(
        "SELECT * FROM gmail_skipped_message WHERE account_id = $1", gmail.account_id)}
    assert set(notes) == {chat.id, gone.id}
    assert notes[chat.id]["reason"] == "chat"
    assert json.loads(notes[chat.id]["label_ids"]) == ["CHAT"]
    assert notes[chat.id]["from_address"] == "partner@gmail.com"
    assert json.loads(notes[chat.id]["to_addresses"]) == ["alice@gmail.com"]
    assert notes[gone.id]["reason"] == "gone"
    progress = await gmail.importer.progress(gmail.account_id)
    assert progress is not None and not progress.importing and progress.done == progress.total == 22
    record = await account_admin(gmail.services).for_job(gmail.account_id)
    assert record is not None
    backfill = BackfillState.of(record)
    assert backfill is not None and backfill.status == "done" and backfill.attempts == 1

    # the listing treats noted ids as stored: a new pass asks for neither again
    gets_before = sum(1 for c in gmail.fake.calls if c.method == "users.messages.get")
    await gmail.gmail.backfill.request(gmail.account_id, total=0, reason="test")
    await gmail.import_all()
    assert sum(1 for c in gmail.fake.calls if c.method == "users.messages.get") == gets_before

    # the id answers again; once its note is forgotten it is stored, and its note does not come back
    gmail.mailbox.messages[gone.id].gone = False
    assert await gmail.gmail.messages.forget_account(gmail.account_id) == 2
    await gmail.gmail.backfill.request(gmail.account_id, total=0, reason="test")
    await gmail.import_all()
    assert await gmail.count() == 21
    remaining = await gmail.services.db.fetch(
        "SELECT gmail_id, reason FROM gmail_skipped_message WHERE account_id = $1", gmail.account_id)
    assert [(r["gmail_id"], r["reason"]) for r in remaining] == [(chat.id, "chat")]


async def test_a_note_disappears_once_its_message_is_stored_after_all(gmail: GmailSetup, database_url: str) -> None:
    """The seed: "Eine Zeile verschwindet, wenn ihre Nachricht doch gespeichert wird." Another worker notes the
    id as gone (Gmail answered it 404 a moment ago) while this import's fetch of it is under way and succeeds."""
    back = gmail.mailbox.add_message(rfc822("Back again"))
    await gmail.sync()

    async def another_worker_notes_it_gone() -> None:
        conn = await asyncpg.connect(database_url)
        try:
            await conn.execute(
                """INSERT INTO gmail_skipped_message (account_id, gmail_id, reason, detail, created_at)
                   VALUES ($1, $2, 'gone', 'listed by Gmail, but Gmail answers 404 for it', now())""",
                gmail.account_id, back.id)
        finally:
            await conn.close()

    gmail.fake.before_next("users.messages.get", another_worker_notes_it_gone)
    await gmail.import_all()
    assert await gmail.count() == 1
    assert await gmail.services.db.fetch(
        "SELECT gmail_id FROM gmail_skipped_message WHERE account_id = $1", gmail.account_id) == []


async def test_a_pass_that_cannot_store_everything_waits_an_hour_and_stops_after_24(gmail: GmailSetup) -> None:
    gmail.mailbox.add_message(rfc822("fine"))
    await gmail.sync()
    await gmail.import_all()
    record = await account_admin(gmail.services).for_job(gmail.account_id)
    assert record is not None
    state = BackfillState.of(record)
    assert state is not None
    # an incomplete pass just ended: no new pass before the cooldown is over
    now = gmail.time.now()
    await gmail.gmail.backfill.put(gmail.account_id, BackfillState(attempts=3, ended_at=now, total=1))
    assert not await gmail.gmail.importer.has_history(gmail.account_id)
    assert await gmail.services.import_state.is_importing(ProviderKind.GMAIL, gmail.account_id)  # an hour late
    gmail.time.until(now + BACKFILL_COOLDOWN)
    assert await gmail.gmail.importer.has_history(gmail.account_id)
    await gmail.import_all()
    done = BackfillState.of(await account_admin(gmail.services).for_job(gmail.account_id))  # type: ignore[arg-type]
    assert done is not None and done.status == "done" and done.attempts == 4
    # at the attempt limit the backfill gives up instead of trying forever
    await gmail.gmail.backfill.put(gmail.account_id, BackfillState(attempts=24, total=1))
    await gmail.import_page()
    given_up = BackfillState.of(await account_admin(gmail.services).for_job(gmail.account_id))  # type: ignore[arg-type]
    assert given_up is not None and given_up.status == "given_up"
    assert not await gmail.services.import_state.is_importing(ProviderKind.GMAIL, gmail.account_id)


async def test_large_mail_reaches_the_pipeline_in_batches_bounded_by_bytes(gmail: GmailSetup) -> None:
    """Gmail tells a size only with the message: a job's messages are stored in several batches, each under
    the budget, instead of holding every attachment of the job at once."""
    scans = [gmail.mailbox.add_message(large_message(n, 12 * MB)) for n in range(5)]
    small = [gmail.mailbox.add_message(rfc822(f"Mail {n}")) for n in range(3)]
    await gmail.sync()
    await gmail.import_all()
    assert await gmail.gmail_ids() == {m.id for m in scans + small}
    # Each pipeline batch is one transaction, and its JMAP creates carry that transaction's time.
    rows = await gmail.services.db.fetch(
        """SELECT count(*) FILTER (WHERE m.size > $2) AS scans, sum(m.size) AS bytes
             FROM jmap_change_log c JOIN message m ON m.id::text = c.entity_id
            WHERE c.account_id = $1 AND c.object_type = 'Email' AND c.change_type = 'created'
            GROUP BY c.created_at""", gmail.account_id, MB)
    assert sum(r["scans"] for r in rows) == 5
    assert sorted(r["scans"] for r in rows if r["scans"]) == [1, 2, 2]  # two scans fit the budget, a third not
    assert all(r["bytes"] <= RAW_BATCH_BYTES for r in rows)
    assert RAW_BATCH_BYTES < 3 * 12 * MB


async def test_every_sync_restarts_an_import_that_has_work_and_has_been_silent_for_five_minutes(
    gmail: GmailSetup,
) -> None:
    """Seed: "MailImporter::ensureRunning(), das einen Import startet, der Arbeit hat und seit fünf Minuten still
    ist" — a chain that moved within the five minutes is left alone."""
    gmail.mailbox.add_message(rfc822("history"))
    t0 = datetime.now(UTC)
    await gmail.sync()  # the sync itself ends in ensure_running: the new account's import is started
    importer = gmail.importer
    assert not await importer.ensure_running(gmail.account_id, now=t0 + timedelta(minutes=4, seconds=59))
    assert await importer.ensure_running(gmail.account_id, now=t0 + timedelta(minutes=5, seconds=1))  # it broke
    assert not await importer.ensure_running(gmail.account_id, now=t0 + timedelta(minutes=9))
    assert await importer.ensure_running(gmail.account_id, now=t0 + timedelta(minutes=10, seconds=2))
    await gmail.import_all()
    assert not await importer.ensure_running(gmail.account_id, now=t0 + timedelta(hours=1))  # no work left


POISON = """
    CREATE FUNCTION refuse_poison() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN RAISE EXCEPTION 'this message cannot be stored'; END $$;
    CREATE TRIGGER refuse_poison BEFORE INSERT ON message FOR EACH ROW
        WHEN (NEW.subject = 'poison') EXECUTE FUNCTION refuse_poison();"""


async def test_a_message_that_will_not_store_is_asked_for_five_times_then_the_page_moves_past_it(
    gmail: GmailSetup,
) -> None:
    """Seed: "Die Marke bleibt, wo sie ist, und die Seite wird erneut angefragt; nach fünf Versuchen rückt die
    Marke an ihr vorbei" — for Gmail as for IMAP."""
    await gmail.services.db.execute(POISON)
    for n in range(3):
        gmail.mailbox.add_message(rfc822(f"fine {n}"))
    gmail.mailbox.add_message(rfc822("poison"))
    await gmail.sync()
    for _ in range(12):
        progress = await gmail.importer.progress(gmail.account_id)
        if progress is None or not progress.importing:
            break
        await gmail.import_page()
    # five tries on the inbox page, then it moves past; the listing of everything meets it again, five more
    assert [(run.page.folder, run.page.failed) for run in gmail.pages][:10] == [("inbox", 1)] * 5 + [("all", 1)] * 5
    assert await gmail.count() == 3  # the rest is stored; the failing one costs only itself
    state = BackfillState.of(await account_admin(gmail.services).for_job(gmail.account_id))  # type: ignore[arg-type]
    assert state is not None and not state.in_pass and state.incomplete  # the pass ended, to be tried again
