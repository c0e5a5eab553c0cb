"""IDLE on one connection: pushed mailbox changes as an async iterator, renewed before servers drop it."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from types import TracebackType
from typing import TYPE_CHECKING, Any, Self

from plmail.providers.imap import _syntax as syn
from plmail.providers.imap.errors import ImapCapabilityError, ImapConnectionError, ImapError, ImapProtocolError
from plmail.providers.imap.models import MailboxEvent

if TYPE_CHECKING:
    from plmail.providers.imap.client import ImapClient


class IdleSession:
    """One IDLE on one connection; see `ImapClient.idle`."""

    def __init__(self, client: ImapClient, mailbox: str, *, timeout: float | None, renew_after: float) -> None:
        self._client = client
        self._mailbox = mailbox
        self._timeout = timeout
        self._renew_after = renew_after
        self._pending: list[MailboxEvent] = []
        self._task: asyncio.Future[Any] | None = None
        self._command: Any = None
        self._deadline: float | None = None
        self._renew_at = 0.0

    async def __aenter__(self) -> Self:
        client = self._client
        lock = client._guard()
        await lock.acquire()
        try:
            if "IDLE" not in client.capabilities:
                raise ImapCapabilityError(f"{client.server.host} has no IDLE; poll with noop() instead.")
            selected = client.selected
            if selected is None or selected.path != self._mailbox:
                await client._select(self._mailbox, readonly=True)
            loop = client._live_wire().loop
            self._deadline = None if self._timeout is None else loop.time() + self._timeout
            client._idling = True
            await self._start()
        except BaseException:
            client._idling = False
            lock.release()
            raise
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        client = self._client
        try:
            if self._task is not None and client.is_open:
                await self._done()
        except ImapError:
            if exc is None:
                raise
        finally:
            client._idling = False
            client._lock.release()

    def __aiter__(self) -> AsyncIterator[MailboxEvent]:
        return self

    async def __anext__(self) -> MailboxEvent:
        client = self._client
        wire = client._live_wire()
        loop = wire.loop
        queue: asyncio.Queue[list[syn.Part]] = client._imap.idle_queue
        if self._task is None and not self._pending:
            raise ImapProtocolError("This IDLE has ended; start a new one.")
        while not self._pending:
            now = loop.time()
            if self._deadline is not None and now >= self._deadline:
                raise StopAsyncIteration
            if now >= self._renew_at:
                await self._done()
                await self._start()
                continue
            wait_until = self._renew_at if self._deadline is None else min(self._renew_at, self._deadline)
            getter = asyncio.ensure_future(queue.get())
            assert self._task is not None
            try:
                await asyncio.wait(
                    (getter, self._task, wire.lost), timeout=wait_until - now, return_when=asyncio.FIRST_COMPLETED
                )
            finally:
                if not getter.done():
                    getter.cancel()
            if getter.done() and not getter.cancelled():
                self._pending.extend(syn.parse_events(getter.result()))
            elif wire.lost.done():
                raise client._dropped(wire, "waiting for new mail")
            elif self._task.done():
                self._task = None
                raise ImapProtocolError(f"{client.server.host} ended IDLE by itself.")
        return self._pending.pop(0)

    async def _start(self) -> None:
        client = self._client
        wire = client._live_wire()
        imap = client._imap
        while not imap.idle_queue.empty():  # left over from an earlier session on this connection
            imap.idle_queue.get_nowait()
        self._task = asyncio.ensure_future(imap.idle())
        acknowledged = asyncio.ensure_future(imap.wait_for_idle_response())
        try:
            async with asyncio.timeout(client.server.timeout):
                await asyncio.wait((self._task, acknowledged, wire.lost), return_when=asyncio.FIRST_COMPLETED)
        except TimeoutError:
            error = ImapConnectionError(f"{client.server.host} did not confirm IDLE; the connection was closed.")
            wire.fail(error)
            raise error from None
        finally:
            if not acknowledged.done():
                acknowledged.cancel()
        if wire.lost.done():
            self._task.cancel()
            raise client._dropped(wire, "starting IDLE")
        if self._task.done():
            response = self._task.result()
            self._task = None
            raise ImapProtocolError(f"{client.server.host} refused IDLE: {syn.status_text(response.lines)}")
        self._command = imap.pending_sync_command  # its buffer may hold lines that arrive with DONE's answer
        self._renew_at = wire.loop.time() + self._renew_after

    async def _done(self) -> None:
        client = self._client
        wire = client._live_wire()
        task, self._task = self._task, None
        assert task is not None
        client._imap.idle_done()
        try:
            async with asyncio.timeout(client.server.timeout):
                await asyncio.wait((task, wire.lost), return_when=asyncio.FIRST_COMPLETED)
        except TimeoutError:
            task.cancel()
            error = ImapConnectionError(f"{client.server.host} did not end IDLE; the connection was closed.")
            wire.fail(error)
            raise error from None
        if not task.done():
            task.cancel()
            raise client._dropped(wire, "ending IDLE")
        # aioimaplib only hands IDLE lines over at the end of a read, and not at all when the tagged OK came in
        # the same read: collect both leftovers so a change reported just before DONE is not lost.
        queue = client._imap.idle_queue
        while not queue.empty():
            self._pending.extend(syn.parse_events(queue.get_nowait()))
        if self._command is not None and self._command.buffer:
            self._pending.extend(syn.parse_events(self._command.buffer))
            self._command.buffer.clear()
        self._command = None
