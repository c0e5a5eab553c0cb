"""Adding, editing, pausing and removing IMAP accounts, and choosing which folders sync.

The password is checked against the server before anything is saved, and stored only sealed with the
installation key. Every call is for one user and touches only that user's accounts. A connection a user asks
for passes the connection-test gate first (accounts/connection_tests.py: mail ports only, ten a minute), and
what the server answered is summarised, never echoed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from plmail.accounts.connection_tests import ConnectionTestGate
from plmail.accounts.importing import MailImporter
from plmail.accounts.sync import AccountSyncService
from plmail.db.repos.account_admin import AccountAdminRepository, AccountRecord
from plmail.domain.account_services import MailServerAccountInput, Suggestion, TlsMode
from plmail.domain.enums import AccountStatus, ProviderKind
from plmail.domain.errors import NotFoundError, ValidationError
from plmail.domain.outgoing import SendError
from plmail.domain.providers import ImportProgress
from plmail.providers.imap.autoconfig import MailDiscovery
from plmail.providers.imap.errors import ImapError
from plmail.providers.imap.folders import import_rank
from plmail.providers.imap.presets import PRESETS, domain_of
from plmail.providers.imap.repos.mailboxes import MailboxRepository, MailboxRow
from plmail.providers.imap.session import ConnectionReport, ImapConnector, ImapSettings, try_login
from plmail.providers.imap.smtp import SmtpLogin, SmtpSettings, smtp_settings, test_smtp

TEST_TIMEOUT = 20.0
_SMTP_PORTS = {TlsMode.IMPLICIT: 465, TlsMode.STARTTLS: 587, TlsMode.NONE: 25}


def imap_settings(data: MailServerAccountInput, keep: ImapSettings | None = None) -> ImapSettings:
    host = data.host.strip()
    if not host:
        raise ValidationError("Enter the IMAP server's name.")
    if not 0 < data.port < 65536:
        raise ValidationError("The port must be between 1 and 65535.")
    try:
        tls = TlsMode(data.tls)
    except ValueError:
        raise ValidationError("Choose implicit TLS, STARTTLS or no encryption.") from None
    ignored = keep.ignore_capabilities if keep is not None else frozenset()
    ca_file = data.ca_file if data.ca_file is not None else (keep.ca_file if keep is not None else None)
    return ImapSettings(host, data.port, tls, ignored, ca_file or None)


def smtp_of(data: MailServerAccountInput, keep: SmtpSettings | None = None) -> SmtpSettings | None:
    """The SMTP server to send through: as given, else the known provider's (when the IMAP server is that
    provider's), else what was stored."""
    host = data.smtp_host.strip()
    ca_file = data.ca_file if data.ca_file is not None else (keep.ca_file if keep is not None else None)
    if not host:
        known = PRESETS.get(domain_of(data.email))
        if known is not None and known.smtp is not None and known.host == data.host.strip().lower():
            preset = known.smtp
            return SmtpSettings(preset.host, preset.port, preset.tls, data.smtp_username.strip() or None,
                                None, preset.files_sent)
        return keep
    try:
        tls = TlsMode(data.smtp_tls or TlsMode.STARTTLS.value)
    except ValueError:
        raise ValidationError("Choose implicit TLS, STARTTLS or no encryption for SMTP.",
                              field="smtp_tls") from None
    files_sent = keep.files_sent if keep is not None and keep.host == host else False
    return SmtpSettings(host, data.smtp_port or _SMTP_PORTS[tls], tls, data.smtp_username.strip() or None,
                        ca_file or None, files_sent).check()


def smtp_login(data: MailServerAccountInput, settings: SmtpSettings, password: str) -> SmtpLogin:
    return SmtpLogin(settings.username or data.login, data.smtp_password or password)


@dataclass(frozen=True, slots=True)
class AccountOverview:
    account: AccountRecord
    settings: ImapSettings | None
    folders: list[MailboxRow]
    progress: ImportProgress | None
    smtp: SmtpSettings | None = None
    send_problem: str | None = None  # why the last send could not sign in, until the settings change


class ImapAccountService:
    def __init__(self, accounts: AccountAdminRepository, mailboxes: MailboxRepository, connector: ImapConnector,
                 sync: AccountSyncService, importer: MailImporter, gate: ConnectionTestGate, *,
                 changed: Callable[[], None] | None = None, discovery: MailDiscovery | None = None) -> None:
        self.gate = gate
        self.discovery = discovery or MailDiscovery()
        self.accounts = accounts
        self.mailboxes = mailboxes
        self.connector = connector
        self.sync = sync
        self.importer = importer
        self.changed = changed or (lambda: None)

    async def test(self, data: MailServerAccountInput, *, user_id: int | None, password: str | None = None,
                   keep: ImapSettings | None = None, keep_smtp: SmtpSettings | None = None,
                   smtp_password: str | None = None) -> ConnectionReport:
        """Connect and sign in once to IMAP and, when one is set, to SMTP, for `user_id` (None: the operator at the
        command line, who is not limited); raises an error meant for the user, in plmail's words only."""
        settings = imap_settings(data, keep)
        secret = password if password is not None else data.password
        if not secret:
            raise ValidationError("Enter the password.")
        smtp = smtp_of(data, keep_smtp)
        if user_id is not None:  # both ports pass the gate before anything connects; one test counts once
            await self.gate.admit(user_id, settings.port, *([smtp.port] if smtp is not None else []))
        try:
            report = await try_login(settings.server(timeout=TEST_TIMEOUT), data.login, secret)
        except ImapError as exc:
            raise (exc.summarised() if user_id is not None else exc) from None
        if smtp is None:
            return report
        login = smtp_login(data, smtp, smtp_password or secret)
        try:
            return replace(report, smtp=await test_smtp(smtp, login))
        except SendError as exc:
            said = str(exc) if user_id is None else summarised_send_error(exc)
            raise ValidationError(f"SMTP ({smtp.host}:{smtp.port}): {said}", field="smtp_host") from None

    async def test_existing(self, user_id: int, account_id: int, data: MailServerAccountInput) -> ConnectionReport:
        """Test edited settings; a blank password means the stored one."""
        record = await self._owned(user_id, account_id)
        keep = ImapSettings.from_json(record.imap) if record.imap else None
        return await self.test(data, user_id=user_id, password=data.password or self.connector.password(record),
                               keep=keep, keep_smtp=smtp_settings(record),
                               smtp_password=self.connector.smtp_password(record))

    async def add(self, user_id: int, data: MailServerAccountInput, *, operator: bool = False) -> int:
        """With `operator` (the command line), the connection test is not limited to the mail ports."""
        email = data.checked_email()
        settings = imap_settings(data)
        smtp = smtp_of(data)
        await self.test(data, user_id=None if operator else user_id)
        stored: dict[str, Any] = {"imap": settings.as_json()}
        if smtp is not None:
            stored["smtp"] = smtp.as_json()
        account_id = await self.accounts.create(
            user_id=user_id, provider_kind=ProviderKind.IMAP, name=data.name.strip() or email, email=email,
            username=data.login, credentials=self.connector.seal(data.password, data.smtp_password), settings=stored,
        )
        await self.sync.request(account_id)
        self.changed()
        return account_id

    async def update(self, user_id: int, account_id: int, data: MailServerAccountInput, *,
                     operator: bool = False) -> None:
        """New settings are tested before they are saved; saving gives a failed account another chance."""
        record = await self._owned(user_id, account_id)
        email = data.checked_email()
        keep = ImapSettings.from_json(record.imap) if record.imap else None
        keep_smtp = smtp_settings(record)
        settings = imap_settings(data, keep)
        smtp = smtp_of(data, keep_smtp)
        password = data.password or self.connector.password(record)
        smtp_password = data.smtp_password or self.connector.smtp_password(record)
        await self.test(data, user_id=None if operator else user_id, password=password, keep=keep,
                        keep_smtp=keep_smtp, smtp_password=smtp_password)
        stored: dict[str, Any] = {"imap": settings.as_json(), "send_problem": None}
        if smtp is not None:
            stored["smtp"] = smtp.as_json()
        await self.accounts.update_connection(
            user_id, account_id, name=data.name.strip() or email, email=email, username=data.login,
            settings=stored,
            credentials=self.connector.seal(password, smtp_password) if data.password or data.smtp_password else None,
        )
        await self.sync.resume(account_id)
        self.changed()

    async def set_active(self, user_id: int, account_id: int, active: bool) -> None:
        if not await self.accounts.set_active(user_id, account_id, active):
            raise NotFoundError("No such account.")
        if active:
            await self.sync.resume(account_id)
        self.changed()

    async def remove(self, user_id: int, account_id: int) -> None:
        """The account goes, and its mail, threads and folders with it; the user's labels stay."""
        if not await self.accounts.delete(user_id, account_id):
            raise NotFoundError("No such account.")
        self.changed()

    async def set_folder_sync(self, user_id: int, account_id: int, mailbox_id: int, enabled: bool) -> None:
        if not await self.mailboxes.set_sync_enabled(user_id, account_id, mailbox_id, enabled):
            raise NotFoundError("No such folder.")
        if enabled:
            await self.sync.request(account_id)
        self.changed()

    async def overview(self, user_id: int, account_id: int) -> AccountOverview:
        record = await self._owned(user_id, account_id)
        folders = sorted(await self.mailboxes.owned(user_id, account_id), key=import_rank)
        settings = ImapSettings.from_json(record.imap) if record.imap else None
        problem = record.settings.get("send_problem")
        return AccountOverview(record, settings, folders, await self.importer.progress(account_id),
                               smtp=smtp_settings(record), send_problem=str(problem) if problem else None)

    async def progress(self, user_id: int, account_id: int) -> ImportProgress | None:
        await self._owned(user_id, account_id)
        return await self.importer.progress(account_id)

    async def request_sync(self, user_id: int, account_id: int) -> None:
        await self._owned(user_id, account_id)
        await self.sync.request(account_id)

    async def retry(self, user_id: int, account_id: int) -> None:
        """Sync again now. An account that stopped (a refused sign-in) is given one more try; what went wrong stays
        shown until a sync works."""
        record = await self._owned(user_id, account_id)
        if record.status is AccountStatus.AUTH_FAILED:
            await self.accounts.set_status(account_id, AccountStatus.OK, record.status_detail)
        await self.sync.resume(account_id)
        self.changed()

    async def _owned(self, user_id: int, account_id: int) -> AccountRecord:
        record = await self.accounts.owned(user_id, account_id)
        if record is None:
            raise NotFoundError("No such account.")
        return record

    async def suggest(self, email: str) -> Suggestion | None:
        """The servers for an address: the provider's autoconfig file, its SRV records, a known preset or the
        usual guess (autoconfig.py), with a note on where they came from."""
        found = await self.discovery.discover(email)
        if found is None:
            return None
        preset, smtp = found.server, found.server.smtp
        data = MailServerAccountInput(email=email, host=preset.host, port=preset.port, tls=preset.tls.value,
                                username=found.username, smtp_host=smtp.host if smtp else "",
                                smtp_port=smtp.port if smtp else None, smtp_tls=smtp.tls.value if smtp else "")
        return Suggestion(data, found.source, preset.note or _SOURCE_NOTES.get(found.source, ""))


_SOURCE_NOTES = {"autoconfig": "Filled in from the settings your provider publishes.",
                 "srv": "Filled in from your provider's DNS records."}


def summarised_send_error(error: SendError) -> str:
    """plmail's words of an SMTP error without what the server said: the part before the first ": " (the messages
    of providers/imap/smtp.py put the server's reply, or the system's, after it)."""
    return str(error).split(": ", 1)[0].rstrip(".") + "."
