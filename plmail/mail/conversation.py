"""How a conversation is shown: its messages in the order they were written, and who each one is from and to.

Order (issue 29): by each message's own Date; a reply never above the message it answers, whatever the dates
say (a sender's clock running late, two messages in the same second). Its parent is the message named by its
In-Reply-To, else the nearest of its References found in the conversation (RFC 5322 §3.6.4).
"""

from __future__ import annotations

import heapq
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from plmail.mail.repos.views import MessageView

_UNDATED = datetime.max.replace(tzinfo=UTC)


@dataclass(frozen=True, slots=True)
class Party:
    name: str
    address: str
    me: bool  # one of the user's own addresses: shown as "me"


@dataclass(frozen=True, slots=True)
class MessageParties:
    sender: Party | None
    to: tuple[Party, ...]
    cc: tuple[Party, ...]
    bcc: tuple[Party, ...]  # only on the user's own messages: others' Bcc lines never reach the reader


def parties(message: MessageView, own_addresses: Collection[str]) -> MessageParties:
    own = {address.lower() for address in own_addresses}

    def party(name: str, address: str) -> Party:
        return Party(name.strip(), address, address.lower() in own)

    def listed(entries: Sequence[Mapping[str, str]]) -> tuple[Party, ...]:
        seen: set[str] = set()
        kept: list[Party] = []
        for entry in entries:
            address = str(entry.get("email") or entry.get("address") or "")
            name = str(entry.get("name") or "")
            if (address or name) and address.lower() not in seen:
                seen.add(address.lower())
                kept.append(party(name, address))
        return tuple(kept)

    sender = party(message.from_name, message.from_address) if message.from_address or message.from_name else None
    mine = sender is not None and sender.me
    return MessageParties(sender, listed(message.to), listed(message.cc), listed(message.bcc) if mine else ())


def _written_at(message: MessageView) -> datetime:
    return message.sent_at or message.received_at or _UNDATED


def conversation_order(messages: Sequence[MessageView]) -> list[MessageView]:
    """The messages by their own Date (ties: arrival, then id), each reply after the message it answers."""
    by_message_id: dict[str, int] = {}
    for index, message in enumerate(messages):
        if message.rfc_message_id and message.rfc_message_id not in by_message_id:
            by_message_id[message.rfc_message_id] = index
    parent: dict[int, int] = {}
    for index, message in enumerate(messages):
        for reference in (*message.in_reply_to[:1], *reversed(message.references)):
            found = by_message_id.get(reference)
            if found is not None and found != index:
                parent[index] = found
                break
    children: dict[int, list[int]] = {}
    for child, of in parent.items():
        children.setdefault(of, []).append(child)

    def key(index: int) -> tuple[datetime, datetime, int]:
        message = messages[index]
        return _written_at(message), message.received_at or _UNDATED, message.id

    ready = [(key(i), i) for i in range(len(messages)) if i not in parent]
    heapq.heapify(ready)
    placed: set[int] = set()
    ordered: list[MessageView] = []
    while len(ordered) < len(messages):
        if not ready:  # a reference loop (broken headers): release its earliest message
            rest = min((i for i in range(len(messages)) if i not in placed), key=key)
            heapq.heappush(ready, (key(rest), rest))
        _, index = heapq.heappop(ready)
        if index in placed:
            continue
        placed.add(index)
        ordered.append(messages[index])
        for child in children.get(index, ()):
            if child not in placed:
                heapq.heappush(ready, (key(child), child))
    return ordered
