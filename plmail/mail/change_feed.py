"""The change feed of one process: LISTEN on the change log's channel, fanned out to whoever watches an account.

Writers send one notification per committed batch (a sync of fifty messages is one notification, not
fifty), and only after commit, so a state a watcher then reads is always one a client can read. One LISTEN
connection per process serves every watcher: JMAP push streams and the web pages' live updates.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager

import asyncpg

from plmail.db.database import Database
from plmail.mail.changes import PUSH_CHANNEL, PUSH_EVERYONE

log = logging.getLogger(__name__)

_READY_TIMEOUT = 5.0
# Queued to every watcher when the feed shuts down. Not -1: a unified account's key is minus its user's id
# (domain/mailstore.py), so -1 is user 1's unified account; no user id is ever this large.
CLOSED = -(2**62)
RESYNC = 0  # queued when notifications may have been missed: every watcher re-reads its states


class ChangeFeed:
    def __init__(self, db: Database) -> None:
        self.db = db
        self._queues: dict[int, set[asyncio.Queue[int]]] = {}
        self._everything: set[asyncio.Queue[int]] = set()  # watchers of every account (the push dispatcher)
        self._task: asyncio.Task[None] | None = None
        self._ready = asyncio.Event()
        self._stopping = False

    def _on_notify(self, _conn: object, _pid: int, _channel: str, payload: str) -> None:
        try:
            parsed = json.loads(payload)
            if parsed == PUSH_EVERYONE:
                self._resync_all()
                return
            accounts = {int(item[0]) for item in parsed}
        except (ValueError, TypeError, IndexError, KeyError):
            log.warning("ignoring a malformed push notification: %r", payload[:200])
            return
        for account_id in accounts:
            for queue in self._queues.get(account_id, ()):
                queue.put_nowait(account_id)
            for queue in self._everything:
                queue.put_nowait(account_id)

    def _resync_all(self) -> None:
        for queues in [*self._queues.values(), self._everything]:
            for queue in queues:
                queue.put_nowait(RESYNC)

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
                log.warning("the change feed lost its database connection; reconnecting")
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("the change feed could not listen; retrying in %.0f s", delay)
            finally:
                self._ready.clear()
                if conn is not None and not conn.is_closed():
                    with contextlib.suppress(Exception):
                        await conn.close(timeout=2)
            # Notifications missed while reconnecting are covered: every stream re-reads its states.
            self._resync_all()
            await asyncio.sleep(delay)
            delay = min(delay * 2, 30.0)

    async def start(self) -> None:
        if self._task is None or self._task.done():
            self._stopping = False
            self._task = asyncio.create_task(self._listen(), name="change-feed-listener")
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._ready.wait(), _READY_TIMEOUT)

    async def close(self) -> None:
        self._stopping = True
        for queues in [*self._queues.values(), self._everything]:
            for queue in queues:
                queue.put_nowait(CLOSED)
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

    @asynccontextmanager
    async def subscribe_all(self) -> AsyncIterator[asyncio.Queue[int]]:
        """Every account's notifications (change-log account ids, RESYNC, CLOSED) on one queue."""
        queue: asyncio.Queue[int] = asyncio.Queue()
        self._everything.add(queue)
        try:
            await self.start()
            yield queue
        finally:
            self._everything.discard(queue)
