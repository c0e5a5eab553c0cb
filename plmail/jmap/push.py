"""Push (RFC 8620 §7): StateChange objects for EventSource (§7.3) and the WebSocket (RFC 8887), driven by the
process's change feed (`mail/change_feed.py`).

A stream watches its user's accounts on the feed; when one moves, it reads the states again and sends only
the ones that moved. Every JMAP account of the user is covered: the unified one (whose states move with any
of its accounts) and each connected account.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from litestar.response.sse import ServerSentEventMessage

from plmail.aio import wait_at_most
from plmail.domain.enums import JmapObjectType
from plmail.domain.mailstore import MailScope, unified_key
from plmail.domain.models import Principal
from plmail.mail.change_feed import CLOSED, ChangeFeed
from plmail.mail.states import ChangeLog

PUSHED_TYPES = (JmapObjectType.MAILBOX, JmapObjectType.EMAIL, JmapObjectType.THREAD, JmapObjectType.IDENTITY,
                JmapObjectType.EMAIL_SUBMISSION)
MIN_PING, MAX_PING = 5, 300
MAX_STREAM_SECONDS = 300.0  # then the client reconnects, and a revoked app password stops working

Snapshot = dict[tuple[str, JmapObjectType], str]


def pushed_types(names: list[str] | str | None) -> frozenset[JmapObjectType]:
    """The types a client asked for ("*", None or an empty list: all of them); unknown names are ignored."""
    if names is None or names == "*" or names == [] or names == "":
        return frozenset(PUSHED_TYPES)
    wanted = {n.strip() for n in (names.split(",") if isinstance(names, str) else names)}
    if "*" in wanted or "{types}" in wanted:
        return frozenset(PUSHED_TYPES)
    return frozenset(t for t in PUSHED_TYPES if t.value in wanted)


@dataclass(frozen=True, slots=True)
class StreamOptions:
    types: frozenset[JmapObjectType]
    close_after_state: bool
    ping: int  # seconds; 0 = no pings

    @classmethod
    def parse(cls, types: str | None, closeafter: str | None, ping: str | None) -> StreamOptions:
        seconds = int(ping) if ping and ping.strip().isdigit() else 0
        if seconds:
            seconds = min(max(seconds, MIN_PING), MAX_PING)
        return cls(pushed_types(None if types is None or types.strip() in ("", "*") else types),
                   (closeafter or "").strip() == "state", seconds)


def push_state(snapshot: Snapshot) -> str:
    """Encodes every state the stream covers, so a reconnect (Last-Event-ID, pushState) can tell nothing moved."""
    text = ";".join(f"{a}:{k.value}={s}" for (a, k), s in sorted(snapshot.items(), key=lambda i: (i[0][0], i[0][1])))
    return hashlib.sha256(text.encode()).hexdigest()[:20]


def state_change(changed: Snapshot) -> dict[str, Any]:
    by_account: dict[str, dict[str, str]] = {}
    for (account_id, kind), state in sorted(changed.items(), key=lambda i: (i[0][0], i[0][1])):
        by_account.setdefault(account_id, {})[kind.value] = state
    return {"@type": "StateChange", "changed": by_account}


def user_scopes(principal: Principal) -> list[tuple[str, MailScope]]:
    """Every JMAP account of the user, by its id: the unified account first."""
    unified = principal.scope(principal.unified_id)
    assert unified is not None
    return [(principal.unified_id, unified),
            *((str(a.id), MailScope.single(principal.user_id, a.id)) for a in principal.accounts)]


class StateWatch:
    """The states of the user's accounts for the types asked for, and what moved since they were last sent."""

    def __init__(self, feed: ChangeFeed, changes: ChangeLog, principal: Principal,
                 types: frozenset[JmapObjectType], still_valid: Callable[[], Awaitable[bool]] | None = None) -> None:
        self.feed = feed
        self.still_valid = still_valid
        self.changes = changes
        self.principal = principal
        scopes = user_scopes(principal)
        self.pairs = [(jmap_id, scope, kind) for jmap_id, scope in scopes for kind in PUSHED_TYPES if kind in types]
        self.accounts = [a.id for a in principal.accounts] + [unified_key(principal.user_id)]
        self.sent: Snapshot = {}

    async def snapshot(self) -> Snapshot:
        if not self.pairs:
            return {}
        found = await self.changes.reader().snapshot([(scope, kind) for _, scope, kind in self.pairs])
        return {(jmap_id, kind): found[(scope, kind)] for jmap_id, scope, kind in self.pairs}

    async def revoked(self) -> bool:
        """Whether the app password was revoked or its owner disabled since the stream opened: the stream ends."""
        return self.still_valid is not None and not await self.still_valid()

    async def moved(self) -> Snapshot:
        """The states that differ from what was sent, now counted as sent."""
        now = await self.snapshot()
        moved = {pair: state for pair, state in now.items() if self.sent.get(pair) != state}
        self.sent = now
        return moved


async def state_stream(feed: ChangeFeed, changes: ChangeLog, principal: Principal, options: StreamOptions,
                       last_event_id: str | None, still_valid: Callable[[], Awaitable[bool]] | None = None,
                       ) -> AsyncIterator[ServerSentEventMessage]:
    """EventSource: the states at once (unless Last-Event-ID says nothing moved), then each change. With
    closeafter=state the stream ends after the first change following the initial states, so a long-polling
    client waits for news instead of spinning."""
    watch = StateWatch(feed, changes, principal, options.types, still_valid)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + MAX_STREAM_SECONDS
    async with feed.subscribe(watch.accounts) as queue:
        watch.sent = await watch.snapshot()
        if watch.pairs and push_state(watch.sent) != last_event_id:
            yield ServerSentEventMessage(data=json.dumps(state_change(watch.sent)), event="state",
                                         id=push_state(watch.sent))
        while True:
            remaining = deadline - loop.time()
            if remaining <= 0:
                return
            try:
                item = await wait_at_most(queue.get(), min(options.ping or remaining, remaining))
            except TimeoutError:
                if await watch.revoked():
                    return
                if options.ping and loop.time() < deadline:
                    yield ServerSentEventMessage(data=json.dumps({"interval": options.ping}), event="ping")
                continue
            items = [item]
            while not queue.empty():  # whatever else arrived meanwhile goes out as one event
                items.append(queue.get_nowait())
            if CLOSED in items or await watch.revoked():
                return
            if not watch.pairs:
                continue
            moved = await watch.moved()
            if not moved:
                continue
            yield ServerSentEventMessage(data=json.dumps(state_change(moved)), event="state",
                                         id=push_state(watch.sent))
            if options.close_after_state:
                return
