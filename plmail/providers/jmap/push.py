"""Push from the upstream (RFC 8620 §7.3): one EventSource stream per active JMAP account, so new mail and
changes made elsewhere are synced at once instead of at the next poll.

Each `state` event asks for a sync (a burst of them becomes one). A dropped stream is opened again after a
growing pause and asks for a sync when back, so what changed meanwhile is fetched; a refused secret ends the
account's stream (the sync marks the account, and its user enters a new secret). The sync is what stores mail
and it takes only what is new, so a stream that drops or repeats itself never loses or duplicates anything.
The fallback poll covers an upstream without EventSource and anything this misses.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from urllib.parse import quote

import httpx

from plmail.db.database import Database
from plmail.providers.jmap.connection import JMAP, JmapConnector
from plmail.providers.jmap.errors import JmapAuthError, JmapError

log = logging.getLogger(__name__)

SyncRequest = Callable[[int], Awaitable[None]]
_DEBOUNCE_SECONDS = 0.2
# One process of the installation streams (an advisory-lock namespace of its own: "plJ" + 1).
EVENTSOURCE_LEADER_LOCK = 0x706C4A01
_PING_SECONDS = 60  # the server's keep-alive (RFC 8620 §7.3 `ping`); silence for twice that is a dead stream


def event_source_url(template: str) -> str:
    """The session's eventSourceUrl with its variables: every type, a stream kept open, a ping a minute."""
    return (template.replace("{types}", quote("Email,Mailbox", safe=",")).replace("{closeafter}", "no")
            .replace("{ping}", str(_PING_SECONDS)))


class EventSourceWatcher:
    def __init__(self, db: Database, connector: JmapConnector, request_sync: SyncRequest, *,
                 refresh_seconds: float = 30.0, backoff_max: float = 300.0) -> None:
        self.db = db
        self.connector = connector
        self.request_sync = request_sync
        self.refresh_seconds = refresh_seconds
        self.backoff_max = backoff_max
        self._task: asyncio.Task[None] | None = None
        self._streams: dict[int, asyncio.Task[None]] = {}
        self._pending: dict[int, asyncio.Task[None]] = {}
        self.listening: set[int] = set()  # accounts whose stream is open right now

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.create_task(self._run(), name="jmap-eventsource")

    async def stop(self) -> None:
        tasks = [t for t in (self._task, *self._streams.values(), *self._pending.values()) if t is not None]
        self._task = None
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._streams.clear()
        self._pending.clear()
        self.listening.clear()

    async def _run(self) -> None:
        """Only the process holding the leader lock streams, so an installation of several processes opens one
        stream per account; another takes over when that process goes."""
        while True:
            try:
                async with self.connector.accounts.session_lock(EVENTSOURCE_LEADER_LOCK, 0) as lock:
                    while lock.taken and await lock.still_held():
                        await self._reconcile()
                        await asyncio.sleep(self.refresh_seconds)
            except asyncio.CancelledError:
                raise
            except Exception:  # the database went away for a moment; watch again when it is back
                log.exception("JMAP EventSource supervision failed; retrying")
            await self._stop_streams()
            await asyncio.sleep(self.refresh_seconds)

    async def _reconcile(self) -> None:
        rows = await self.db.fetch(
            "SELECT id FROM account WHERE provider_kind = $1 AND is_active AND status = 'ok' ORDER BY id", JMAP.value)
        wanted = {r["id"] for r in rows}
        for account_id in set(self._streams) - wanted:
            self._streams.pop(account_id).cancel()
        for account_id in wanted:
            stream = self._streams.get(account_id)
            if stream is None or stream.done():
                self._streams[account_id] = asyncio.create_task(self._watch(account_id),
                                                                name=f"jmap-eventsource-{account_id}")

    async def _stop_streams(self) -> None:
        streams = list(self._streams.values())
        self._streams.clear()
        for stream in streams:
            stream.cancel()
        for stream in streams:
            with contextlib.suppress(asyncio.CancelledError):
                await stream

    async def _watch(self, account_id: int) -> None:
        pause = 1.0
        first = True
        while True:
            try:
                record = await self.connector.accounts.for_job(account_id)
                if record is None or not record.is_active:
                    return
                upstream = await self.connector.open(record)
                if not upstream.session.event_source_url:
                    return  # the poll is all there is
                url = event_source_url(upstream.session.event_source_url)
                await self.connector.client.check(url)
                headers = {"Authorization": upstream.credentials.header(), "Accept": "text/event-stream"}
                timeout = httpx.Timeout(30.0, read=2.5 * _PING_SECONDS)
                async with self.connector.client.http.stream("GET", url, headers=headers, timeout=timeout) as answer:
                    if answer.status_code in (401, 403):
                        raise JmapAuthError("The JMAP server refused the app password or token.")
                    if answer.status_code != 200:
                        raise JmapError(f"The JMAP server's event stream answered HTTP {answer.status_code}.")
                    self.listening.add(account_id)
                    if not first:  # back after a drop: what changed meanwhile
                        self._ask(account_id)
                    first = False
                    pause = 1.0
                    event = ""
                    async for line in answer.aiter_lines():
                        if line.startswith("event:"):
                            event = line.removeprefix("event:").strip()
                        elif line.startswith("data:") and event == "state":
                            self._ask(account_id)
                        elif not line:
                            event = ""
            except asyncio.CancelledError:
                raise
            except JmapAuthError:
                log.warning("JMAP account %s: the event stream was refused; waiting for new credentials", account_id)
                return
            except Exception as exc:
                log.info("JMAP account %s: the event stream dropped (%s); again in %.0f s", account_id, exc, pause)
            finally:
                self.listening.discard(account_id)
            await asyncio.sleep(pause)
            pause = min(pause * 2, self.backoff_max)
            first = False

    def _ask(self, account_id: int) -> None:
        """A burst of events becomes one sync request."""
        pending = self._pending.get(account_id)
        if pending is not None and not pending.done():
            return

        async def later() -> None:
            await asyncio.sleep(_DEBOUNCE_SECONDS)
            self._pending.pop(account_id, None)
            try:
                await self.request_sync(account_id)
            except Exception:
                log.exception("could not ask for a sync of JMAP account %s", account_id)

        self._pending[account_id] = asyncio.create_task(later())
