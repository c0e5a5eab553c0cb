"""Sending for IMAP accounts: SMTP submission with aiosmtplib (port 465 implicit TLS, 587 STARTTLS, plain only
to this machine), AUTH with the account's credentials or separate SMTP ones.

Every failure is classified for the outbox. Before the server accepted DATA, nothing can have been
delivered: a 4xx reply, a refused connection or a timeout is temporary, a 5xx reply or a refused recipient
permanent. Once the body is being written the server may have taken it: a connection lost then is
"uncertain" and never retried blindly. That is why DATA is driven here, a step at a time, instead of through
`sendmail`, which cannot say in which phase it failed.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
import ssl
from dataclasses import dataclass
from typing import Any

import aiosmtplib

from plmail.db.repos.account_admin import AccountAdminRepository, AccountRecord
from plmail.domain.account_services import TlsMode
from plmail.domain.enums import ProviderKind
from plmail.domain.errors import CredentialError, ValidationError
from plmail.domain.ingest import ProviderRef
from plmail.domain.models import Account
from plmail.domain.outgoing import OutgoingMessage, SendError, SendFailure, SendReceipt
from plmail.keys import CredentialBox
from plmail.providers.network import is_local_host

log = logging.getLogger(__name__)

CONNECT_TIMEOUT = 20.0
COMMAND_TIMEOUT = 60.0
_LINE_START_DOT = re.compile(rb"(?m)^\.")
_LONE_LINE_END = re.compile(rb"\r\n|\r|\n")


@dataclass(frozen=True, slots=True)
class SmtpSettings:
    """How to reach an account's SMTP server, as stored in `account.settings["smtp"]`."""

    host: str
    port: int
    tls: TlsMode
    username: str | None = None  # None: the IMAP sign-in name
    ca_file: str | None = None
    files_sent: bool = False  # the server keeps its own Sent copy of what it sends

    @classmethod
    def from_json(cls, value: dict[str, Any]) -> SmtpSettings:
        try:
            return cls(host=str(value["host"]), port=int(value["port"]), tls=TlsMode(value.get("tls", "starttls")),
                       username=str(value["username"]) if value.get("username") else None,
                       ca_file=str(value["ca_file"]) if value.get("ca_file") else None,
                       files_sent=bool(value.get("files_sent", False)))
        except (KeyError, ValueError, TypeError) as exc:
            raise ValidationError(f"The account's SMTP settings are incomplete: {exc}", field="smtp") from None

    def as_json(self) -> dict[str, Any]:
        value: dict[str, Any] = {"host": self.host, "port": self.port, "tls": self.tls.value,
                                 "files_sent": self.files_sent}
        if self.username:
            value["username"] = self.username
        if self.ca_file:
            value["ca_file"] = self.ca_file
        return value

    def check(self) -> SmtpSettings:
        if not self.host.strip():
            raise ValidationError("Enter the SMTP server's name.", field="smtp_host")
        if not 0 < self.port < 65536:
            raise ValidationError("The SMTP port must be between 1 and 65535.", field="smtp_port")
        if self.tls is TlsMode.NONE and not is_local_host(self.host):
            raise ValidationError("An unencrypted SMTP connection is allowed only to this machine (localhost): the "
                                  "password would cross the network in clear text.", field="smtp_tls")
        return self


def smtp_settings(record: AccountRecord) -> SmtpSettings | None:
    value = record.settings.get("smtp")
    return SmtpSettings.from_json(value) if isinstance(value, dict) else None


def _tls_context(settings: SmtpSettings) -> ssl.SSLContext:
    try:
        context = ssl.create_default_context(cafile=settings.ca_file or None)
    except (OSError, ssl.SSLError) as exc:
        raise SendError(f"Cannot read the CA file {settings.ca_file}: {exc}", failure=SendFailure.PERMANENT) from exc
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    return context


def _stuffed(message: bytes) -> bytes:
    """RFC 5321 §4.5.2: CRLF line ends, a leading dot doubled, the terminating dot line appended."""
    body = _LONE_LINE_END.sub(b"\r\n", message)
    if not body.endswith(b"\r\n"):
        body += b"\r\n"
    return _LINE_START_DOT.sub(b"..", body) + b".\r\n"


def _failure(code: int) -> SendFailure:
    return SendFailure.TEMPORARY if 400 <= code < 500 else SendFailure.PERMANENT


@dataclass(frozen=True, slots=True)
class SmtpLogin:
    username: str
    password: str


class SmtpSession:
    """One submission over one connection, each phase classified."""

    def __init__(self, settings: SmtpSettings, login: SmtpLogin | None, *, timeout: float = COMMAND_TIMEOUT) -> None:
        self.settings = settings.check()
        self.login = login
        self.timeout = timeout
        context = _tls_context(settings) if settings.tls is not TlsMode.NONE else None
        self.client = aiosmtplib.SMTP(
            hostname=settings.host, port=settings.port, use_tls=settings.tls is TlsMode.IMPLICIT,
            start_tls=False, tls_context=context, timeout=timeout,
        )
        self.context = context

    async def open(self) -> None:
        """Connect, upgrade (STARTTLS) and sign in; every failure here happened before anything was sent."""
        server = f"{self.settings.host}:{self.settings.port}"
        try:
            await asyncio.wait_for(self.client.connect(timeout=CONNECT_TIMEOUT), CONNECT_TIMEOUT + 5)
        except (aiosmtplib.SMTPConnectError, aiosmtplib.SMTPTimeoutError, OSError, TimeoutError) as exc:
            raise SendError(f"Could not reach the SMTP server {server}: {exc}", failure=SendFailure.TEMPORARY) from exc
        except ssl.SSLError as exc:
            raise SendError(f"The TLS handshake with {server} failed: {exc}", failure=SendFailure.PERMANENT) from exc
        except aiosmtplib.SMTPResponseException as exc:
            raise SendError(f"The SMTP server {server} refused the connection: {exc.code} {exc.message}",
                            failure=_failure(exc.code)) from exc
        try:
            await self.client.ehlo()  # what the server offers (STARTTLS, AUTH, SIZE) is known only after EHLO
            if self.settings.tls is TlsMode.STARTTLS:
                if not self.client.supports_extension("starttls"):
                    raise SendError(f"The SMTP server {server} does not offer STARTTLS; plmail will not send the "
                                    f"password unencrypted.", failure=SendFailure.PERMANENT)
                await self.client.starttls(tls_context=self.context)
            if self.login is not None:
                await self.client.login(self.login.username, self.login.password)
        except aiosmtplib.SMTPAuthenticationError as exc:
            raise SendError(f"The SMTP server refused the sign-in: {exc.code} {exc.message}",
                            failure=SendFailure.PERMANENT, reason="authentication") from exc
        except aiosmtplib.SMTPResponseException as exc:
            raise SendError(f"The SMTP server refused: {exc.code} {exc.message}", failure=_failure(exc.code)) from exc
        except (aiosmtplib.SMTPException, OSError, TimeoutError) as exc:
            if isinstance(exc, ssl.SSLError):
                raise SendError(f"The TLS upgrade with {server} failed: {exc}", failure=SendFailure.PERMANENT) from exc
            raise SendError(f"The connection to {server} was lost: {exc}", failure=SendFailure.TEMPORARY) from exc

    async def submit(self, message: OutgoingMessage) -> SendReceipt:
        client = self.client
        size = len(message.wire)
        limit = client.esmtp_extensions.get("size", "") if client.esmtp_extensions else ""
        if limit.strip().isdigit() and 0 < int(limit) < size:
            raise SendError(f"The message ({size:,} bytes) is larger than the SMTP server accepts ({int(limit):,}).",
                            failure=SendFailure.PERMANENT, reason="tooLarge")
        try:
            await client.mail(message.envelope.mail_from, options=[f"SIZE={size}"] if limit else None)
        except aiosmtplib.SMTPSenderRefused as exc:
            raise SendError(f"The SMTP server refused the sender {message.envelope.mail_from}: {exc.code} "
                            f"{exc.message}", failure=_failure(exc.code), reason="forbiddenFrom") from exc
        except (aiosmtplib.SMTPException, OSError, TimeoutError) as exc:
            raise SendError(f"The connection was lost before sending: {exc}", failure=SendFailure.TEMPORARY) from exc
        replies: list[tuple[str, str]] = []
        refused: dict[str, tuple[int, str]] = {}
        for recipient in message.envelope.rcpt_to:
            try:
                response = await client.rcpt(recipient)
                replies.append((recipient, f"{response.code} {response.message}"))
            except aiosmtplib.SMTPRecipientRefused as exc:
                refused[recipient] = (exc.code, exc.message)
            except (aiosmtplib.SMTPException, OSError, TimeoutError) as exc:
                raise SendError(f"The connection was lost before sending: {exc}",
                                failure=SendFailure.TEMPORARY) from exc
        if refused:
            await self._reset()
            worst = max(code for code, _ in refused.values())
            reasons = "; ".join(f"{rcpt}: {code} {text}" for rcpt, (code, text) in refused.items())
            permanent = [r for r, (code, _) in refused.items() if code >= 500]
            raise SendError(f"The SMTP server refused recipients: {reasons}", failure=_failure(worst),
                            rejected=tuple(permanent), reason="invalidRecipients" if permanent else None)
        try:
            start = await client.execute_command(b"DATA")
        except (aiosmtplib.SMTPException, OSError, TimeoutError) as exc:
            raise SendError(f"The connection was lost before sending: {exc}", failure=SendFailure.TEMPORARY) from exc
        if start.code != 354:
            raise SendError(f"The SMTP server refused DATA: {start.code} {start.message}",
                            failure=_failure(start.code))
        # From here on the server may have the message: only its reply to the final dot tells.
        protocol = client.protocol
        try:
            if protocol is None:
                raise aiosmtplib.SMTPServerDisconnected("Connection lost")
            protocol.write(_stuffed(message.wire))
            final = await protocol.read_response(timeout=self.timeout)
        except (aiosmtplib.SMTPException, OSError, TimeoutError) as exc:
            client.close()
            raise SendError(f"The connection was lost after the message was handed over; it may have been sent "
                            f"({exc}).", failure=SendFailure.UNCERTAIN) from exc
        if final.code != 250:
            raise SendError(f"The SMTP server refused the message: {final.code} {final.message}",
                            failure=_failure(final.code))
        return SendReceipt(provider_files_copy=self.settings.files_sent,
                           replies=tuple((rcpt, f"{final.code} {final.message}") for rcpt, _ in replies))

    async def _reset(self) -> None:
        with contextlib.suppress(aiosmtplib.SMTPException, OSError, TimeoutError):
            await self.client.rset()

    async def close(self) -> None:
        try:
            if self.client.is_connected:
                await self.client.quit()
        except (aiosmtplib.SMTPException, OSError, TimeoutError):
            self.client.close()


async def test_smtp(settings: SmtpSettings, login: SmtpLogin | None) -> str:
    """Connect, upgrade and sign in once, for "test connection"; raises SendError with the reason."""
    session = SmtpSession(settings, login, timeout=20.0)
    try:
        await session.open()
        tls = "TLS" if settings.tls is not TlsMode.NONE else "no encryption"
        return f"{settings.host}:{settings.port} ({tls}) accepted the sign-in"
    finally:
        await session.close()


class SmtpTransport:
    """The IMAP plugin's mail transport."""

    kind = ProviderKind.IMAP

    def __init__(self, accounts: AccountAdminRepository, box: CredentialBox, *, timeout: float = COMMAND_TIMEOUT
                 ) -> None:
        self.accounts = accounts
        self.box = box
        self.timeout = timeout

    def login(self, record: AccountRecord, settings: SmtpSettings) -> SmtpLogin:
        if record.credentials is None:
            raise CredentialError("No password is stored for this account.")
        secrets = self.box.open(record.credentials)
        password = str(secrets.get("smtp_password") or secrets.get("password") or "")
        return SmtpLogin(settings.username or record.username or record.email, password)

    async def send(self, account: Account, message: OutgoingMessage, *, draft: ProviderRef | None) -> SendReceipt:
        record = await self.accounts.for_job(account.id)
        if record is None:
            raise SendError("The account was removed.", failure=SendFailure.PERMANENT)
        settings = smtp_settings(record)
        if settings is None:
            raise SendError("No SMTP server is set up for this account: add it on the account's page.",
                            failure=SendFailure.PERMANENT)
        try:
            session = SmtpSession(settings, self.login(record, settings), timeout=self.timeout)
        except (ValidationError, CredentialError) as exc:
            raise SendError(str(exc), failure=SendFailure.PERMANENT) from exc
        try:
            await session.open()
            receipt = await session.submit(message)
        except SendError as exc:
            if exc.reason == "authentication":
                await self.accounts.set_send_problem(account.id, str(exc))
            raise
        finally:
            await session.close()
        if record.settings.get("send_problem"):
            await self.accounts.set_send_problem(account.id, None)
        return receipt


