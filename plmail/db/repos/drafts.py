"""A message as the outbox and the drafts keep it: its provider reference, its original's blob, and the
moves between Drafts and Sent that happen in plmail (the provider is told by the draft store, not by
label propagation)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from plmail.db.database import Database
from plmail.domain.ingest import ProviderRef


@dataclass(frozen=True, slots=True)
class WrittenMessage:
    """A message plmail wrote (a draft or a sent message): where it lives and what it is."""

    id: int
    account_id: int
    user_id: int
    thread_id: int | None
    ref: ProviderRef
    raw_path: str | None
    rfc_message_id: str | None
    provider_thread_key: str | None
    labels: frozenset[int]
    flags: tuple[str, ...]


_DRAFT_FLAGS = ["$draft", "\\Draft"]


def _ref(row: Any) -> ProviderRef:
    return ProviderRef(row["provider_container"], row["provider_key"], row["mailbox_id"])


class DraftRepository:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def get(self, message_id: int) -> WrittenMessage | None:
        row = await self.db.fetchrow(
            """SELECT m.id, m.account_id, a.user_id, m.thread_id, m.mailbox_id, m.provider_container, m.provider_key,
                      m.raw_path, m.rfc_message_id, m.provider_thread_key,
                      coalesce(array_agg(ml.label_id) FILTER (WHERE ml.label_id IS NOT NULL), '{}') AS labels,
                      ARRAY(SELECT jsonb_array_elements_text(m.flags)) AS flags
                 FROM message m JOIN account a ON a.id = m.account_id
                 LEFT JOIN message_label ml ON ml.message_id = m.id
                WHERE m.id = $1 GROUP BY m.id, a.user_id""",
            message_id,
        )
        if row is None:
            return None
        return WrittenMessage(
            id=row["id"], account_id=row["account_id"], user_id=row["user_id"], thread_id=row["thread_id"],
            ref=_ref(row),
            raw_path=row["raw_path"], rfc_message_id=row["rfc_message_id"],
            provider_thread_key=row["provider_thread_key"], labels=frozenset(row["labels"]),
            flags=tuple(row["flags"]),
        )

    async def owned(self, user_id: int, message_id: int) -> WrittenMessage | None:
        found = await self.get(message_id)
        return found if found is not None and found.user_id == user_id else None

    async def provider_thread_of(self, account_id: int, rfc_message_ids: Sequence[str]) -> str | None:
        """The provider's conversation id (Gmail's threadId, Graph's conversationId) of the thread holding the
        first of these Message-IDs the account has stored with one: what a reply to them belongs to."""
        if not rfc_message_ids:
            return None
        value = await self.db.fetchval(
            """SELECT t.provider_thread_key FROM message m JOIN message_thread t ON t.id = m.thread_id
                WHERE m.account_id = $1 AND m.rfc_message_id = ANY($2::text[]) AND t.provider_thread_key IS NOT NULL
                ORDER BY array_position($2::text[], m.rfc_message_id), m.id DESC LIMIT 1""",
            account_id, list(rfc_message_ids),
        )
        return str(value) if value is not None else None

    async def set_ref(self, message_id: int, ref: ProviderRef, *, only_draft: bool = False) -> bool:
        """Record where the provider keeps the message now; False when the row is gone (or, with `only_draft`,
        is no longer a draft: it was sent while its draft was on the way to the provider)."""
        status = await self.db.execute(
            """UPDATE message SET mailbox_id = $2, provider_container = $3, provider_key = $4, synced_at = now(),
                                  updated_at = now()
                WHERE id = $1 AND (NOT $5 OR flags ?| $6::text[])""",
            message_id, ref.folder_id, ref.container, ref.key, only_draft, _DRAFT_FLAGS,
        )
        return status.endswith(" 1")

    async def become_sent(self, message_id: int, *, drafts_label: int, sent_label: int) -> ProviderRef | None:
        """The message went: out of Drafts into Sent, no longer a draft, read. Returns where the provider kept
        its draft at that moment (a push that stores it later finds it no longer a draft and removes its copy)."""
        await self.db.execute(
            """WITH gone AS (DELETE FROM message_label WHERE message_id = $1 AND label_id = $2)
               INSERT INTO message_label (message_id, label_id) VALUES ($1, $3) ON CONFLICT DO NOTHING""",
            message_id, drafts_label, sent_label,
        )
        row = await self.db.fetchrow(
            """UPDATE message SET flags = (SELECT coalesce(jsonb_agg(f), '[]') FROM jsonb_array_elements_text(flags) f
                                            WHERE f <> ALL($2::text[])),
                                  seen_at = coalesce(seen_at, now()), updated_at = now()
                WHERE id = $1 RETURNING mailbox_id, provider_container, provider_key""",
            message_id, _DRAFT_FLAGS,
        )
        return _ref(row) if row is not None else None

    async def become_draft(self, message_id: int, *, drafts_label: int, sent_label: int) -> None:
        """A send that failed for good after the message had been moved to Sent: back to Drafts."""
        await self.db.execute(
            """WITH gone AS (DELETE FROM message_label WHERE message_id = $1 AND label_id = $3)
               INSERT INTO message_label (message_id, label_id) VALUES ($1, $2) ON CONFLICT DO NOTHING""",
            message_id, drafts_label, sent_label,
        )
        await self.db.execute(
            """UPDATE message SET flags = CASE WHEN flags ? '$draft' THEN flags ELSE flags || '["$draft"]' END,
                                  updated_at = now()
                WHERE id = $1""",
            message_id,
        )

    async def delete(self, message_id: int) -> tuple[int | None, list[int]] | None:
        """Remove the message; returns (its thread, its labels), or None when it was not there."""
        deleted = await self.delete_with_ref(message_id)
        return (deleted[0], deleted[1]) if deleted is not None else None

    async def delete_with_ref(self, message_id: int) -> tuple[int | None, list[int], ProviderRef] | None:
        """Remove the message; returns (its thread, its labels, where the provider kept it at that moment)."""
        labels = [r["label_id"] for r in await self.db.fetch(
            "SELECT label_id FROM message_label WHERE message_id = $1", message_id)]
        row = await self.db.fetchrow(
            "DELETE FROM message WHERE id = $1 RETURNING thread_id, mailbox_id, provider_container, provider_key",
            message_id)
        if row is None:
            return None
        return row["thread_id"], labels, _ref(row)

    async def add_flag(self, message_ids: list[int], flag: str) -> list[tuple[int, int, int | None, int | None]]:
        """Give these messages a keyword flag; returns (id, account, thread, mailbox) of those that lacked it."""
        rows = await self.db.fetch(
            """UPDATE message SET flags = flags || to_jsonb($2::text), flags_touched_at = now(), updated_at = now()
                WHERE id = ANY($1::bigint[]) AND NOT flags ? $2
                RETURNING id, account_id, thread_id, mailbox_id""",
            message_ids, flag,
        )
        return [(r["id"], r["account_id"], r["thread_id"], r["mailbox_id"]) for r in rows]
