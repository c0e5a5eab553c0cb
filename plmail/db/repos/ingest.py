"""Writes of the post-ingest pipeline: messages, parts, labels, skips.

Raw SQL throughout because bulk ingest is the hot path: a batch of messages goes in as one INSERT from
column arrays … ON CONFLICT DO NOTHING, so a message that is already stored (an overlapping batch, a
retry, a duplicate inside the batch) is skipped by the unique indexes instead of failing the batch.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from plmail.db.database import Database
from plmail.domain.ingest import ProviderRef

# Every column a stored message is written with, and its type for the array it travels in.
_MESSAGE_COLUMN_TYPES: tuple[tuple[str, str], ...] = (
    ("id", "bigint"), ("account_id", "int"), ("mailbox_id", "int"), ("provider_container", "text"),
    ("provider_key", "text"), ("rfc_message_id", "text"), ("provider_thread_key", "text"),
    ("provider_labels", "jsonb"), ("headers", "jsonb"), ("subject", "text"), ("from_address", "text"),
    ("from_name", "text"), ("to_addresses", "jsonb"), ("cc_addresses", "jsonb"), ("bcc_addresses", "jsonb"),
    ("reply_to", "jsonb"), ("sent_at", "timestamptz"), ("received_at", "timestamptz"), ("seen_at", "timestamptz"),
    ("starred_at", "timestamptz"), ("in_reply_to", "jsonb"), ("thread_references", "jsonb"), ("size", "int"),
    ("has_attachments", "boolean"), ("flags", "jsonb"), ("body_text", "text"), ("body_html", "text"),
    ("body_html_safe", "text"), ("preview", "text"), ("category", "text"), ("content_hash", "text"),
    ("raw_path", "text"), ("synced_at", "timestamptz"), ("category_held_at", "timestamptz"), ("parse_note", "text"),
    ("mime_tree", "jsonb"), ("sender_auth", "jsonb"),
    ("thread_id", "bigint"), ("thread_error", "text"),
)
MESSAGE_COLUMNS: tuple[str, ...] = tuple(name for name, _ in _MESSAGE_COLUMN_TYPES)
PART_COLUMNS: tuple[str, ...] = (
    "message_id", "part_path", "content_type", "charset", "filename", "content_id", "disposition", "size", "sha256",
    "is_inline", "is_calendar",
)
# Straight from parameters, not through a COPYed stage: a stage stores (and compresses) every body once
# more before the real insert reads it back.
_INSERT_MESSAGES = (
    f"INSERT INTO message ({', '.join(MESSAGE_COLUMNS)}) "
    f"SELECT * FROM unnest({', '.join(f'${n}::{kind}[]' for n, (_, kind) in enumerate(_MESSAGE_COLUMN_TYPES, 1))}) "
    f"ORDER BY 1 ON CONFLICT DO NOTHING RETURNING id"
)


def ref_columns(ref: ProviderRef) -> tuple[int | None, str, str | None]:
    """A provider reference as the message row keeps it (the third to fifth of MESSAGE_COLUMNS): the folder row
    it lies in, and the container and key the unique index reads."""
    return ref.folder_id, ref.container, ref.key


class IngestRepository:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def open_batch(self, *, unflushed: bool = False) -> None:
        """For the rest of the transaction, let statements keep their plans, and hold the label counts' refreshes
        for `close_batch`. The pool plans every execution afresh (`engine.py`: page queries must see how rare a
        searched word is), and that held for what the triggers and foreign keys run per ingest statement too (label
        counts, `binned`, key checks): measured on a 6,000-message import, re-planning them was a fifth of the
        database's time. A batch's statements are by id and by array, where a kept plan is as good as a fresh one.
        Each statement of a batch fired the count triggers for the same threads; they now refresh once (migration
        2026-12-07T15:00).

        `unflushed`: the batch commits without waiting for its WAL to reach the disk (`synchronous_commit` off for
        this transaction alone). Only for mail the provider still holds: a crash of the database loses at most the
        last such batches, and with them the progress written after them (the WAL is flushed in order, so any
        later flushed commit makes them durable), so they are fetched again."""
        await self.db.execute("SELECT set_config('plan_cache_mode', 'auto', true), "
                              "set_config('plmail.defer_label_counts', 'on', true)"
                              + (", set_config('synchronous_commit', 'off', true)" if unflushed else ""))

    async def close_batch(self) -> None:
        """Refresh the label counts of every thread the batch touched; called before its transaction commits."""
        await self.db.execute("SELECT plmail_flush_label_counts()")

    async def allocate_message_ids(self, count: int) -> list[int]:
        """Ids before insert, so sanitised HTML can point at its own parts and threads are planned per message."""
        if count == 0:
            return []
        rows = await self.db.fetch("SELECT nextval('message_id_seq') AS id FROM generate_series(1, $1)", count)
        return [r["id"] for r in rows]

    async def insert_messages(self, records: Sequence[tuple[Any, ...]], *, search_later: bool = False) -> set[int]:
        """Insert what is new; returns the ids that were inserted (duplicates are left out). With `search_later`
        the rows wait in message_search_pending for `index_search` instead of being indexed for search now."""
        if not records:
            return set()
        columns = [list(column) for column in zip(*records, strict=True)]
        # Read by the insert's trigger (migration 2026-12-07T13:45); local to the transaction, and set on every
        # insert because one transaction may hold a live account's batch beside an importing one's.
        await self.db.execute("SELECT set_config('plmail.search_later', $1, true)", "on" if search_later else "off")
        rows = await self.db.fetch(_INSERT_MESSAGES, *columns)
        return {r["id"] for r in rows}

    async def stored_or_tombstoned(self, account_id: int, refs: Sequence[tuple[int, ProviderRef]]) -> set[int]:
        """Which of (our id, provider reference) the account already holds under its provider id, or name a message
        the user destroyed (never stored again); one question, as it is asked for every batch."""
        keyed = [(i, r.container, r.key) for i, r in refs if r.key is not None]
        if not keyed:
            return set()
        rows = await self.db.fetch(
            """SELECT x.i FROM unnest($2::bigint[], $3::text[], $4::text[]) AS x(i, c, k)
                WHERE EXISTS (SELECT 1 FROM message m WHERE m.provider_container = x.c AND m.provider_key = x.k
                                 AND m.account_id = $1)
                   OR EXISTS (SELECT 1 FROM message_tombstone t WHERE t.account_id = $1
                                 AND t.provider_container = x.c AND t.provider_key = x.k)""",
            account_id, [k[0] for k in keyed], [k[1] for k in keyed], [k[2] for k in keyed],
        )
        return {r["i"] for r in rows}

    async def set_categories_and_threads(self, rows: Sequence[tuple[int, str, int | None]]) -> None:
        """(message id, category, thread id) of stored rows that were threaded again."""
        if not rows:
            return
        await self.db.execute(
            """UPDATE message m SET category = x.c, thread_id = x.t, thread_error = NULL, updated_at = now()
                 FROM unnest($1::bigint[], $2::text[], $3::bigint[]) AS x(i, c, t) WHERE m.id = x.i""",
            [r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows],
        )

    async def adopt_sent_copies(self, account_id: int, copies: Sequence[tuple[str, ProviderRef]]) -> set[str]:
        """Sent copies a provider filed itself of messages plmail sent: the stored message takes the copy's
        provider id, so the copy is not stored a second time, and its submission stops waiting. Returns the
        Message-IDs adopted."""
        if not copies:
            return set()
        rows = await self.db.fetch(
            """WITH x AS (SELECT * FROM unnest($2::text[], $3::int[], $4::text[], $5::text[])
                            AS x(rfc, mb, c, k)),
                    adopted AS (
                      UPDATE submission s SET awaiting_copy = false, updated_at = now()
                        FROM message m, x
                       WHERE s.account_id = $1 AND s.awaiting_copy AND m.id = s.message_id AND m.rfc_message_id = x.rfc
                      RETURNING m.id, x.rfc, x.mb, x.c, x.k)
               UPDATE message m SET mailbox_id = a.mb, provider_container = a.c, provider_key = a.k,
                                    synced_at = now(), updated_at = now()
                 FROM adopted a WHERE m.id = a.id
               RETURNING a.rfc""",
            account_id, [c[0] for c in copies], [c[1].folder_id for c in copies], [c[1].container for c in copies],
            [c[1].key for c in copies],
        )
        return {r["rfc"] for r in rows}

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

    async def add_label_where_missing(self, message_ids: Sequence[int], label_id: int) -> list[tuple[int, int | None]]:
        """Give these messages the label; returns (message id, thread id) of those that did not have it yet."""
        rows = await self.db.fetch(
            """WITH added AS (
                 INSERT INTO message_label (message_id, label_id)
                 SELECT m, $2 FROM unnest($1::bigint[]) AS m ON CONFLICT DO NOTHING RETURNING message_id)
               SELECT m.id, m.thread_id FROM message m JOIN added a ON a.message_id = m.id""",
            message_ids, label_id,
        )
        return [(r["id"], r["thread_id"]) for r in rows]

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
