"""The first import: top-down pages in the seed's folder order, exactly the server's mail per folder, new
mail visible while it runs, and pages of several accounts taking turns on the queue."""

from __future__ import annotations

import asyncio
import time

from plmail.domain.enums import LabelRole, ProviderKind, QueueName
from plmail.jobs.catalog import default_catalog
from plmail.jobs.workers import WorkerSupervisor
from plmail.services import Services
from tests.integration.imap_sync.conftest import ImapSetup, add_account
from tests.support.dovecot import DovecotServer
from tests.support.imap_mail import message

FOLDERS = {"INBOX": 700, "Sent": 300, "Drafts": 100, "Projects/2026": 400, "Archive": 300, "Trash": 200}


def _seed(imap: ImapSetup) -> None:
    seq = 0
    # Trash first on disk, so the folder order below is plmail's doing, not the server's
    for folder in reversed(list(FOLDERS)):
        count = FOLDERS[folder]
        imap.mail.deliver([message(n) for n in range(seq + 1, seq + count + 1)], folder=folder)
        seq += count


async def test_first_import_matches_the_server_and_new_mail_shows_during_it(imap: ImapSetup) -> None:
    _seed(imap)
    assert await imap.sync() == []  # a first sync only notes where new mail begins
    assert await imap.count() == 0
    assert await imap.services.import_state.is_importing(ProviderKind.IMAP, imap.account_id)

    for _ in range(16):  # the inbox (14 pages) and the start of Sent
        await imap.import_page()
    imap.mail.append([message(9001, subject="arrived during the import")])
    await imap.sync()
    progress = await imap.services.importer.progress(imap.account_id)
    assert progress is not None and progress.importing and 0 < progress.done < progress.total
    assert "seq-9001@plmail.test" in (await imap.stored_ids())["INBOX"]

    await imap.import_all()
    folders_in_order = list(dict.fromkeys(run.page.folder for run in imap.pages if run.page.folder))
    assert folders_in_order == ["INBOX", "Sent", "Drafts", "Projects/2026", "Archive", "Trash"]
    assert all(run.page.stored <= 50 for run in imap.pages)

    stored = await imap.stored_ids()
    assert stored == imap.server_ids(list(FOLDERS))
    assert await imap.count() == 2001  # no message twice
    assert not await imap.services.import_state.is_importing(ProviderKind.IMAP, imap.account_id)
    # roles became the role labels, the hierarchy a label chain
    assert await imap.labels_of("seq-1@plmail.test") == {LabelRole.TRASH.value}
    assert await imap.labels_of("seq-1100@plmail.test") == {LabelRole.SENT.value}
    chain = await imap.services.db.fetch(
        "SELECT c.name AS child, p.name AS parent FROM label c JOIN label p ON p.id = c.parent_id "
        "WHERE c.user_id = $1", imap.user.id)
    assert {(r["parent"], r["child"]) for r in chain} == {("Projects", "2026")}


async def test_pages_of_several_accounts_take_turns(services: Services, dovecot: DovecotServer) -> None:
    """Three accounts, two import workers: every account gets pages before any import is done."""
    user = await services.users.create_user("turns@example.org", "correct horse")
    accounts = []
    for n in range(3):
        mail = dovecot.add_user()
        mail.deliver([message(n * 1000 + i) for i in range(1, 301)])
        accounts.append(await add_account(services, user, mail, name=f"account {n}"))
    for account_id in accounts:
        await services.sync.run(account_id)  # first contact, and the import chain is enqueued
    workers = WorkerSupervisor(services, default_catalog(), [QueueName.INGEST_BACKLOG], grace_seconds=2)
    workers.start()
    try:
        deadline = time.monotonic() + 60
        while any([(await services.importer.progress(a)).importing for a in accounts]):  # type: ignore[union-attr]
            assert time.monotonic() < deadline, "the imports did not finish"
            await asyncio.sleep(0.1)
    finally:
        await workers.stop()
    spans = await services.db.fetch(
        "SELECT account_id, min(created_at) AS first, max(created_at) AS last, count(*) AS n FROM message "
        "WHERE account_id = ANY($1::int[]) GROUP BY account_id", accounts)
    assert [r["n"] for r in spans] == [300, 300, 300]
    assert max(r["first"] for r in spans) < min(r["last"] for r in spans)


async def test_a_page_read_ahead_is_used_only_if_it_is_still_the_next_page(imap: ImapSetup) -> None:
    """While a page is stored the next is read ahead; a message expunged meanwhile must not come back from the
    page read before it went, and the page must still end up with the server's mail."""
    imap.mail.deliver([message(n) for n in range(1, 181)])
    await imap.sync()
    first = await imap.import_page()
    assert first.page.stored == 50  # UIDs 131..180; 81..130 are being read ahead
    with imap.mail.peer() as peer:
        peer.store(100, "+FLAGS", "(\\Deleted)")
        peer.expunge()
    second = await imap.import_page()
    assert second.page.stored == 50  # 80..130 without 100: fetched again, not taken from the read-ahead
    stored = (await imap.stored_ids())["INBOX"]
    assert "seq-100@plmail.test" not in stored
    assert {f"seq-{n}@plmail.test" for n in (80, 99, 101, 130)} <= stored
    await imap.import_all()
    assert await imap.stored_ids() == imap.server_ids(["INBOX"])
    assert await imap.count() == 179


async def test_the_page_after_next_is_read_ahead_too_and_dropped_when_the_server_changed_it(imap: ImapSetup) -> None:
    """Two pages are read ahead while one is stored; a message expunged from the page after next before its turn
    must not come back from that early read."""
    imap.mail.deliver([message(n) for n in range(1, 181)])
    await imap.sync()
    first = await imap.import_page()
    assert first.page.stored == 50  # UIDs 131..180; 81..130 and 31..80 are being read ahead
    with imap.mail.peer() as peer:
        peer.store(50, "+FLAGS", "(\\Deleted)")
        peer.expunge()
    second = await imap.import_page()
    assert second.page.stored == 50  # 81..130, as read ahead
    third = await imap.import_page()
    assert third.page.stored == 50  # 30..80 without 50: fetched again, not taken from the early read
    stored = (await imap.stored_ids())["INBOX"]
    assert "seq-50@plmail.test" not in stored
    assert {f"seq-{n}@plmail.test" for n in (30, 49, 51, 80, 81, 130)} <= stored
    await imap.import_all()
    assert await imap.stored_ids() == imap.server_ids(["INBOX"])
    assert await imap.count() == 179
