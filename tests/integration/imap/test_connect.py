"""Connecting and signing in: TLS modes, password mechanisms, refusals, timeouts."""

from __future__ import annotations

import asyncio
import base64
import time
from collections.abc import AsyncIterator

import pytest

from plmail.domain.account_services import TlsMode
from plmail.providers.imap import (
    ImapAuthError,
    ImapClient,
    ImapConnectionError,
    ImapServer,
    ImapTlsError,
)
from tests.support.dovecot import DovecotServer, DovecotUser
from tests.support.imap_proxy import imap_proxy
from tests.support.net import free_port


async def test_login_with_password_enables_condstore(dovecot_user: DovecotUser) -> None:
    async with ImapClient(dovecot_user.imap()) as client:
        await client.login(dovecot_user.name, dovecot_user.password, mechanism="login")
        assert client.has("IMAP4rev1")
        assert client.has("UIDPLUS")  # post-login capabilities were read again
        assert client.condstore  # QRESYNC enabled before any SELECT
        state = await client.select("INBOX")
        assert state.highestmodseq is not None
        assert client.tls_version is None


@pytest.mark.parametrize("mechanism", ["login", "plain"])
async def test_wrong_password_is_an_auth_error(dovecot_user: DovecotUser, mechanism: str) -> None:
    async with ImapClient(dovecot_user.imap()) as client:
        with pytest.raises(ImapAuthError) as caught:
            await client.login(dovecot_user.name, "not the password", mechanism=mechanism)  # type: ignore[arg-type]
    assert caught.value.code == "AUTHENTICATIONFAILED"
    assert not caught.value.retryable
    assert dovecot_user.name in str(caught.value)


@pytest.mark.parametrize("ignore", [frozenset(), frozenset({"SASL-IR"})], ids=["initial-response", "continuation"])
async def test_authenticate_plain(dovecot: DovecotServer, ignore: frozenset[str]) -> None:
    # a password LOGIN could not carry: AUTHENTICATE PLAIN sends UTF-8 as is
    user = dovecot.add_user(password="pässwörd ✓ \"quoted\"")
    async with ImapClient(user.imap(ignore_capabilities=ignore)) as client:
        assert client.has("SASL-IR") is not bool(ignore)
        await client.login(user.name, user.password, mechanism="plain")
        assert (await client.select("INBOX")).exists == 0


async def test_starttls_with_trusted_ca(dovecot_tls_user: DovecotUser) -> None:
    user = dovecot_tls_user
    async with ImapClient(user.imap(TlsMode.STARTTLS)) as client:
        assert client.tls_version in {"TLSv1.2", "TLSv1.3"}
        assert not client.has("LOGINDISABLED")  # capabilities re-read after the upgrade
        await client.login(user.name, user.password)
        await client.append("INBOX", b"Subject: over TLS\r\n\r\nhi\r\n")
        await client.select("INBOX")
        assert len(await client.uid_search()) == 1


async def test_implicit_tls_with_trusted_ca(dovecot_tls_user: DovecotUser) -> None:
    user = dovecot_tls_user
    async with ImapClient(user.imap(TlsMode.IMPLICIT)) as client:
        assert client.tls_version in {"TLSv1.2", "TLSv1.3"}
        await client.login(user.name, user.password)
        assert {m.path for m in await client.list_mailboxes()} >= {"INBOX", "Sent"}


@pytest.mark.parametrize("mode", [TlsMode.STARTTLS, TlsMode.IMPLICIT])
async def test_untrusted_certificate_is_refused(dovecot_tls: DovecotServer, mode: TlsMode) -> None:
    server = dovecot_tls.imap(mode, ca_file=None)  # the system store does not know our test CA
    with pytest.raises(ImapTlsError, match="not trusted"):
        await ImapClient(server).connect()


async def test_password_refused_before_encryption() -> None:
    """A server that advertises LOGINDISABLED (Dovecot counts loopback as secure, so a script plays it):
    we say why instead of sending the password."""
    received: list[bytes] = []

    async def accept(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(b"* OK ready\r\n")
        while line := await reader.readline():
            received.append(line)
            tag = line.split()[0]
            if b"CAPABILITY" in line:
                writer.write(b"* CAPABILITY IMAP4rev1 STARTTLS LOGINDISABLED\r\n" + tag + b" OK done\r\n")
            else:
                writer.write(tag + b" BAD unexpected\r\n")
            await writer.drain()

    server = await asyncio.start_server(accept, "127.0.0.1", 0)
    try:
        port = server.sockets[0].getsockname()[1]
        async with ImapClient(ImapServer("127.0.0.1", port, TlsMode.NONE)) as client:
            with pytest.raises(ImapAuthError, match="unencrypted"):
                await client.login("someone", "secret")
        assert not any(b"secret" in line for line in received)
    finally:
        server.close()


@pytest.mark.parametrize("host", ["192.0.2.10", "mail.example.com", "10.0.0.1", "::ffff:192.0.2.1"])
async def test_plain_connection_only_to_loopback(host: str) -> None:
    started = time.monotonic()
    with pytest.raises(ImapTlsError, match="without encryption"):
        await ImapClient(ImapServer(host=host, port=143, tls=TlsMode.NONE, connect_timeout=5)).connect()
    assert time.monotonic() - started < 0.5  # decided before any connection attempt


async def test_refused_port_is_a_connection_error() -> None:
    with pytest.raises(ImapConnectionError, match="Could not connect") as caught:
        await ImapClient(ImapServer(host="127.0.0.1", port=free_port(), tls=TlsMode.NONE)).connect()
    assert caught.value.retryable


@pytest.fixture
async def silent_server() -> AsyncIterator[int]:
    """Accepts connections and never says a word."""
    held: list[asyncio.StreamWriter] = []

    async def accept(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        held.append(writer)

    server = await asyncio.start_server(accept, "127.0.0.1", 0)
    try:
        yield server.sockets[0].getsockname()[1]
    finally:
        server.close()
        for writer in held:
            writer.transport.abort()


async def test_connect_timeout_without_greeting(silent_server: int) -> None:
    started = time.monotonic()
    with pytest.raises(ImapConnectionError, match="greeting"):
        await ImapClient(ImapServer("127.0.0.1", silent_server, TlsMode.NONE, connect_timeout=0.3)).connect()
    assert 0.25 < time.monotonic() - started < 2


async def test_tls_handshake_timeout(silent_server: int) -> None:
    with pytest.raises(ImapConnectionError):
        await ImapClient(ImapServer("localhost", silent_server, TlsMode.IMPLICIT, connect_timeout=0.3)).connect()


async def test_bye_greeting() -> None:
    async def accept(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(b"* BYE Too many connections from your address\r\n")
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(accept, "127.0.0.1", 0)
    try:
        port = server.sockets[0].getsockname()[1]
        with pytest.raises(ImapConnectionError, match="Too many connections"):
            await ImapClient(ImapServer("127.0.0.1", port, TlsMode.NONE)).connect()
    finally:
        server.close()


async def test_starttls_injection_is_refused(dovecot_tls: DovecotServer) -> None:
    """Bytes after the STARTTLS OK arrived unencrypted and could be anyone's: the connection is refused."""

    async def accept(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(b"* OK ready\r\n")
        await writer.drain()
        line = await reader.readline()
        tag = line.split()[0]
        writer.write(tag + b" OK Begin TLS\r\n* OK [CAPABILITY IMAP4rev1 AUTH=PLAIN] injected\r\n")
        await writer.drain()
        await reader.read()

    server = await asyncio.start_server(accept, "127.0.0.1", 0)
    try:
        port = server.sockets[0].getsockname()[1]
        settings = ImapServer("127.0.0.1", port, TlsMode.STARTTLS, ca_file=dovecot_tls.ca_file, connect_timeout=2)
        with pytest.raises(ImapTlsError, match="after agreeing to STARTTLS"):
            await ImapClient(settings).connect()
    finally:
        server.close()


async def test_close_is_polite_and_idempotent(dovecot_user: DovecotUser) -> None:
    async with imap_proxy(dovecot_user.server.host, dovecot_user.server.port) as proxy:
        client = ImapClient(dovecot_user.imap(host=proxy.host, port=proxy.port))
        await client.connect()
        await client.login(dovecot_user.name, dovecot_user.password)
        await client.close()
        await client.close()
        assert not client.is_open
        assert any(line.endswith("LOGOUT") for line in proxy.commands())
        with pytest.raises(ImapConnectionError, match="Not connected"):
            await client.noop()


@pytest.mark.parametrize("valid", [True, False])
async def test_xoauth2_with_continuation(valid: bool) -> None:
    """A Gmail-like script without SASL-IR: the token goes after a continuation; a bad one gets the JSON error
    challenge, which must be answered with an empty line before the server says NO."""
    token = "ya29.good-token"
    seen: list[bytes] = []

    async def accept(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(b"* OK Gimap ready\r\n")
        await writer.drain()
        while line := await reader.readline():
            seen.append(line)
            tag = line.split()[0]
            if b"CAPABILITY" in line:
                writer.write(b"* CAPABILITY IMAP4rev1 AUTH=XOAUTH2 IDLE\r\n" + tag + b" OK Thats all she wrote!\r\n")
            elif b"AUTHENTICATE XOAUTH2" in line:
                writer.write(b"+ \r\n")
                await writer.drain()
                answer = base64.b64decode(await reader.readline())
                seen.append(answer)
                if answer == f"user=me@example.org\x01auth=Bearer {token}\x01\x01".encode():
                    writer.write(tag + b" OK me@example.org authenticated (Success)\r\n")
                else:
                    error = base64.b64encode(b'{"status":"400","schemes":"Bearer","scope":"https://mail.google.com/"}')
                    writer.write(b"+ " + error + b"\r\n")
                    await writer.drain()
                    seen.append(await reader.readline())
                    writer.write(tag + b" NO [AUTHENTICATIONFAILED] Invalid credentials (Failure)\r\n")
            elif b"LOGOUT" in line:
                writer.write(b"* BYE LOGOUT Requested\r\n" + tag + b" OK 73 good day (Success)\r\n")
            else:
                writer.write(tag + b" BAD unexpected\r\n")
            await writer.drain()

    server = await asyncio.start_server(accept, "127.0.0.1", 0)
    try:
        port = server.sockets[0].getsockname()[1]
        async with ImapClient(ImapServer("127.0.0.1", port, TlsMode.NONE)) as client:
            if valid:
                await client.login_oauth2("me@example.org", token)
            else:
                with pytest.raises(ImapAuthError, match="OAuth status 400"):
                    await client.login_oauth2("me@example.org", "expired")
                assert seen[-1] == b"\r\n"  # the empty answer to the error challenge
    finally:
        server.close()
