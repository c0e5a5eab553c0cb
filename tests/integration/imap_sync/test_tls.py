"""Accounts over STARTTLS and implicit TLS (a self-hosted CA given on the command line), and no plaintext
password to anywhere but this machine."""

from __future__ import annotations

import dataclasses

import pytest

from plmail.config import Settings
from plmail.domain.account_services import MailServerAccountInput, TlsMode
from plmail.providers.imap import ImapTlsError
from plmail.providers.imap.accounts import ImapAccountService
from plmail.services import Services
from tests.integration.imap_sync.test_cli import _run
from tests.support.dovecot import DovecotUser
from tests.support.imap_mail import message


async def test_starttls_account_from_the_command_line_syncs(
    services: Services, settings: Settings, database_url: str, dovecot_tls_user: DovecotUser,
) -> None:
    await services.users.create_user("tls@example.org", "correct horse")
    dovecot_tls_user.deliver([message(i) for i in range(1, 31)])
    server = dovecot_tls_user.imap(TlsMode.STARTTLS)
    assert server.ca_file is not None
    added = _run(settings, database_url, "account", "add-imap", "--user", "tls@example.org", "--host", "localhost",
                 "--port", str(server.port), "--tls", "starttls", "--username", dovecot_tls_user.name,
                 "--ca-file", str(server.ca_file), "--password-stdin", stdin=dovecot_tls_user.password + "\n")
    assert added.returncode == 0, added.stderr
    account_id = int(added.stdout.split()[2].rstrip(";"))
    final = await services.sync.run_until_done(account_id)
    assert final is not None and final.done == 30


async def test_implicit_tls_and_the_loopback_rule(services: Services, dovecot_tls_user: DovecotUser) -> None:
    user = await services.users.create_user("tls2@example.org", "correct horse")
    server = dovecot_tls_user.imap(TlsMode.IMPLICIT)
    imap = services.providers.get(ImapAccountService)
    base = MailServerAccountInput(email="me@example.org", host="localhost", port=server.port, tls="implicit",
                            username=dovecot_tls_user.name, password=dovecot_tls_user.password)
    with pytest.raises(ImapTlsError):  # the system store does not know the test CA
        await imap.test(base, user_id=None)
    report = await imap.test(dataclasses.replace(base, ca_file=str(server.ca_file)), user_id=None)
    assert report.tls_version is not None and report.tls_version.startswith("TLS")
    with pytest.raises(ImapTlsError, match="without encryption"):
        await imap.add(user.id, MailServerAccountInput(email="me@example.org", host="imap.example.org", port=143,
                                                 tls="none", username="me", password="secret"))
    assert await services.accounts.for_user(user.id) == []

