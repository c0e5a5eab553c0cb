"""Destroyed messages: their rows deleted, and a tombstone each that remembers where the provider keeps the
message until it is deleted there too (and, for a while after, keeps a sync from storing it again)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from plmail.db.database import Database
from plmail.domain.enums import ProviderKind
from plmail.domain.ingest import ProviderRef
from plmail.domain.providers import Tombstone


@dataclass(frozen=True, slots=True)
class Doomed:
    """A message about to be destroyed, with what its tombstone and the change log need."""

    id: int
    account_id: int
    provider_kind: ProviderKind
    thread_id: int | None
    labels: tuple[int, ...]
    ref: ProviderRef
    rfc_message_id: str | None
    is_draft: bool


class TombstoneRepository:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def doomed(self, user_id: int, message_ids: Sequence[int]) -> list[Doomed]:
        rows = await self.db.fetch(
            """SELECT m.id, m.account_id, a.provider_kind, m.thread_id, m.mailbox_id, m.provider_container,
                      m.provider_key, m.rfc_message_id, (m.flags ? '$draft' OR m.flags ? '\\Draft') AS is_draft,
                      coalesce((SELECT array_agg(ml.label_id ORDER BY ml.label_id) FROM message_label ml
                                 WHERE ml.message_id = m.id), '{}') AS labels
                 FROM message m JOIN account a ON a.id = m.account_id
                WHERE a.user_id = $1 AND m.id = ANY($2::bigint[]) ORDER BY m.id""",
            user_id, list(message_ids),
        )
        return [Doomed(r["id"], r["account_id"], ProviderKind(r["provider_kind"]), r["thread_id"], tuple(r["labels"]),
                       ProviderRef(r["provider_container"], r["provider_key"], r["mailbox_id"]), r["rfc_message_id"],
                       r["is_draft"]) for r in rows]

    async def of_threads(self, user_id: int, thread_ids: Sequence[int]) -> list[int]:
        rows = await self.db.fetch(
            """SELECT m.id FROM message m JOIN account a ON a.id = m.account_id
                WHERE a.user_id = $1 AND m.thread_id = ANY($2::bigint[]) ORDER BY m.id""",
            user_id, list(thread_ids),
        )
        return [r["id"] for r in rows]

    async def with_label(self, user_id: int, label_id: int, limit: int) -> list[int]:
        """Messages of the user carrying the label (Trash, for emptying it)."""
        rows = await self.db.fetch(
            """SELECT ml.message_id FROM message_label ml JOIN message m ON m.id = ml.message_id
                 JOIN account a ON a.id = m.account_id
                WHERE ml.label_id = $2 AND a.user_id = $1 ORDER BY ml.message_id LIMIT $3""",
            user_id, label_id, limit,
        )
        return [r["message_id"] for r in rows]

    async def bury(self, doomed: Sequence[Doomed], *, remote: set[int]) -> list[int]:
        """Delete the messages (parts, labels and links go with them); those in `remote` leave a tombstone for
        their provider. Returns the ids deleted. Runs in the caller's transaction."""
        if not doomed:
            return []
        buried = [d for d in doomed if d.id in remote]
        if buried:
            await self.db.execute(
                """INSERT INTO message_tombstone (account_id, provider_container, provider_key, rfc_message_id,
                                                  attempts, last_error, created_at)
                   SELECT * , 0, '', now() FROM unnest($1::int[], $2::text[], $3::text[], $4::text[])""",
                [d.account_id for d in buried], [d.ref.container for d in buried], [d.ref.key for d in buried],
                [d.rfc_message_id for d in buried],
            )
        await self.db.execute("UPDATE submission SET message_id = NULL, draft_ref = NULL "
                              "WHERE message_id = ANY($1::bigint[])", [d.id for d in doomed])
        rows = await self.db.fetch("DELETE FROM message WHERE id = ANY($1::bigint[]) RETURNING id",
                                   [d.id for d in doomed])
        return [r["id"] for r in rows]

    async def pending(self, account_id: int, limit: int) -> list[Tombstone]:
        rows = await self.db.fetch(
            """SELECT id, account_id, provider_container, provider_key, rfc_message_id, attempts
                 FROM message_tombstone WHERE account_id = $1 AND done_at IS NULL ORDER BY id LIMIT $2""",
            account_id, limit,
        )
        return [Tombstone(r["id"], r["account_id"], ProviderRef(r["provider_container"], r["provider_key"]),
                          r["rfc_message_id"], r["attempts"])
                for r in rows]

    async def mark_done(self, tombstone_ids: Sequence[int]) -> None:
        if tombstone_ids:
            await self.db.execute("UPDATE message_tombstone SET done_at = now(), last_error = '' "
                                  "WHERE id = ANY($1::bigint[])", list(tombstone_ids))

    async def mark_failed(self, tombstone_id: int, error: str) -> None:
        await self.db.execute("UPDATE message_tombstone SET attempts = attempts + 1, last_error = $2 WHERE id = $1",
                              tombstone_id, error[:4000])

    async def prune(self, done_before: datetime) -> int:
        """Tombstones whose deletion at the provider is long done."""
        rows = await self.db.fetch("DELETE FROM message_tombstone WHERE done_at < $1 RETURNING id", done_before)
        return len(rows)

    async def count_pending(self, account_id: int) -> int:
        return int(await self.db.fetchval(
            "SELECT count(*) FROM message_tombstone WHERE account_id = $1 AND done_at IS NULL", account_id))
