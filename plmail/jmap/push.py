"""Push over EventSource (RFC 8620 §7.3), driven by the process's change feed (`mail/change_feed.py`).

A stream watches its user's accounts on the feed; when one moves, it reads the states again and sends only
the ones that moved.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from litestar.response.sse import ServerSentEventMessage

from plmail.domain.enums import JmapObjectType
from plmail.domain.models import Principal
from plmail.mail.change_feed import CLOSED, ChangeFeed
from plmail.mail.states import ChangeLog

PUSHED_TYPES = (JmapObjectType.MAILBOX, JmapObjectType.EMAIL, JmapObjectType.THREAD, JmapObjectType.IDENTITY,
                JmapObjectType.EMAIL_SUBMISSION)
MIN_PING, MAX_PING = 5, 300
MAX_STREAM_SECONDS = 300.0  # then the client reconnects, and a revoked app password stops working


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


async def state_stream(feed: ChangeFeed, changes: ChangeLog, principal: Principal, options: StreamOptions,
                       last_event_id: str | None) -> AsyncIterator[ServerSentEventMessage]:
    accounts = [a.id for a in principal.accounts]
    pairs = [(a, k) for a in accounts for k in PUSHED_TYPES if k in options.types]
    loop = asyncio.get_running_loop()
    deadline = loop.time() + MAX_STREAM_SECONDS
    async with feed.subscribe(accounts) as queue:
        sent = await changes.reader().snapshot(pairs) if pairs else {}
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
            if CLOSED in items:
                return
            if not pairs:
                continue
            now = await changes.reader().snapshot(pairs)
            moved = {pair: state for pair, state in now.items() if sent.get(pair) != state}
            if not moved:
                continue
            sent = now
            yield _state_event(moved, _event_id(now))
            if options.close_after_state:
                return
