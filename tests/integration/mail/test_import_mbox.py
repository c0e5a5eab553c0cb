"""`plmail import-mbox` as a user runs it: progress, counts, resumable without duplicates."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from plmail.mail.batching import RAW_BATCH_BYTES
from plmail.services import Services
from tests.support.imap_mail import large_message
from tests.support.mail import spamassassin

MB = 1024 * 1024


def _write_mbox(path: Path, messages: list[bytes]) -> None:
    with open(path, "wb") as out:
        for raw in messages:
            body = raw if raw.startswith(b"From ") else b"From sender@example.org Mon Jan  1 00:00:00 2024\n" + raw
            out.write(body.rstrip(b"\n") + b"\n\n")


def _cli(tmp_path: Path, database_url: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PLMAIL_")}
    env.update({"PLMAIL_DATABASE_URL": database_url, "PLMAIL_DATA_DIR": str(tmp_path / "data")})
    return subprocess.run([sys.executable, "-m", "plmail.cli", *args], env=env, capture_output=True, text=True,
                          timeout=300)


async def test_import_mbox_counts_resumes_and_never_duplicates(tmp_path: Path, database_url: str,
                                                               services: Services) -> None:
    await services.users.create_user("takeout@example.org", "correct horse")
    messages = [raw for _, raw in spamassassin("easy_ham")][:600]
    full = tmp_path / "All mail.mbox"
    _write_mbox(full, messages)
    partial = tmp_path / "partial.mbox"
    _write_mbox(partial, messages[:250])  # what an interrupted run got through

    first = _cli(tmp_path, database_url, "import-mbox", str(partial), "--user", "takeout@example.org",
                 "--label", "All mail")
    assert first.returncode == 0, first.stderr
    assert first.stdout.startswith("imported 250, duplicates 0, skipped 0")
    assert "importing" in first.stderr  # the progress line

    resumed = _cli(tmp_path, database_url, "import-mbox", str(full), "--user", "takeout@example.org")
    assert resumed.returncode == 0, resumed.stderr
    assert resumed.stdout.startswith("imported 350, duplicates 250, skipped 0")
    assert await services.db.fetchval("SELECT count(*) FROM message") == 600
    assert await services.db.fetchval("SELECT count(DISTINCT content_hash) FROM message") == 600
    label = await services.db.fetchval("SELECT count(*) FROM label WHERE name = 'All mail'")
    assert label == 1  # --label and the default (the file name) name the same label
    unlabelled = await services.db.fetchval(
        "SELECT count(*) FROM message m WHERE NOT EXISTS (SELECT 1 FROM message_label ml WHERE ml.message_id = m.id)")
    assert unlabelled == 0  # every message lives somewhere

    again = _cli(tmp_path, database_url, "import-mbox", str(full), "--user", "takeout@example.org")
    assert again.stdout.startswith("imported 0, duplicates 600, skipped 0")


async def test_import_maps_takeout_labels_and_refuses_bad_input(tmp_path: Path, database_url: str,
                                                                 services: Services) -> None:
    user = await services.users.create_user("g@example.org", "correct horse")
    mbox = tmp_path / "takeout.mbox"
    mbox.write_bytes(
        b"From 1@xxx Mon Apr 24 14:31:33 +0000 2023\n"
        b"X-Gmail-Labels: Inbox,Unread,Category Promotions,Work/Invoices\nMessage-ID: <t1@x>\n"
        b"From: shop@example.org\nSubject: Sale\n\nbody\n\n"
        b"From 2@xxx Mon Apr 24 15:31:33 +0000 2023\nX-Gmail-Labels: Sent,Opened\nMessage-ID: <t2@x>\n"
        b"From: g@example.org\nTo: friend@example.net\nSubject: Hi\n\nbody\n"
    )
    report = await services.archive_importer.import_path(user, mbox)
    assert (report.imported, report.duplicates, report.skipped) == (2, 0, 0)
    rows = await services.db.fetch(
        """SELECT m.rfc_message_id, m.category, m.seen_at IS NULL AS unread,
                  array_agg(l.name ORDER BY l.name) AS labels
             FROM message m JOIN message_label ml ON ml.message_id = m.id JOIN label l ON l.id = ml.label_id
            GROUP BY m.id ORDER BY m.rfc_message_id""")
    sale, hi = rows
    assert (sale["category"], sale["unread"]) == ("promotions", True)  # Gmail's own verdict, from the archive
    assert sale["labels"] == ["Inbox", "Invoices", "takeout"]
    parent = await services.db.fetchval(
        "SELECT p.name FROM label c JOIN label p ON p.id = c.parent_id WHERE c.name = 'Invoices'")
    assert parent == "Work"
    assert (hi["labels"], hi["unread"]) == (["Sent", "takeout"], False)
    missing = _cli(tmp_path, database_url, "import-mbox", str(tmp_path / "nope.mbox"), "--user", "g@example.org")
    assert missing.returncode == 2 and "does not exist" in missing.stderr
    nobody = _cli(tmp_path, database_url, "import-mbox", str(mbox), "--user", "nobody@example.org")
    assert nobody.returncode == 2 and "No user with the address nobody@example.org" in nobody.stderr


async def test_an_archive_of_large_mail_is_stored_in_batches_bounded_by_bytes(tmp_path: Path,
                                                                           services: Services) -> None:
    user = await services.users.create_user("scans@example.org", "correct horse")
    mbox = tmp_path / "scans.mbox"
    _write_mbox(mbox, [large_message(n, 12 * MB) for n in range(5)] + [large_message(9, 1_000)])
    report = await services.archive_importer.import_path(user, mbox)
    assert (report.imported, report.duplicates, report.skipped) == (6, 0, 0)
    # Each pipeline batch is one transaction, and its JMAP creates carry that transaction's time.
    rows = await services.db.fetch(
        """SELECT count(*) FILTER (WHERE m.size > $1) AS scans, sum(m.size) AS bytes
             FROM jmap_change_log c JOIN message m ON m.id::text = c.entity_id
            WHERE c.object_type = 'Email' AND c.change_type = 'created' GROUP BY c.created_at""", MB)
    assert [r["scans"] for r in sorted(rows, key=lambda r: -r["scans"])] == [2, 2, 1]
    assert all(r["bytes"] <= RAW_BATCH_BYTES for r in rows)
