"""Writes of the post-ingest pipeline: messages, parts, labels, skips.

Raw SQL throughout because bulk ingest is the hot path: rows are COPYed into a temporary stage and
moved with one INSERT … ON CONFLICT DO NOTHING, so a message that is already stored (an overlapping
batch, a retry, a duplicate inside the batch) is skipped by the unique indexes instead of failing
the batch.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from plmail.db.database import Database

MESSAGE_COLUMNS: tuple[str, ...] = (
    "id", "account_id", "mailbox_id", "imap_uid", "rfc_message_id", "gmail_id", "graph_id", "provider_thread_key",
    "gmail_label_ids", "headers", "subject", "from_address", "from_name", "to_addresses", "cc_addresses",
    "bcc_addresses", "reply_to", "sent_at", "received_at", "seen_at", "starred_at", "in_reply_to",
    "thread_references", "size", "has_attachments", "flags", "body_text", "body_html", "body_html_safe", "preview",
    "category", "content_hash", "raw_path", "synced_at", "category_held_at", "thread_id", "thread_error",
)
PART_COLUMNS: tuple[str, ...] = (
    "message_id", "part_path", "content_type", "charset", "filename", "content_id", "disposition", "size", "sha256",
    "is_inline", "is_calendar",
)
_COLUMN_LIST = ", ".join(MESSAGE_COLUMNS)
_STAGE_READY = (
    f"CREATE TEMP TABLE IF NOT EXISTS message_stage ON COMMIT DELETE ROWS AS "
    f"SELECT {_COLUMN_LIST} FROM message WITH NO DATA; DELETE FROM message_stage"
)


class IngestRepository:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def allocate_message_ids(self, count: int) -> list[int]:
        """Ids before insert, so sanitised HTML can point at its own parts and COPY needs no RETURNING."""
        if count == 0:
            return []
        rows = await self.db.fetch("SELECT nextval('message_id_seq') AS id FROM generate_series(1, $1)", count)
        return [r["id"] for r in rows]

    async def insert_messages(self, records: Sequence[tuple[Any, ...]]) -> set[int]:
        """Insert what is new; returns the ids that were inserted (duplicates are left out)."""
        if not records:
            return set()
        if not self.db.in_transaction():
            # the stage empties itself at every commit, which outside a transaction is every statement
            raise RuntimeError("insert_messages() needs an open transaction")
        async with self.db.connection() as conn:
            # One round trip to make sure the stage exists and is empty (an earlier savepoint of this
            # transaction may have left rows); DELETE, not TRUNCATE, which would give the table a new file
            # each time, and the commit empties it for the next transaction anyway.
            await conn.execute(_STAGE_READY)
            await conn.copy_records_to_table("message_stage", records=records, columns=list(MESSAGE_COLUMNS))
            rows = await conn.fetch(
                f"INSERT INTO message ({_COLUMN_LIST}) SELECT {_COLUMN_LIST} FROM message_stage ORDER BY id "
                f"ON CONFLICT DO NOTHING RETURNING id"
            )
        return {r["id"] for r in rows}

    async def already_stored(
        self, account_id: int, keys: Sequence[tuple[int, str | None, str | None, int | None, int | None]]
    ) -> set[int]:
        """Which of (our id, gmail id, graph id, mailbox id, uid) the account already holds under its provider id."""
        keyed = [k for k in keys if k[1] is not None or k[2] is not None or (k[3] is not None and k[4] is not None)]
        if not keyed:
            return set()
        rows = await self.db.fetch(
            """SELECT x.i
                 FROM unnest($2::bigint[], $3::text[], $4::text[], $5::int[], $6::bigint[]) AS x(i, g, gr, mb, u)
                WHERE EXISTS (SELECT 1 FROM message m WHERE m.gmail_id = x.g AND m.account_id = $1)
                   OR EXISTS (SELECT 1 FROM message m WHERE m.graph_id = x.gr AND m.account_id = $1)
                   OR EXISTS (SELECT 1 FROM message m WHERE m.mailbox_id = x.mb AND m.imap_uid = x.u)""",
            account_id, [k[0] for k in keyed], [k[1] for k in keyed], [k[2] for k in keyed], [k[3] for k in keyed],
            [k[4] for k in keyed],
        )
        return {r["i"] for r in rows}

    async def insert_parts(self, records: Sequence[tuple[Any, ...]]) -> None:
        if records:
            async with self.db.connection() as conn:
                await conn.copy_records_to_table("message_part", records=records, columns=list(PART_COLUMNS))

    async def add_labels(self, pairs: Sequence[tuple[int, int]]) -> None:
        if pairs:
            await self.db.execute(
                """INSERT INTO message_label (message_id, label_id)
                   SELECT m, l FROM unnest($1::bigint[], $2::int[]) AS x(m, l)
                   ON CONFLICT DO NOTHING""",
                [p[0] for p in pairs], [p[1] for p in pairs],
            )

    async def known_content_hashes(self, account_id: int, hashes: Sequence[str]) -> dict[str, int]:
        rows = await self.db.fetch(
            "SELECT content_hash, min(id) AS id FROM message WHERE account_id = $1 AND content_hash = ANY($2::text[]) "
            "GROUP BY content_hash",
            account_id, list(hashes),
        )
        return {r["content_hash"]: r["id"] for r in rows}

    async def record_skip(self, account_id: int, source_ref: str, reason: str, content_hash: str | None) -> None:
        await self.db.execute(
            "INSERT INTO ingest_skip (account_id, source_ref, reason, content_hash, created_at) "
            "VALUES ($1, $2, $3, $4, now())",
            account_id, source_ref[:1000], reason[:4000], content_hash,
        )

    async def bindings_for(self, account_id: int, label_ids: Sequence[int]) -> list[int]:
        rows = await self.db.fetch(
            "SELECT id FROM label_binding WHERE account_id = $1 AND label_id = ANY($2::int[])",
            account_id, list(label_ids),
        )
        return [r["id"] for r in rows]

    async def skip_count(self, account_id: int) -> int:
        return int(await self.db.fetchval("SELECT count(*) FROM ingest_skip WHERE account_id = $1", account_id))
