"""Event proposals: what the proposer reads of stored mail, and the proposal rows it leaves behind.

Raw SQL because the facts the noise rules need come from five tables at once (message, account, user,
parts, links, labels), and because ON CONFLICT on the unique (message_id, starts_at) index is the guard.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import asyncpg

from plmail.db.database import Database
from plmail.domain.calendar import ACCEPTED_PROPOSAL_EVIDENCE, StoredProposal


@dataclass(frozen=True, slots=True)
class ProposalSource:
    """One stored message as the proposer reads it, with its owner's settings and addresses."""

    id: int
    account_id: int
    user_id: int
    rfc_message_id: str | None
    provider_id: str | None  # an account-wide provider key: the message key when there is no Message-ID
    is_draft: bool
    category: str | None
    held: bool  # waiting for the assistant: not sorted yet
    sent_at: datetime | None
    received_at: datetime | None
    created_at: datetime
    subject: str | None
    body_text: str | None
    body_html: str | None
    headers: dict[str, Any]
    to_addresses: tuple[str, ...]
    cc_addresses: tuple[str, ...]
    account_addresses: frozenset[str]
    has_calendar_part: bool
    has_applied_link: bool  # an extractor already put an event on the calendar from this message
    user_zone: str
    user_locale: str


@dataclass(frozen=True, slots=True)
class ProposalRow:
    """What the proposal table stores; ``message_id`` is never None here."""

    user_id: int
    message_id: int
    title: str
    starts_at: datetime
    ends_at: datetime
    is_all_day: bool
    time_zone: str
    confidence: int
    source_sentence: str
    dedup_key_hash: str
    detector: str
    location: str | None = None
    stated_end: datetime | None = None


def _loads(value: object) -> Any:
    return json.loads(value) if isinstance(value, str) else value


def _address_list(value: object) -> tuple[str, ...]:
    items = _loads(value)
    if not isinstance(items, list):
        return ()
    found: list[str] = []
    for item in items:
        address = item.get("address") if isinstance(item, dict) else item
        if isinstance(address, str) and address.strip():
            found.append(address.strip())
    return tuple(found)


def _own_addresses(account_email: object, settings: object) -> frozenset[str]:
    """The account's address and its aliases: the proposer's "addressed to the user" rule reads these."""
    bag = _loads(settings)
    aliases = bag.get("aliases", []) if isinstance(bag, dict) else []
    values = [account_email, *(aliases if isinstance(aliases, list) else [])]
    return frozenset(v.strip().lower() for v in values if isinstance(v, str) and v.strip())


def _source(row: asyncpg.Record) -> ProposalSource:
    headers = _loads(row["headers"])
    return ProposalSource(
        id=row["id"], account_id=row["account_id"], user_id=row["user_id"], rfc_message_id=row["rfc_message_id"],
        provider_id=row["account_key"], is_draft=row["is_draft"], category=row["category"],
        held=row["held"], sent_at=row["sent_at"], received_at=row["received_at"],
        created_at=row["created_at"], subject=row["subject"], body_text=row["body_text"], body_html=row["body_html"],
        headers=headers if isinstance(headers, dict) else {}, to_addresses=_address_list(row["to_addresses"]),
        cc_addresses=_address_list(row["cc_addresses"]),
        account_addresses=_own_addresses(row["account_email"], row["account_settings"]),
        has_calendar_part=row["has_calendar_part"], has_applied_link=row["has_applied_link"],
        user_zone=row["time_zone"] or "UTC", user_locale=row["locale"] or "en",
    )


def _stored(row: asyncpg.Record) -> StoredProposal:
    return StoredProposal(
        id=row["id"], user_id=row["user_id"], message_id=row["message_id"], account_id=row["account_id"],
        thread_id=row["thread_id"], title=row["title"], starts_at=row["starts_at"], ends_at=row["ends_at"],
        is_all_day=row["is_all_day"], time_zone=row["time_zone"], confidence=row["confidence"],
        source_sentence=row["source_sentence"], dedup_key_hash=str(row["dedup_key_hash"]), detector=row["detector"],
        created_at=row["created_at"], location=row["location"], stated_end=row["stated_end"],
    )


# The arrival order a backfill walks in, the same the extraction backfill uses.
_ARRIVAL = "coalesce(m.received_at, m.sent_at, m.created_at)"
_PROPOSAL_COLUMNS = """p.id, p.user_id, p.message_id, m.account_id, m.thread_id, p.title, p.starts_at, p.ends_at,
                       p.is_all_day, p.time_zone, p.confidence, p.source_sentence, p.dedup_key_hash, p.detector,
                       p.created_at, p.location, p.stated_end"""


class ProposalRepository:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def sources(self, user_id: int, message_ids: Sequence[int]) -> list[ProposalSource]:
        """The user's messages among ``message_ids``, in arrival order, with every fact a noise rule reads.

        A draft is what the provider flagged as one (IMAP \\Draft, JMAP $draft) or what sits under the
        user's Drafts label; a held message is not sorted yet, whatever its provisional category says.
        """
        if not message_ids:
            return []
        rows = await self.db.fetch(
            f"""SELECT m.id, m.account_id, a.user_id, m.rfc_message_id,
                       CASE WHEN m.provider_container = '' THEN m.provider_key END AS account_key,
                       (m.flags ? '\\Draft' OR m.flags ? '$draft' OR EXISTS (
                           SELECT 1 FROM message_label ml JOIN label l ON l.id = ml.label_id
                            WHERE ml.message_id = m.id AND l.role = 'drafts')) AS is_draft,
                       m.category, (m.category_held_at IS NOT NULL AND m.category_released_at IS NULL) AS held,
                       m.sent_at, m.received_at, m.created_at, m.subject, m.body_text, m.body_html, m.headers,
                       m.to_addresses, m.cc_addresses, a.email AS account_email, a.settings AS account_settings,
                       u.time_zone, u.locale,
                       EXISTS (SELECT 1 FROM message_part p WHERE p.message_id = m.id AND p.is_calendar)
                           AS has_calendar_part,
                       EXISTS (SELECT 1 FROM event_source_link l WHERE l.message_id = m.id AND l.applied
                                  AND l.extractor <> $3) AS has_applied_link
                  FROM message m JOIN account a ON a.id = m.account_id JOIN app_user u ON u.id = a.user_id
                 WHERE a.user_id = $1 AND m.id = ANY($2::bigint[])
                 ORDER BY {_ARRIVAL}, m.id""",
            user_id, list(dict.fromkeys(message_ids)), ACCEPTED_PROPOSAL_EVIDENCE,
        )
        return [_source(r) for r in rows]

    async def page(self, user_id: int, *, after: tuple[datetime, int] | None, limit: int) -> list[tuple[datetime, int]]:
        """(arrival, id) of the user's messages, oldest first, a page at a time. Every message, on purpose:
        which of them may be offered anything is the proposer's question, never a second set of rules here."""
        rows = await self.db.fetch(
            f"""SELECT {_ARRIVAL} AS arrival, m.id FROM message m JOIN account a ON a.id = m.account_id
                 WHERE a.user_id = $1
                   AND ($2::timestamptz IS NULL OR ({_ARRIVAL}, m.id) > ($2::timestamptz, $3::bigint))
                 ORDER BY {_ARRIVAL}, m.id LIMIT $4""",
            user_id, after[0] if after else None, after[1] if after else None, limit,
        )
        return [(r["arrival"], r["id"]) for r in rows]

    async def insert(self, rows: Sequence[ProposalRow]) -> int:
        """Stores what is new; a (message, start) already proposed, by a rerun or a concurrent backfill,
        is left alone by the unique index. Returns how many rows were added."""
        if not rows:
            return 0
        added = await self.db.fetch(
            """INSERT INTO event_proposal (user_id, message_id, title, starts_at, ends_at, is_all_day, time_zone,
                                           confidence, source_sentence, dedup_key_hash, detector, created_at,
                                           location, stated_end)
               SELECT x.user_id, x.message_id, x.title, x.starts_at, x.ends_at, x.is_all_day, x.time_zone,
                      x.confidence, x.source_sentence, x.dedup_key_hash, x.detector, now(), x.location, x.stated_end
                 FROM unnest($1::int[], $2::bigint[], $3::text[], $4::timestamptz[], $5::timestamptz[],
                             $6::boolean[], $7::text[], $8::smallint[], $9::text[], $10::text[], $11::text[],
                             $12::text[], $13::timestamptz[])
                      AS x(user_id, message_id, title, starts_at, ends_at, is_all_day, time_zone, confidence,
                           source_sentence, dedup_key_hash, detector, location, stated_end)
                 JOIN message m ON m.id = x.message_id JOIN account a ON a.id = m.account_id
                WHERE a.user_id = x.user_id
               ON CONFLICT (message_id, starts_at) DO NOTHING RETURNING id""",
            [r.user_id for r in rows], [r.message_id for r in rows], [r.title for r in rows],
            [r.starts_at for r in rows], [r.ends_at for r in rows], [r.is_all_day for r in rows],
            [r.time_zone for r in rows], [r.confidence for r in rows], [r.source_sentence for r in rows],
            [r.dedup_key_hash for r in rows], [r.detector for r in rows], [r.location for r in rows],
            [r.stated_end for r in rows],
        )
        return len(added)

    async def for_thread(self, user_id: int, thread_id: int) -> list[StoredProposal]:
        """Every proposal of one conversation, in one query, for the cards drawn once per message."""
        rows = await self.db.fetch(
            f"""SELECT {_PROPOSAL_COLUMNS}
                  FROM message m JOIN account a ON a.id = m.account_id
                  JOIN event_proposal p ON p.message_id = m.id
                 WHERE a.user_id = $1 AND p.user_id = $1 AND m.thread_id = $2
                 ORDER BY p.message_id, p.starts_at""",
            user_id, thread_id,
        )
        return [_stored(r) for r in rows]

    async def for_messages(self, user_id: int, message_ids: Sequence[int]) -> list[StoredProposal]:
        rows = await self.db.fetch(
            f"""SELECT {_PROPOSAL_COLUMNS}
                  FROM event_proposal p JOIN message m ON m.id = p.message_id
                 WHERE p.user_id = $1 AND p.message_id = ANY($2::bigint[])
                 ORDER BY p.message_id, p.starts_at""",
            user_id, list(message_ids),
        )
        return [_stored(r) for r in rows]

    async def owned(self, user_id: int, proposal_id: int, *, lock: bool = False) -> StoredProposal | None:
        """One proposal of the user's; ``lock`` holds its row until the transaction ends, so an accept and a
        decline clicked at once cannot both act on it."""
        row = await self.db.fetchrow(
            f"""SELECT {_PROPOSAL_COLUMNS}
                  FROM event_proposal p JOIN message m ON m.id = p.message_id
                 WHERE p.user_id = $1 AND p.id = $2 {"FOR UPDATE OF p" if lock else ""}""",
            user_id, proposal_id,
        )
        return _stored(row) if row is not None else None

    async def delete_decided(self, user_id: int, dedup_key_hash: str) -> int:
        """Every proposal of the user's under one key: the same message reached through two accounts is
        one decision, not two cards."""
        status = await self.db.execute("DELETE FROM event_proposal WHERE user_id = $1 AND dedup_key_hash = $2",
                                       user_id, dedup_key_hash)
        return int(status.rsplit(" ", 1)[-1])

    async def accepted_uids(self, user_id: int, uids: Sequence[str]) -> set[str]:
        """Which of these event UIDs the user's calendars already hold: an accepted proposal's event."""
        if not uids:
            return set()
        rows = await self.db.fetch(
            "SELECT uid FROM calendar_event WHERE user_id = $1 AND uid = ANY($2::text[])",
            user_id, list(dict.fromkeys(uids)),
        )
        return {str(r["uid"]) for r in rows}

