"""Which conversation each message of a batch belongs to.

A cascade of four stages, each there because the one below it is not good enough:
1. the provider's own conversation id (Gmail threadId, Graph conversationId) — local guessing
   cannot beat what the user sees in the provider's web client;
2. RFC 5322 References / In-Reply-To;
3. subject matching, only as a rescue for messages that are replies by their prefix;
4. the other direction: stored mail that already replies to this message is adopted.

The whole batch is planned at once with a union-find over messages and stored threads. That makes
the result independent of arrival order (folders sync one after another, so replies in INBOX often
arrive before the Sent message they answer) and means two messages of one provider conversation in
one batch can never both create a thread — which is why there is no provider-thread cache (the seed's
PROVIDER_THREAD_CACHE_LIMIT): nothing is looked up message by message, so nothing unflushed is missed.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from plmail.domain.enums import ThreadingMethod
from plmail.domain.threads import REPLY_PREFIX_PATTERN, StoredThread, ThreadLookups

# Long enough for a slow conversation, short enough that a recurring subject starts a new thread
# instead of extending a stale one.
SUBJECT_FALLBACK_WINDOW = timedelta(days=30)
# A notification storm reusing one Message-ID must not build a 50,000-message thread.
THREAD_MESSAGE_CAP = 1000
# The reply and forward prefixes of the languages plmail speaks plus those common European clients write.
REPLY_PREFIX = re.compile(REPLY_PREFIX_PATTERN, re.IGNORECASE)


def has_reply_prefix(subject: str | None) -> bool:
    return bool(subject and REPLY_PREFIX.match(subject))


def normalize_subject(subject: str | None) -> str:
    if not subject:
        return ""
    return " ".join(REPLY_PREFIX.sub("", subject).split()).lower()


@dataclass(frozen=True, slots=True)
class ThreadCandidate:
    """A message of the batch, as the threader sees it."""

    index: int
    rfc_id: str | None
    references: tuple[str, ...]  # In-Reply-To first, then References
    provider_key: str | None
    subject: str | None
    sender: str | None
    participants: frozenset[str]
    occurred_at: datetime | None

    @property
    def normalized_subject(self) -> str:
        return normalize_subject(self.subject)


@dataclass(frozen=True, slots=True)
class PlannedThread:
    members: tuple[int, ...]  # batch indices
    survivor: int | None  # stored thread the members join; None means a new thread
    absorbed: tuple[int, ...]  # stored threads merged into the survivor
    provider_key: str | None
    method: ThreadingMethod


@dataclass(slots=True)
class _UnionFind:
    parent: dict[tuple[str, object], tuple[str, object]] = field(default_factory=dict)

    def find(self, node: tuple[str, object]) -> tuple[str, object]:
        self.parent.setdefault(node, node)
        root = node
        while self.parent[root] != root:
            root = self.parent[root]
        while self.parent[node] != root:
            self.parent[node], node = root, self.parent[node]
        return root

    def union(self, a: tuple[str, object], b: tuple[str, object]) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            # Deterministic orientation, so the plan never depends on the order unions happened in.
            lo, hi = sorted((ra, rb), key=repr)
            self.parent[hi] = lo


def plan_threads(
    candidates: Sequence[ThreadCandidate], lookups: ThreadLookups, *, cap: int = THREAD_MESSAGE_CAP
) -> list[PlannedThread]:
    uf = _UnionFind()
    methods: dict[int, ThreadingMethod] = {}
    by_rfc: dict[str, list[int]] = {}
    for c in candidates:
        if c.rfc_id:
            by_rfc.setdefault(c.rfc_id, []).append(c.index)

    def joinable(thread_id: int) -> bool:
        stored = lookups.threads.get(thread_id)
        # A thread the provider grouped is never merged from outside, and a full thread takes no more.
        return stored is not None and stored.provider_key is None and stored.message_count < cap

    for c in candidates:
        node = ("m", c.index)
        uf.find(node)
        if c.provider_key:
            methods[c.index] = ThreadingMethod.PROVIDER
            uf.union(node, ("k", c.provider_key))
            existing = lookups.by_provider_key.get(c.provider_key)
            if existing is not None:  # the provider's grouping is authoritative; its key is unique per account
                uf.union(node, ("t", existing))
            continue  # the provider already put the replies in the same conversation
        if c.references:
            methods[c.index] = ThreadingMethod.REFERENCES
            for ref in c.references:
                if ref == c.rfc_id:
                    continue
                for other in by_rfc.get(ref, ()):
                    if candidates[other].provider_key is None:
                        uf.union(node, ("m", other))
                for thread_id in lookups.by_message_id.get(ref, ()):
                    if joinable(thread_id):
                        uf.union(node, ("t", thread_id))
        elif has_reply_prefix(c.subject) and _join_by_subject(c, candidates, lookups, uf, joinable):
            methods[c.index] = ThreadingMethod.SUBJECT_FALLBACK
        else:
            methods[c.index] = ThreadingMethod.NONE
        if c.rfc_id:
            for thread_id in lookups.replying_to.get(c.rfc_id, ()):
                if joinable(thread_id):
                    uf.union(node, ("t", thread_id))
    return _components(uf, methods, lookups)


def _join_by_subject(
    c: ThreadCandidate,
    candidates: Sequence[ThreadCandidate],
    lookups: ThreadLookups,
    uf: _UnionFind,
    joinable: Callable[[int], bool],
) -> bool:
    """Rescue for replies without references: same subject, recent, and a shared participant."""
    subject = c.normalized_subject
    if not subject or c.occurred_at is None:
        return False
    since = c.occurred_at - SUBJECT_FALLBACK_WINDOW
    best: StoredThread | None = None
    for thread_id in lookups.by_subject.get(subject, ()):
        stored = lookups.threads.get(thread_id)
        if stored is None or stored.last_message_at is None or stored.last_message_at < since:
            continue
        if stored.last_message_at > c.occurred_at + SUBJECT_FALLBACK_WINDOW:
            continue
        if not (stored.senders & c.participants) or not joinable(thread_id):
            continue
        if best is None or (stored.last_message_at, -stored.id) > (best.last_message_at or since, -best.id):
            best = stored
    joined = False
    if best is not None:
        uf.union(("m", c.index), ("t", best.id))
        joined = True
    for other in candidates:
        if other.index == c.index or other.provider_key or other.occurred_at is None:
            continue
        if other.normalized_subject != subject or not (since <= other.occurred_at <= c.occurred_at):
            continue
        if (other.sender and other.sender in c.participants) or (c.sender and c.sender in other.participants):
            uf.union(("m", c.index), ("m", other.index))
            joined = True
    return joined


def _components(
    uf: _UnionFind,
    methods: Mapping[int, ThreadingMethod],
    lookups: ThreadLookups,
) -> list[PlannedThread]:
    groups: dict[tuple[str, object], dict[str, list[object]]] = {}
    for node in list(uf.parent):
        bucket = groups.setdefault(uf.find(node), {"m": [], "t": [], "k": []})
        bucket[node[0]].append(node[1])
    plans: list[PlannedThread] = []
    for bucket in groups.values():
        members = tuple(sorted(int(str(m)) for m in bucket["m"]))
        if not members:
            continue
        stored = sorted(int(str(t)) for t in bucket["t"])
        keyed = [t for t in stored if lookups.threads[t].provider_key is not None]
        survivor = keyed[0] if keyed else (stored[0] if stored else None)
        absorbed = tuple(t for t in stored if t != survivor)
        keys = sorted(str(k) for k in bucket["k"])
        member_methods = {methods[i] for i in members}
        method = _strongest(member_methods)
        plans.append(PlannedThread(members, survivor, absorbed, keys[0] if keys else None, method))
    plans.sort(key=lambda p: p.members[0])
    return plans


_STRENGTH = [ThreadingMethod.PROVIDER, ThreadingMethod.REFERENCES, ThreadingMethod.SUBJECT_FALLBACK,
             ThreadingMethod.NONE]


def _strongest(methods: Iterable[ThreadingMethod]) -> ThreadingMethod:
    present = set(methods)
    return next((m for m in _STRENGTH if m in present), ThreadingMethod.NONE)
