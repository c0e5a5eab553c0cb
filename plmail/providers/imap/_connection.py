"""The state and machinery under `ImapClient`'s commands: one connection's wire, lock, capabilities and
selected mailbox, and the one place a command is sent and its answer awaited.

Every command runs under the connection's lock, because aioimaplib keys pending commands by name and cannot
pipeline two of the same kind. A command fails with `ImapConnectionError` when the server stays silent for
`ImapServer.timeout` seconds or the link drops; the connection is then closed. Cancelling a command closes
the connection too, since the position in the response stream is lost.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

import aioimaplib

from plmail.providers.imap import _syntax as syn
from plmail.providers.imap._wire import Wire
from plmail.providers.imap.errors import ImapConnectionError, ImapError, ImapProtocolError
from plmail.providers.imap.models import ImapServer, MailboxState


@dataclass(frozen=True, slots=True)
class Reply:
    result: str  # OK, NO, BAD
    lines: list[syn.Part]

    @property
    def text(self) -> str:
        return syn.status_text(self.lines)

    @property
    def code(self) -> str | None:
        return syn.response_code(self.text)


class ImapConnection:
    """One connection's state and command runner; `ImapClient` adds the commands on top."""

    def __init__(self, server: ImapServer) -> None:
        self.server = server
        self._wire: Wire | None = None
        self._lock = asyncio.Lock()
        self._caps: frozenset[str] = frozenset()
        self._enabled: frozenset[str] = frozenset()
        self._selected: MailboxState | None = None
        self._authenticated = False
        self._idling = False

    # -- state ------------------------------------------------------------------------------------------

    @property
    def capabilities(self) -> frozenset[str]:
        """Upper-cased, without the ones `ImapServer.ignore_capabilities` hides."""
        return self._caps

    def has(self, capability: str) -> bool:
        return capability.upper() in self._caps

    @property
    def condstore(self) -> bool:
        """MODSEQ values are available (CONDSTORE or QRESYNC enabled)."""
        return bool(self._enabled & {"CONDSTORE", "QRESYNC"})

    @property
    def selected(self) -> MailboxState | None:
        return self._selected

    @property
    def tls_version(self) -> str | None:
        """The negotiated protocol ("TLSv1.3") when encrypted, None on a plain connection."""
        wire = self._wire
        if wire is None or wire.transport is None:
            return None
        ssl_object = wire.transport.get_extra_info("ssl_object")
        return None if ssl_object is None else str(ssl_object.version())

    @property
    def is_open(self) -> bool:
        return self._wire is not None and not self._wire.closed

    # -- internals ----------------------------------------------------------------------------------------

    @property
    def _imap(self) -> Any:
        return self._live_wire().imap

    def _live_wire(self) -> Wire:
        wire = self._wire
        if wire is None:
            raise ImapConnectionError("Not connected; call connect() first.")
        if wire.closed:
            raise self._dropped(wire, "working")
        return wire

    def _dropped(self, wire: Wire, what: str) -> ImapError:
        failure = wire.failure
        if failure is not None:
            # a fresh instance each time it is raised
            return type(failure)(failure.summary, code=failure.code, said=failure.said)
        bye = wire.imap.bye
        return ImapConnectionError(f"The connection to {self.server.host} dropped while {what}",
                                   said=bye.rstrip(".") if bye else None)

    def _guard(self) -> asyncio.Lock:
        if self._idling:
            raise ImapProtocolError("The connection is in IDLE; leave the idle block before sending commands.")
        return self._lock

    def _cmd(self, name: str, *args: str, prefix: str | None = None) -> Any:
        return aioimaplib.Command(name, self._imap.new_tag(), *args, prefix=prefix, loop=self._live_wire().loop)

    def _require_unauthenticated(self) -> None:
        self._live_wire()
        if self._authenticated:
            raise ImapProtocolError("Already signed in on this connection.")

    def _require_auth(self) -> None:
        self._live_wire()
        if not self._authenticated:
            raise ImapProtocolError("Not signed in; call login() first.")

    def _require_selected(self, *, writable: bool = False) -> None:
        self._require_auth()
        if self._selected is None:
            raise ImapProtocolError("No folder is open; call select() first.")
        if writable and self._selected.readonly:
            raise ImapProtocolError(f"The folder {self._selected.path!r} is open read-only.")

    def _ok(self, reply: Reply, what: str) -> Reply:
        if reply.result != "OK":
            raise ImapProtocolError(f"{what} failed", code=reply.code, said=reply.text or reply.result)
        return reply

    async def _command(self, command: Any, what: str, *, scrub: str | None = None) -> Reply:
        """Run one aioimaplib command (or an awaitable that runs one) under the silence timeout.

        The caller holds the lock."""
        wire = self._live_wire()
        loop = wire.loop
        timeout = self.server.timeout
        if asyncio.iscoroutine(command):
            task: asyncio.Future[Any] = asyncio.ensure_future(command)
        else:
            task = asyncio.ensure_future(self._imap.execute(command, scrub=scrub))
        wire.last_activity = loop.time()
        try:
            while not task.done():
                if wire.lost.done():
                    raise self._dropped(wire, what)
                remaining = wire.last_activity + timeout - loop.time()
                if remaining <= 0:
                    error = ImapConnectionError(
                        f"{self.server.host} stopped answering for {timeout:g} s while {what}; "
                        "the connection was closed."
                    )
                    wire.fail(error)
                    raise error
                await asyncio.wait((task, wire.lost), timeout=remaining, return_when=asyncio.FIRST_COMPLETED)
        finally:
            if not task.done():
                task.cancel()
                # the response is still on its way; nothing later on this stream could be matched up
                wire.fail(ImapConnectionError(f"The connection was closed because {what} was interrupted."))
        try:
            response = task.result()
        except aioimaplib.AioImapException as exc:
            raise ImapProtocolError(f"{what} failed", said=str(exc)) from exc
        return Reply(result=str(response.result), lines=list(response.lines))

    async def _drop(self) -> None:
        wire, self._wire = self._wire, None
        self._selected = None
        self._authenticated = False
        self._caps = self._enabled = frozenset()
        if wire is None or wire.transport is None:
            return
        if not wire.lost.done():
            wire.transport.close()
            try:
                async with asyncio.timeout(1.0):
                    await asyncio.shield(wire.lost)
            except TimeoutError:
                wire.transport.abort()
