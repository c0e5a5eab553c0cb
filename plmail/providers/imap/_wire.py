"""The connection under aioimaplib: TCP/TLS setup, the greeting, STARTTLS, and noticing a dropped link.

aioimaplib's protocol object parses responses; `Wire` sits between it and the transport so that we see
every byte first: it reads the greeting and the STARTTLS exchange itself (aioimaplib has no STARTTLS),
stamps activity for the silence timeout, turns a lost connection into a future (aioimaplib leaves pending
commands waiting forever), and feeds the parser in slices it can survive.
"""

from __future__ import annotations

import asyncio
import re
import ssl
from typing import Any

import aioimaplib

from plmail.domain.account_services import TlsMode
from plmail.providers.imap.errors import (
    ImapConnectionError,
    ImapError,
    ImapProtocolError,
    ImapTlsError,
    NotAnImapServerError,
)
from plmail.providers.imap.models import ImapServer
from plmail.providers.network import is_local_host

# aioimaplib parses a chunk recursively, one stack frame per line: a single read of about a thousand
# short lines (a FLAGS listing) would overflow the stack. It resumes cleanly at any byte, so we feed slices.
_LINES_PER_FEED = 64
_GREETING = re.compile(rb"^\* (OK|PREAUTH|BYE)\b ?(.*)$", re.IGNORECASE)


class ImapProtocol(aioimaplib.IMAP4ClientProtocol):  # type: ignore[misc]  # aioimaplib is untyped
    """aioimaplib's parser with one fix: it removes every "* " from an untagged line, not just the leading one,
    so a folder named "To do* now" was listed as "To donow". Same routing as the original otherwise, plus it
    remembers the server's BYE text, the best explanation of a connection that is about to drop."""

    bye: str | None = None

    def _untagged_response(self, line: bytes) -> Any:
        line = line[2:] if line.startswith(b"* ") else line
        if line[:4].upper() == b"BYE ":
            self.bye = line[4:].decode("utf-8", "replace").strip()
        if self.pending_sync_command is not None:
            self.pending_sync_command.append_to_resp(line)
            return self.pending_sync_command
        match = aioimaplib.message_data_re.match(line)
        if match:
            name, text = match.group(1), line
        else:
            name, _, text = line.partition(b" ")
        command = self.pending_async_commands.get(name.decode(errors="replace").upper())
        if command is not None:
            command.append_to_resp(text)
            return command
        # as in aioimaplib: what no command asked for goes to a pending NOOP, else it is dropped
        command = self.pending_async_commands.get("NOOP")
        if command is not None:
            command.append_to_resp(line)
        return command


def check_plaintext_allowed(host: str) -> None:
    """Refuse an unencrypted connection unless it stays on this machine: decided from the name alone, before
    any lookup, so that a password can never leave the host in clear text."""
    if is_local_host(host):
        return
    raise ImapTlsError(
        f"Refusing to connect to {host} without encryption: passwords would cross the network in clear text. "
        "Choose implicit TLS (port 993) or STARTTLS (port 143); an unencrypted connection is allowed only to "
        "this machine (localhost, 127.0.0.1, ::1)."
    )


def tls_context(server: ImapServer) -> ssl.SSLContext:
    try:
        context = ssl.create_default_context(cafile=str(server.ca_file) if server.ca_file else None)
    except (OSError, ssl.SSLError) as exc:
        raise ImapTlsError(f"Cannot read the CA file {server.ca_file}: {exc}") from exc
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    return context


def tls_error(server: ImapServer, exc: ssl.SSLError) -> ImapTlsError:
    if isinstance(exc, ssl.SSLCertVerificationError):
        return ImapTlsError(
            f"The certificate of {server.host} is not trusted ({exc.verify_message}). If this is your own "
            "server with a self-signed certificate, give plmail its CA file."
        )
    reason = str(exc.reason or "")
    words = _TLS_REASONS.get(reason, "the server and plmail could not agree on an encrypted connection")
    # OpenSSL's reason (WRONG_VERSION_NUMBER …) is kept as what the server "said": technical detail, never the words
    return ImapTlsError(f"The encrypted connection to {server.host}:{server.port} failed: {words}.",
                        said=reason or str(exc))


# OpenSSL's reasons for a failed handshake, in words a person can act on.
_TLS_REASONS = {
    "WRONG_VERSION_NUMBER": "the server does not speak TLS on this port; it may expect STARTTLS (usually port 143) "
                            "or another port",
    "UNSUPPORTED_PROTOCOL": "the server offers only outdated TLS versions",
    "TLSV1_ALERT_PROTOCOL_VERSION": "the server offers only outdated TLS versions",
    "SSLV3_ALERT_HANDSHAKE_FAILURE": "the server and plmail share no encryption method",
    "NO_SHARED_CIPHER": "the server and plmail share no encryption method",
    "TLSV1_UNRECOGNIZED_NAME": "the server does not know this name; check the server's name",
}


class Wire(asyncio.Protocol):
    def __init__(self, loop: asyncio.AbstractEventLoop, imap: ImapProtocol) -> None:
        self.loop = loop
        self.imap = imap
        self.transport: asyncio.Transport | None = None
        self.lost: asyncio.Future[None] = loop.create_future()
        self.failure: ImapError | None = None  # why the connection ended, when we know better than "closed"
        self.last_activity = loop.time()
        self._raw: bytearray | None = bytearray()  # before handover: bytes we read ourselves
        self._raw_event = asyncio.Event()

    # -- asyncio.Protocol ----------------------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        self.last_activity = self.loop.time()
        if self._raw is not None:
            self._raw += data
            self._raw_event.set()
            return
        try:
            self._feed(bytes(data))
        except Exception as exc:  # a parser error inside a transport callback would only be logged by asyncio
            self.fail(ImapProtocolError("The server sent a response plmail could not read", said=str(exc)))

    def eof_received(self) -> bool:
        return False  # close our side too

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.lost.done():
            self.lost.set_result(None)
        self._raw_event.set()

    # -- our side ------------------------------------------------------------------------------------

    @property
    def closed(self) -> bool:
        """Lost, or failed and on its way down (an abort reports the loss only on the next loop turn)."""
        return self.lost.done() or self.failure is not None

    def fail(self, error: ImapError) -> None:
        """Record why and drop the connection: after a timeout or a misread response the stream position is
        unknown, so nothing more can be trusted from it."""
        if self.failure is None:
            self.failure = error
        if self.transport is not None:
            self.transport.abort()

    def _feed(self, data: bytes) -> None:
        if data.count(b"\n") <= _LINES_PER_FEED:
            self.imap.data_received(data)
            return
        pos = 0
        while pos < len(data):
            cut = pos
            for _ in range(_LINES_PER_FEED):
                nl = data.find(b"\n", cut)
                if nl < 0:
                    cut = len(data)
                    break
                cut = nl + 1
            self.imap.data_received(data[pos:cut])
            pos = cut

    async def read_line(self, deadline: float, what: str) -> bytes:
        assert self._raw is not None
        while True:
            end = self._raw.find(b"\r\n")
            if end >= 0:
                line = bytes(self._raw[:end])
                del self._raw[: end + 2]
                return line
            if self.closed:
                raise ImapConnectionError(f"The server closed the connection while {what}.")
            self._raw_event.clear()
            try:
                async with asyncio.timeout_at(deadline):
                    await self._raw_event.wait()
            except TimeoutError:
                raise ImapConnectionError(f"The server did not answer in time while {what}.") from None

    def write_raw(self, data: bytes) -> None:
        assert self.transport is not None
        self.transport.write(data)

    def hand_over(self, state: str) -> None:
        """From here on aioimaplib parses everything."""
        assert self.transport is not None
        assert self._raw is not None
        leftover, self._raw = bytes(self._raw), None
        self.imap.connection_made(self.transport)
        self.imap.state = state
        if leftover:
            self._feed(leftover)


async def open_wire(server: ImapServer) -> tuple[Wire, bool]:
    """Connect, read the greeting and do STARTTLS when asked; returns the wire handed over to aioimaplib and
    whether the server greeted with PREAUTH (already authenticated)."""
    if server.tls is TlsMode.NONE:
        check_plaintext_allowed(server.host)
    context = tls_context(server) if server.tls is not TlsMode.NONE else None
    loop = asyncio.get_running_loop()
    imap = ImapProtocol(loop)
    wire = Wire(loop, imap)
    deadline = loop.time() + server.connect_timeout
    where = f"{server.host}:{server.port}"
    implicit = server.tls is TlsMode.IMPLICIT
    try:
        async with asyncio.timeout_at(deadline):
            await loop.create_connection(
                lambda: wire, server.host, server.port,
                ssl=context if implicit else None,
                server_hostname=server.host if implicit else None,
                ssl_handshake_timeout=server.connect_timeout if implicit else None,
            )
    except TimeoutError:
        raise ImapConnectionError(f"Could not connect to {where} within {server.connect_timeout:g} s.") from None
    except ssl.SSLError as exc:
        raise tls_error(server, exc) from exc
    except ConnectionRefusedError as exc:
        raise ImapConnectionError(f"Could not connect to {where}: the server refused the connection (it is down, "
                                  "or nothing answers on that port).", said=str(exc)) from exc
    except OSError as exc:
        raise ImapConnectionError(f"Could not connect to {where}: {exc.strerror or exc}.") from exc
    try:
        greeting = await wire.read_line(deadline, "waiting for its greeting")
        match = _GREETING.match(greeting)
        if match is None:
            raise NotAnImapServerError(f"{where} is not an IMAP server", said=repr(greeting[:80]))
        kind, text = match.group(1).upper(), match.group(2).decode("utf-8", "replace")
        if kind == b"BYE":
            raise ImapConnectionError(f"The server at {where} refused the connection", said=text)
        preauth = kind == b"PREAUTH"
        if server.tls is TlsMode.STARTTLS:
            if preauth:
                # RFC 3501: STARTTLS is only valid before authentication; a PREAUTH greeting leaves no way to encrypt
                raise ImapTlsError(f"{where} greets as already authenticated, so STARTTLS is impossible.")
            await _starttls(wire, server, context, deadline)
        wire.hand_over("AUTH" if preauth else "NONAUTH")
    except BaseException:
        if wire.transport is not None:
            wire.transport.abort()
        raise
    return wire, preauth


async def _starttls(wire: Wire, server: ImapServer, context: ssl.SSLContext | None, deadline: float) -> None:
    assert context is not None
    assert wire.transport is not None
    wire.write_raw(b"T1 STARTTLS\r\n")
    while True:
        line = await wire.read_line(deadline, "starting TLS")
        if line.startswith(b"T1 "):
            break
    if not line[3:].upper().startswith(b"OK"):
        raise ImapTlsError(
            f"{server.host} does not offer STARTTLS. Choose implicit TLS (port 993) if the server has it",
            said=line[3:].decode("utf-8", "replace"),
        )
    # Anything after the OK came before encryption and could have been injected (CVE-2011-0411 style).
    assert wire._raw is not None
    if wire._raw:
        raise ImapTlsError(f"{server.host} sent data after agreeing to STARTTLS; refusing the connection.")
    loop = asyncio.get_running_loop()
    try:
        async with asyncio.timeout_at(deadline):
            transport = await loop.start_tls(
                wire.transport, wire, context, server_hostname=server.host,
                ssl_handshake_timeout=server.connect_timeout,
            )
    except TimeoutError:
        raise ImapConnectionError(f"The TLS handshake with {server.host} did not finish in time.") from None
    except ssl.SSLError as exc:
        raise tls_error(server, exc) from exc
    except OSError as exc:
        raise ImapConnectionError(f"The connection to {server.host} dropped during the TLS handshake",
                                  said=str(exc)) from exc
    if transport is None:
        raise ImapConnectionError(f"The connection to {server.host} closed during the TLS handshake.")
    wire.transport = transport
