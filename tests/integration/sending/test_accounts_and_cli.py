"""SMTP on the IMAP account: "test connection" checks it too, `plmail account add-imap --smtp-…` stores it
(with a separate SMTP password sealed), `plmail outbox` lists what waits or went wrong, and a server that
files its own Sent copy gets no second one — sync adopts the copy it filed."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

from plmail.config import Settings
from plmail.domain.account_services import MailServerAccountInput
from plmail.domain.errors import ValidationError
from plmail.domain.messages import Address
from plmail.domain.outgoing import DraftContent, SubmissionState
from plmail.providers.imap.accounts import ImapAccountService
from plmail.services import Services
from tests.integration.imap_sync.test_cli import _run
from tests.integration.sending.conftest import Outgoing
from tests.support.dovecot import DovecotUser
from tests.support.smtp import SmtpServer


async def test_test_connection_checks_smtp_and_refuses_a_wrong_smtp_password(
    services: Services, dovecot_user: DovecotUser, smtp: SmtpServer
) -> None:
    user = await services.users.create_user("owner@example.org", "correct horse")
    server = dovecot_user.imap()
    base = dict(email="me@example.org", host=server.host, port=server.port, tls="none", username=dovecot_user.name,
                password=dovecot_user.password, ca_file=str(smtp.ca_file))
    accounts = services.providers.get(ImapAccountService)
    # As the operator (user_id None: not limited to the mail ports, errors in full); users: test_connection_gate.py
    report = await accounts.test(MailServerAccountInput(**base, **smtp.settings()), user_id=None)  # type: ignore[arg-type]
    assert report.smtp and "accepted the sign-in" in report.smtp
    with pytest.raises(ValidationError, match=r"SMTP .*refused the sign-in"):
        await accounts.add(user.id, MailServerAccountInput(**base, **smtp.settings(smtp_password="wrong")),  # type: ignore[arg-type]
                           operator=True)
    assert await services.db.fetchval("SELECT count(*) FROM account") == 0  # nothing saved
    with pytest.raises(ValidationError, match="only to this machine"):
        await accounts.test(MailServerAccountInput(**base, **smtp.settings(smtp_host="smtp.example.net",  # type: ignore[arg-type]
                                                                        smtp_tls="none")), user_id=None)


async def test_add_imap_with_smtp_from_the_command_line_and_the_outbox_listing(
    services: Services, settings: Settings, database_url: str, dovecot_user: DovecotUser, smtp: SmtpServer
) -> None:
    await services.users.create_user("cli@example.org", "correct horse")
    server = dovecot_user.imap()
    added = _run(settings, database_url, "account", "add-imap", "--user", "cli@example.org", "--host", server.host,
                 "--port", str(server.port), "--tls", "none", "--username", dovecot_user.name,
                 "--email", f"{dovecot_user.name}@example.org", "--ca-file", str(smtp.ca_file),
                 "--smtp-host", smtp.host, "--smtp-port", str(smtp.port), "--smtp-tls", "starttls",
                 "--smtp-username", smtp.username, "--password-stdin", "--smtp-password-stdin",
                 stdin=f"{dovecot_user.password}\n{smtp.password}\n")
    assert added.returncode == 0, added.stderr
    row = await services.db.fetchrow("SELECT id, user_id, settings FROM account")
    assert row is not None
    stored = json.loads(row["settings"]) if isinstance(row["settings"], str) else row["settings"]
    assert stored["smtp"]["host"] == smtp.host and stored["smtp"]["port"] == smtp.port
    assert stored["smtp"]["tls"] == "starttls" and stored["smtp"]["username"] == smtp.username
    empty = _run(settings, database_url, "outbox", "--user", "cli@example.org")
    assert empty.returncode == 0 and "the outbox is empty" in empty.stdout
    identity = await services.identities.primary(row["user_id"], row["id"])
    assert identity is not None
    saved = await services.drafts.save(row["user_id"], DraftContent(
        identity_id=identity.id, to=(Address("", "bea@example.net"),), subject="Later, please"))
    await services.outbox.submit(row["user_id"], saved.message_id, identity.id,
                                 send_at=datetime.now(UTC) + timedelta(days=1))
    listed = _run(settings, database_url, "outbox", "--user", "cli@example.org")
    assert listed.returncode == 0, listed.stderr
    assert "waiting" in listed.stdout and "bea@example.net" in listed.stdout and "Later, please" in listed.stdout


async def test_a_server_that_files_its_own_sent_copy_gets_no_second_one(outgoing: Outgoing) -> None:
    await outgoing.services.db.execute(
        "UPDATE account SET settings = jsonb_set(settings, '{smtp,files_sent}', 'true') WHERE id = $1",
        outgoing.account_id)
    submission = await outgoing.send(await outgoing.content(subject="Filed by the server"))
    assert submission.state is SubmissionState.SENT
    [received] = outgoing.smtp.wait_for(1)
    rfc_id = received.message["Message-ID"].strip()[1:-1]
    assert rfc_id not in outgoing.folder("Sent")  # plmail appended nothing
    outgoing.mail.append([received.data], "Sent", ["\\Seen"])  # what Gmail's or Outlook's SMTP does itself
    await outgoing.sync()
    rows = await outgoing.services.db.fetch(
        "SELECT id, mailbox_id, provider_key AS imap_uid FROM message WHERE account_id = $1 AND rfc_message_id = $2",
        outgoing.account_id, rfc_id)
    sent_folder = await outgoing.services.db.fetchval(
        "SELECT id FROM mailbox WHERE account_id = $1 AND full_path = 'Sent'", outgoing.account_id)
    # Stored once, and now known by the copy the server filed (so its flags and moves reach it).
    assert len(rows) == 1 and rows[0]["mailbox_id"] == sent_folder and rows[0]["imap_uid"] is not None
