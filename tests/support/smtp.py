"""The suite's SMTP server: aiosmtpd on a free loopback port, AUTH PLAIN/LOGIN required, STARTTLS (or implicit
TLS) with a throwaway certificate, recording every message it accepts.

Faults a real submission server shows are switched on per test: a 421 for the next N transactions, a 550
for chosen recipients, the connection dropped after the final dot (the message received, the reply never
sent), and a slow answer.
"""

from __future__ import annotations

import asyncio
import email
import email.policy
import logging
import re
import shutil
import ssl
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from email.message import EmailMessage, Message
from pathlib import Path
from typing import Any

import pytest
from aiosmtpd.controller import Controller
from aiosmtpd.smtp import SMTP, AuthResult, Envelope, LoginPassword, Session, syntax

from tests.support.dovecot import make_tls_files
from tests.support.net import free_port

HOST = "127.0.0.1"
logging.getLogger("mail.log").setLevel(logging.ERROR)  # aiosmtpd warns of its own deprecations on every AUTH
USERNAME = "sender@example.org"
PASSWORD = "smtp secret"


@dataclass(frozen=True)
class Received:
    mail_from: str
    rcpt_to: tuple[str, ...]
    data: bytes
    at: float  # time.monotonic() when the final dot arrived

    @property
    def message(self) -> Message:
        return email.message_from_bytes(self.data, policy=email.policy.compat32)


@dataclass
class Faults:
    temporary_failures: int = 0  # the next N transactions get "421" at MAIL FROM
    rejected: set[str] = field(default_factory=set)  # RCPT TO these gets "550"
    drop_after_data: bool = False  # close the connection instead of answering the final dot
    delay: float = 0.0  # seconds before answering the final dot


class _Handler:
    def __init__(self, server: SmtpServer) -> None:
        self.server = server

    async def handle_MAIL(self, smtp: SMTP, session: Session, envelope: Envelope, address: str,
                          options: list[str]) -> str:
        faults = self.server.faults
        with self.server.lock:
            if faults.temporary_failures > 0:
                faults.temporary_failures -= 1
                return "421 4.3.2 Service not available, try again later"
        envelope.mail_from = address
        envelope.mail_options.extend(options)
        return "250 OK"

    async def handle_RCPT(self, smtp: SMTP, session: Session, envelope: Envelope, address: str,
                          options: list[str]) -> str:
        if address.lower() in {r.lower() for r in self.server.faults.rejected}:
            return f"550 5.1.1 <{address}>: Recipient address rejected: User unknown"
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, smtp: SMTP, session: Session, envelope: Envelope) -> str:
        data = envelope.original_content or envelope.content or b""
        assert isinstance(data, bytes)
        received = Received(str(envelope.mail_from), tuple(envelope.rcpt_tos), data, time.monotonic())
        with self.server.lock:
            self.server.received.append(received)
        self.server.arrived.set()
        faults = self.server.faults
        if faults.delay:
            await asyncio.sleep(faults.delay)
        if faults.drop_after_data:
            transport = smtp.transport
            assert isinstance(transport, asyncio.Transport)
            transport.abort()  # the message is here; the client never hears so
            return "250 OK"
        return "250 2.0.0 Ok: queued"


class _Smtp(SMTP):
    """aiosmtpd's session, also taking MAIL FROM's AUTH parameter, which a server offering AUTH must accept
    (RFC 4954 §5) and a relaying client such as Cyrus sends with every message."""

    @syntax("MAIL FROM: <address>", extended=" [SP <mail-parameters>]")
    async def smtp_MAIL(self, arg: str | None) -> None:
        await super().smtp_MAIL(re.sub(r"\s+AUTH=\S*", "", arg, flags=re.IGNORECASE) if arg else arg)


class _Controller(Controller):
    def factory(self) -> SMTP:
        return _Smtp(self.handler, **self.SMTP_kwargs)


class SmtpServer:
    def __init__(self, *, implicit_tls: bool = False, username: str = USERNAME, password: str = PASSWORD,
                 size_limit: int = 33_554_432) -> None:
        self.port = free_port()
        self.host = HOST
        self.implicit_tls = implicit_tls
        self.username = username
        self.password = self.initial_password = password
        self.faults = Faults()
        self.received: list[Received] = []
        self.logins: list[str] = []
        self.lock = threading.Lock()
        self.arrived = threading.Event()
        self.base = Path(tempfile.mkdtemp(prefix="plmail-test-smtp-"))
        self.ca_file = make_tls_files(self.base / "tls")
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(self.base / "tls" / "server.crt", self.base / "tls" / "server.key")
        self.context = context
        server: dict[str, Any] = {
            "auth_required": True, "auth_require_tls": True, "authenticator": self._authenticate,
            "data_size_limit": size_limit, "ident": "plmail test SMTP",
        }
        if not implicit_tls:
            server["tls_context"] = context
            server["require_starttls"] = True
        self.controller = _Controller(_Handler(self), hostname=HOST, port=self.port, server_hostname="localhost",
                                     ssl_context=context if implicit_tls else None, **server)

    def _authenticate(self, server: SMTP, session: Session, envelope: Envelope, mechanism: str,
                      auth_data: Any) -> AuthResult:
        if not isinstance(auth_data, LoginPassword):
            return AuthResult(success=False, handled=False)
        login = auth_data.login.decode()
        ok = login == self.username and auth_data.password.decode() == self.password
        with self.lock:
            self.logins.append(f"{mechanism}:{login}:{'ok' if ok else 'refused'}")
        return AuthResult(success=ok, handled=False)  # unhandled: aiosmtpd answers 535 itself

    def start(self) -> SmtpServer:
        self.controller.start()
        return self

    def stop(self) -> None:
        try:
            self.controller.stop()
        finally:  # its TLS files go even when the controller's loop is already gone
            shutil.rmtree(self.base, ignore_errors=True)

    def reset(self) -> None:
        with self.lock:
            self.received.clear()
            self.logins.clear()
            self.faults = Faults()
            self.arrived.clear()
            self.password = self.initial_password

    def wait_for(self, count: int = 1, timeout: float = 10.0) -> list[Received]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self.lock:
                if len(self.received) >= count:
                    return list(self.received)
            time.sleep(0.02)
        raise AssertionError(f"{len(self.received)} of {count} messages arrived at the SMTP server")

    async def arrival(self, count: int = 1, timeout: float = 10.0) -> list[Received]:
        """wait_for for code sharing the event loop with plmail's own workers."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self.lock:
                if len(self.received) >= count:
                    return list(self.received)
            await asyncio.sleep(0.002)
        raise AssertionError(f"{len(self.received)} of {count} messages arrived at the SMTP server")

    def settings(self, **overrides: Any) -> dict[str, Any]:
        """What an account's form or command line gives for this server."""
        values = {"smtp_host": self.host, "smtp_port": self.port,
                  "smtp_tls": "implicit" if self.implicit_tls else "starttls", "smtp_username": self.username,
                  "smtp_password": self.password}
        values.update(overrides)
        return values


@pytest.fixture(scope="session")
def smtp_server() -> Iterator[SmtpServer]:
    server = SmtpServer().start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def smtp(smtp_server: SmtpServer) -> Iterator[SmtpServer]:
    """The session's server, emptied and without faults for this test."""
    smtp_server.reset()
    yield smtp_server
    smtp_server.reset()


def confirmation_link(received: Received, address: str) -> str:
    """The confirmation link in the mail plmail sent to an alias (issue 39), as its reader would follow it."""
    assert address.lower() in (r.lower() for r in received.rcpt_to), received.rcpt_to
    message = email.message_from_bytes(received.data, policy=email.policy.default)
    assert isinstance(message, EmailMessage)
    body = message.get_body(("plain",))
    assert body is not None
    found = re.search(r"https?://\S+/identities/confirm/[A-Za-z0-9_-]+", body.get_content())
    assert found is not None, body.get_content()
    return found.group(0)

