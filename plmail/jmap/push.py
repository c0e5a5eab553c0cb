"""Push over EventSource (RFC 8620 §7.3), driven by LISTEN on the change log's channel.

Writers send one notification per committed batch (a sync of fifty messages is one push, not
fifty), and only after commit, so a pushed state is always one the client can read. One LISTEN
connection per process fans out to the streams of the accounts named in the notification; a
stream then reads its user's states and sends only the ones that moved.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import logging
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import asyncpg
from litestar.response.sse import ServerSentEventMessage

from plmail.db.database import Database
from plmail.db.repos.jmap_changes import JmapChangeRepository
from plmail.domain.enums import JmapObjectType
from plmail.jmap.auth import Principal
from plmail.jmap.state import StateReader
from plmail.mail.changes import PUSH_CHANNEL

log = logging.getLogger(__name__)

PUSHED_TYPES = (JmapObjectType.MAILBOX, JmapObjectType.EMAIL, JmapObjectType.THREAD)
MIN_PING, MAX_PING = 5, 300
MAX_STREAM_SECONDS = 300.0  # then the client reconnects, and a revoked app password stops working
_READY_TIMEOUT = 5.0
_CLOSED = -1  # queued to a stream when the hub shuts down


@dataclass(frozen=True, slots=True)
class StreamOptions:
    types: frozenset[JmapObjectType]
    close_after_state: bool
    ping: int  # seconds; 0 = no pings

    @classmethod
    def parse(cls, types: str | None, closeafter: str | None, ping: str | None) -> StreamOptions:
        if types is None or types.strip() in ("", "*", "{types}"):
            wanted = frozenset(PUSHED_TYPES)
        else:
            names = {t.strip() for t in types.split(",")}
            wanted = frozenset(t for t in PUSHED_TYPES if t.value in names)
        seconds = int(ping) if ping and ping.strip().isdigit() else 0
        if seconds:
            seconds = min(max(seconds, MIN_PING), MAX_PING)
        return cls(wanted, (closeafter or "").strip() == "state", seconds)


class PushHub:
    def __init__(self, db: Database) -> None:
        self.db = db
        self._queues: dict[int, set[asyncio.Queue[int]]] = {}
        self._task: asyncio.Task[None] | None = None
        self._ready = asyncio.Event()
        self._stopping = False

    def _on_notify(self, _conn: object, _pid: int, _channel: str, payload: str) -> None:
        try:
            accounts = {int(item[0]) for item in json.loads(payload)}
        except (ValueError, TypeError, IndexError, KeyError):
            log.warning("ignoring a malformed push notification: %r", payload[:200])
            return
        for account_id in accounts:
            for queue in self._queues.get(account_id, ()):
                queue.put_nowait(account_id)

    async def _listen(self) -> None:
        delay = 1.0
        while not self._stopping:
            conn: asyncpg.Connection | None = None
            try:
                conn = await asyncpg.connect(dsn=self.db.engine.config["dsn"])
                lost = asyncio.Event()
                conn.add_termination_listener(lambda _c, lost=lost: lost.set())
                await conn.add_listener(PUSH_CHANNEL, self._on_notify)
                self._ready.set()
                delay = 1.0
                await lost.wait()
                log.warning("the push listener lost its database connection; reconnecting")
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("the push listener could not listen; retrying in %.0f s", delay)
            finally:
                self._ready.clear()
                if conn is not None and not conn.is_closed():
                    with contextlib.suppress(Exception):
                        await conn.close(timeout=2)
            # Notifications missed while reconnecting are covered: every stream re-reads its states.
            for queues in self._queues.values():
                for queue in queues:
                    queue.put_nowait(0)
            await asyncio.sleep(delay)
            delay = min(delay * 2, 30.0)

    async def start(self) -> None:
        if self._task is None or self._task.done():
            self._stopping = False
            self._task = asyncio.create_task(self._listen(), name="jmap-push-listener")
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._ready.wait(), _READY_TIMEOUT)

    async def close(self) -> None:
        self._stopping = True
        for queues in self._queues.values():
            for queue in queues:
                queue.put_nowait(_CLOSED)
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._task
            self._task = None

    @asynccontextmanager
    async def subscribe(self, account_ids: Sequence[int]) -> AsyncIterator[asyncio.Queue[int]]:
        """Listening before the first state is read, so nothing between the two can be missed."""
        queue: asyncio.Queue[int] = asyncio.Queue()
        for account_id in account_ids:
            self._queues.setdefault(account_id, set()).add(queue)
        try:
            await self.start()
            yield queue
        finally:
            for account_id in account_ids:
                queues = self._queues.get(account_id)
                if queues is not None:
                    queues.discard(queue)
                    if not queues:
                        del self._queues[account_id]


def _event_id(snapshot: dict[tuple[int, JmapObjectType], str]) -> str:
    """Encodes every state the stream covers, so a reconnect (Last-Event-ID) can tell nothing moved."""
    text = ";".join(f"{a}:{k.value}={s}" for (a, k), s in sorted(snapshot.items(), key=lambda i: (i[0][0], i[0][1])))
    return hashlib.sha256(text.encode()).hexdigest()[:20]


def _state_event(changed: dict[tuple[int, JmapObjectType], str], event_id: str) -> ServerSentEventMessage:
    by_account: dict[str, dict[str, str]] = {}
    for (account_id, kind), state in sorted(changed.items(), key=lambda i: (i[0][0], i[0][1])):
        by_account.setdefault(str(account_id), {})[kind.value] = state
    payload: dict[str, Any] = {"@type": "StateChange", "changed": by_account}
    return ServerSentEventMessage(data=json.dumps(payload), event="state", id=event_id)


async def state_stream(hub: PushHub, changes: JmapChangeRepository, principal: Principal, options: StreamOptions,
                       last_event_id: str | None) -> AsyncIterator[ServerSentEventMessage]:
    accounts = [a.id for a in principal.accounts]
    pairs = [(a, k) for a in accounts for k in PUSHED_TYPES if k in options.types]
    loop = asyncio.get_running_loop()
    deadline = loop.time() + MAX_STREAM_SECONDS
    async with hub.subscribe(accounts) as queue:
        sent = await StateReader(changes).snapshot(pairs) if pairs else {}
        if pairs and _event_id(sent) != last_event_id:
            yield _state_event(sent, _event_id(sent))
            if options.close_after_state:
                return
        while True:
            remaining = deadline - loop.time()
            if remaining <= 0:
                return
            try:
                item = await asyncio.wait_for(queue.get(), min(options.ping or remaining, remaining))
            except TimeoutError:
                if options.ping and loop.time() < deadline:
                    yield ServerSentEventMessage(data=json.dumps({"interval": options.ping}), event="ping")
                continue
            items = [item]
            while not queue.empty():  # whatever else arrived meanwhile goes out as one event
                items.append(queue.get_nowait())
            if _CLOSED in items:
                return
            if not pairs:
                continue
            now = await StateReader(changes).snapshot(pairs)
            moved = {pair: state for pair, state in now.items() if sent.get(pair) != state}
            if not moved:
                continue
            sent = now
            yield _state_event(moved, _event_id(now))
            if options.close_after_state:
                return
