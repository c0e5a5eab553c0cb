"""`plmail account add-imap` tests the sign-in before saving and stores the password sealed; `plmail sync`
without --wait hands the sync to the workers."""

from __future__ import annotations

import os
import subprocess
import sys

from plmail.config import Settings
from plmail.providers.imap.session import ImapConnector
from plmail.services import Services
from tests.support.dovecot import DovecotUser
from tests.support.repos import account_admin


def _run(settings: Settings, database_url: str, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PLMAIL_")}
    env.update(PLMAIL_DATA_DIR=str(settings.data_dir), PLMAIL_DATABASE_URL=database_url)
    return subprocess.run([sys.executable, "-m", "plmail.cli", *args], env=env, input=stdin, capture_output=True,
                          text=True, timeout=60)


async def test_account_add_imap_checks_the_password_and_seals_it(
    services: Services, settings: Settings, database_url: str, dovecot_user: DovecotUser,
) -> None:
    await services.users.create_user("cli@example.org", "correct horse")
    server = dovecot_user.imap()
    args = ["account", "add-imap", "--user", "cli@example.org", "--host", server.host, "--port", str(server.port),
            "--tls", "none", "--username", dovecot_user.name, "--email", "me@example.org", "--password-stdin"]
    wrong = _run(settings, database_url, *args, stdin="not the password\n")
    assert wrong.returncode == 2 and "refused the sign-in" in wrong.stderr
    assert await services.db.fetchval("SELECT count(*) FROM account") == 0
    plain = _run(settings, database_url, *args[:-1])
    assert plain.returncode == 2 and "--password-stdin" in plain.stderr

    added = _run(settings, database_url, *args, stdin=dovecot_user.password + "\n")
    assert added.returncode == 0, added.stderr
    row = await services.db.fetchrow("SELECT id, email, username, credentials, settings FROM account")
    assert row is not None and f"added account {row['id']}" in added.stdout
    assert row["email"] == "me@example.org" and row["username"] == dovecot_user.name
    assert dovecot_user.password.encode() not in row["credentials"]
    record = await account_admin(services).for_job(row["id"])
    assert record is not None and services.providers.get(ImapConnector).password(record) == dovecot_user.password

    queued = _run(settings, database_url, "sync", "--account", str(row["id"]))
    assert queued.returncode == 0 and "queued" in queued.stdout
    jobs = await services.db.fetch("SELECT convert_from(job, 'UTF8')::jsonb ->> 'function' AS f FROM saq_jobs")
    assert [r["f"] for r in jobs].count("sync_account") == 2  # one from adding, one from the command
    missing = _run(settings, database_url, "sync", "--account", "999")
    assert missing.returncode == 2 and "no account 999" in missing.stderr
