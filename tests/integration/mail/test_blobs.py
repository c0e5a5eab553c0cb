"""The content-addressed blob store in a real PostgreSQL, with blob files of earlier versions still read."""

from __future__ import annotations

import hashlib
from email.message import EmailMessage
from pathlib import Path

import pytest

from plmail.domain.errors import CorruptBlobError, NotFoundError
from plmail.mail.blobs import BlobStore
from plmail.mail.repos.blobs import STATEMENT_BYTES
from plmail.providers.imap.accounts import ImapAccountService
from plmail.services import Services
from tests.integration.mail.conftest import Mailbox
from tests.support.mail import make_message


async def _rows(services: Services) -> int:
    count: int = await services.db.fetchval("SELECT count(*) FROM blob")
    return count


async def test_blobs_are_named_by_content_and_kept_once(services: Services) -> None:
    store = services.blobs
    first = await store.put(b"hello")
    assert first == hashlib.sha256(b"hello").hexdigest()
    assert await store.put(b"hello") == first  # the same bytes again cost nothing
    assert await store.get(first) == b"hello"
    names = await store.put_many([b"part %d" % i for i in range(10)] + [b"hello", b"part 3"])
    assert [await store.get(n) for n in names] == [b"part %d" % i for i in range(10)] + [b"hello", b"part 3"]
    assert await _rows(services) == 11
    assert await store.head(first, 3) == b"hel"


async def test_a_batch_that_rolls_back_leaves_no_bytes_behind(services: Services) -> None:
    digest = hashlib.sha256(b"written, then rolled back").hexdigest()

    async def failing_batch() -> None:
        async with services.db.transaction():
            await services.blobs.put(b"written, then rolled back")
            assert await services.blobs.exists(digest)  # visible inside its own transaction
            raise RuntimeError("the batch failed")

    with pytest.raises(RuntimeError, match="the batch failed"):
        await failing_batch()
    assert not await services.blobs.exists(digest)
    with pytest.raises(NotFoundError):
        await services.blobs.get(digest)


async def test_damaged_bytes_are_refused_not_handed_out(services: Services) -> None:
    digest = await services.blobs.put(b"BEGIN:VCALENDAR\r\nEND:VCALENDAR\r\n")
    await services.db.execute("UPDATE blob SET data = $2 WHERE digest = $1", digest, b"BEGIN:VCALENDAR")
    with pytest.raises(CorruptBlobError, match="damaged"):
        await services.blobs.get(digest)
    with pytest.raises(ValueError, match="not a blob name"):
        await services.blobs.get("../../etc/passwd")


async def test_bytes_larger_than_one_statement_carries_are_still_stored(services: Services) -> None:
    big = [bytes([i]) * (STATEMENT_BYTES // 2 + 1) for i in range(3)]
    names = await services.blobs.put_many(big)
    assert await _rows(services) == 3
    assert [len(await services.blobs.get(n)) for n in names] == [len(b) for b in big]


async def test_files_of_earlier_versions_are_read_in_both_layouts_and_removed(services: Services,
                                                                               tmp_path: Path) -> None:
    root = tmp_path / "blobs"
    flat = hashlib.sha256(b"flat layout").hexdigest()
    nested = hashlib.sha256(b"two-level layout").hexdigest()
    (root / flat[:2]).mkdir(parents=True)
    (root / flat[:2] / flat).write_bytes(b"flat layout")
    (root / nested[:2] / nested[2:4]).mkdir(parents=True)
    (root / nested[:2] / nested[2:4] / nested).write_bytes(b"two-level layout")
    store = BlobStore(services.db, legacy_root=root)
    assert await store.get(flat) == b"flat layout"
    assert await store.get(nested) == b"two-level layout"
    assert await store.exists(nested) and await store.head(nested, 3) == b"two"
    assert await _rows(services) == 0  # reading never copies: nothing is written twice
    assert await store.put(b"new mail") == hashlib.sha256(b"new mail").hexdigest()
    assert await _rows(services) == 1 and not any(p.name.startswith(hashlib.sha256(b"new mail").hexdigest())
                                                  for p in root.rglob("*"))
    assert await store.discard([flat, nested]) == 2
    assert not list(root.rglob("*" + flat)) and not list(root.rglob("*" + nested))
    with pytest.raises(NotFoundError):
        await store.get(flat)


async def test_a_stored_message_keeps_its_original_and_its_parts(mailbox: Mailbox) -> None:
    mail = EmailMessage()
    mail["From"], mail["To"], mail["Subject"], mail["Message-ID"] = "a@example.org", "b@example.net", "Part", "<k@x>"
    mail.set_content("See the notes.")
    mail.add_attachment(b"the attachment", maintype="application", subtype="octet-stream", filename="notes.txt")
    raw = mail.as_bytes()
    result = await mailbox.services.pipeline.ingest([mailbox.message(raw, source_ref="1")])
    assert result.stored == 1
    row = await mailbox.services.db.fetchrow("SELECT raw_path FROM message")
    assert row is not None and await mailbox.services.blobs.get(row["raw_path"]) == raw
    part = await mailbox.services.db.fetchval("SELECT sha256 FROM message_part WHERE filename = 'notes.txt'")
    assert await mailbox.services.blobs.get(part) == b"the attachment"
    stored = await _rows(mailbox.services)
    # the same bytes stored as a second message (an mbox with the mail twice) share the blobs
    again = await mailbox.services.pipeline.ingest([mailbox.message(raw, source_ref="2")])
    assert again.stored == 1 and await _rows(mailbox.services) == stored == 2


async def test_the_sweep_removes_only_bytes_nothing_names_and_spares_recent_ones(mailbox: Mailbox) -> None:
    services = mailbox.services
    other = await mailbox.new_account("Second")
    shared = make_message(message_id="shared@x", subject="In both accounts")
    only_here = make_message(message_id="gone@x", subject="Only in the removed account")
    await services.pipeline.ingest([mailbox.message(shared, source_ref="1"),
                                    mailbox.message(only_here, source_ref="2")])
    await services.pipeline.ingest([mailbox.message(shared, account_id=other, source_ref="1")])
    upload = await services.blobs.put(b"uploaded and never imported")
    stray = await services.blobs.put(b"written a moment ago, its row not yet committed")
    await services.providers.get(ImapAccountService).remove(mailbox.user.id, mailbox.account_id)
    # Everything but the stray bytes was written long ago; the stray ones are within the grace period.
    await services.db.execute("UPDATE blob SET created_at = now() - interval '2 hours' WHERE digest <> $1", stray)
    assert await services.blobs.sweep() == 2  # the removed account's own mail, and the bytes nobody uploaded
    assert await services.blobs.get(hashlib.sha256(shared).hexdigest()) == shared  # the second account's copy
    assert not await services.blobs.exists(hashlib.sha256(only_here).hexdigest())
    assert await services.blobs.exists(stray)
    assert not await services.blobs.exists(upload)  # put without an upload row: nothing names it


async def test_storing_known_bytes_again_dates_them_so_the_sweep_spares_them(services: Services) -> None:
    digest = await services.blobs.put(b"about to be named again")
    await services.db.execute("UPDATE blob SET created_at = now() - interval '2 hours'")
    await services.blobs.put_many([b"about to be named again"])
    assert await services.blobs.sweep() == 0 and await services.blobs.exists(digest)


async def test_files_of_earlier_versions_move_into_the_database_and_damaged_ones_are_set_aside(
        services: Services, tmp_path: Path) -> None:
    root = tmp_path / "blobs"
    contents = [b"flat %d" % i for i in range(5)] + [b"nested %d" % i for i in range(5)]
    for i, data in enumerate(contents):
        digest = hashlib.sha256(data).hexdigest()
        folder = root / digest[:2] if i < 5 else root / digest[:2] / digest[2:4]
        folder.mkdir(parents=True, exist_ok=True)
        (folder / digest).write_bytes(data)
    damaged = hashlib.sha256(b"what it was").hexdigest()
    (root / damaged[:2]).mkdir(exist_ok=True)
    (root / damaged[:2] / damaged).write_bytes(b"what it became")
    (root / ".layout-flat").touch()
    store = BlobStore(services.db, legacy_root=root)
    first = await store.absorb_legacy_files(limit=4)  # a bounded batch; the damaged file may be one of the four
    assert first in (3, 4) and await _rows(services) == first
    while await store.absorb_legacy_files(limit=4):
        pass
    assert await _rows(services) == 10
    assert [await store.get(hashlib.sha256(d).hexdigest()) for d in contents] == contents
    assert not [p for p in root.rglob("*") if p.is_file() and p.name != ".layout-flat"
                and not p.name.endswith(".damaged")]
    assert (root / damaged[:2] / f"{damaged}.damaged").read_bytes() == b"what it became"
    assert not await store.exists(damaged)
    assert await store.absorb_legacy_files() == 0
    assert not [p for p in root.iterdir() if p.is_dir() and p.name != damaged[:2]]  # emptied folders are gone
