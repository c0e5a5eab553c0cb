"""Emails and Threads as JMAP reads them, always within the accounts of the asking user that the JMAP account
holds (one, or all of them for the unified account).

The label ids come from message_label, the authoritative per-message labels — never thread_label,
which is the union over a thread and would put every message of a conversation in every mailbox.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import asyncpg

from plmail.db.database import Database
from plmail.db.repos.threads import thread_tab
from plmail.domain.mailstore import EmailRow, PartRow

# An Email's own category is the user's "file into category" verdict when a rule wrote one.
_BASE = """m.id, m.account_id, m.thread_id, m.size, m.received_at, m.sent_at, m.created_at, m.rfc_message_id,
           m.in_reply_to, m.thread_references, m.subject, m.from_address, m.from_name, m.to_addresses, m.cc_addresses,
           m.bcc_addresses, m.reply_to, m.seen_at IS NOT NULL AS seen, m.starred_at IS NOT NULL AS starred, m.flags,
           m.has_attachments, m.preview, coalesce(m.rule_category, m.category) AS category, m.raw_path,
           octet_length(m.body_text) AS text_size, octet_length(m.body_html_safe) AS html_size,
           CASE WHEN coalesce(m.subject, '') <> '' THEN true
                ELSE EXISTS (SELECT 1 FROM jsonb_object_keys(coalesce(m.headers, '{}'::jsonb)) k
                              WHERE lower(k) = 'subject') END AS has_subject"""


def loads(value: Any) -> Any:
    return json.loads(value) if isinstance(value, str) else value


def _strings(value: Any) -> tuple[str, ...]:
    loaded = loads(value)
    return tuple(str(v) for v in loaded) if isinstance(loaded, list) else ()


def _addresses(value: Any) -> tuple[dict[str, str], ...]:
    loaded = loads(value)
    return tuple(a for a in loaded if isinstance(a, dict)) if isinstance(loaded, list) else ()


def _email(r: asyncpg.Record, with_headers: bool, with_bodies: bool, with_tree: bool = False) -> EmailRow:
    return EmailRow(
        id=r["id"], account_id=r["account_id"], thread_id=r["thread_id"], size=r["size"] or 0,
        received_at=r["received_at"],
        sent_at=r["sent_at"], created_at=r["created_at"], message_id=r["rfc_message_id"],
        in_reply_to=_strings(r["in_reply_to"]), references=_strings(r["thread_references"]),
        subject=r["subject"] or "", has_subject=r["has_subject"], from_address=r["from_address"],
        from_name=r["from_name"],
        to=_addresses(r["to_addresses"]), cc=_addresses(r["cc_addresses"]), bcc=_addresses(r["bcc_addresses"]),
        reply_to=_addresses(r["reply_to"]), seen=r["seen"], starred=r["starred"], flags=_strings(r["flags"]),
        has_attachments=r["has_attachments"], preview=r["preview"] or "", category=r["category"],
        raw_path=r["raw_path"],
        text_size=r["text_size"], html_size=r["html_size"],
        headers=(loads(r["headers"]) or {}) if with_headers else None,
        body_text=r["body_text"] if with_bodies else None,
        body_html_safe=r["body_html_safe"] if with_bodies else None,
        mime_tree=loads(r["mime_tree"]) if with_tree else None,
    )


class JmapEmailRepository:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def emails(self, account_ids: Sequence[int], ids: Sequence[int], *, headers: bool, bodies: bool,
                     tree: bool = False) -> list[EmailRow]:
        columns = (_BASE + (", m.headers" if headers else "") + (", m.body_text, m.body_html_safe" if bodies else "")
                   + (", m.mime_tree" if tree else ""))
        rows = await self.db.fetch(
            f"SELECT {columns} FROM message m WHERE m.account_id = ANY($1::bigint[]) AND m.id = ANY($2::bigint[])",
            list(account_ids), list(ids),
        )
        return [_email(r, headers, bodies, tree) for r in rows]

    async def remember_tree(self, message_id: int, tree: dict[str, Any]) -> None:
        """The MIME tree read from the original of a message stored before trees were kept."""
        await self.db.execute("UPDATE message SET mime_tree = $2::jsonb WHERE id = $1 AND mime_tree IS NULL",
                              message_id, json.dumps(tree))

    async def count(self, account_ids: Sequence[int]) -> int:
        return int(await self.db.fetchval("SELECT count(*) FROM message WHERE account_id = ANY($1::bigint[])",
                                          list(account_ids)))

    async def all_ids(self, account_ids: Sequence[int], limit: int) -> list[int]:
        rows = await self.db.fetch("SELECT id FROM message WHERE account_id = ANY($1::bigint[]) ORDER BY id LIMIT $2",
                                   list(account_ids), limit)
        return [r["id"] for r in rows]

    async def labels(self, message_ids: Sequence[int]) -> dict[int, list[int]]:
        """Each message's own labels (message_label): the thread's union would put it in every mailbox."""
        rows = await self.db.fetch(
            "SELECT message_id, label_id FROM message_label WHERE message_id = ANY($1::bigint[])", list(message_ids))
        found: dict[int, list[int]] = {}
        for r in rows:
            found.setdefault(r["message_id"], []).append(r["label_id"])
        return found

    async def parts(self, message_ids: Sequence[int]) -> list[PartRow]:
        rows = await self.db.fetch(
            """SELECT id, message_id, part_path, content_type, charset, filename, content_id, disposition,
                      coalesce(size, 0) AS size, sha256
                 FROM message_part WHERE message_id = ANY($1::bigint[]) ORDER BY message_id, id""",
            list(message_ids),
        )
        return [PartRow(r["id"], r["message_id"], r["part_path"], r["content_type"], r["charset"], r["filename"],
                        r["content_id"], r["disposition"], r["size"], r["sha256"]) for r in rows]

    async def existing(self, account_ids: Sequence[int], ids: Sequence[int]) -> set[int]:
        rows = await self.db.fetch(
            "SELECT id FROM message WHERE account_id = ANY($1::bigint[]) AND id = ANY($2::bigint[])",
            list(account_ids), list(ids))
        return {r["id"] for r in rows}

    async def thread_emails(self, account_ids: Sequence[int], thread_ids: Sequence[int]
                            ) -> dict[int, tuple[list[int], str | None]]:
        """thread id -> (email ids oldest first, the thread's category)."""
        rows = await self.db.fetch(
            f"""SELECT t.id, {thread_tab("t")} AS category,
                      array_agg(m.id ORDER BY coalesce(m.received_at, m.sent_at, m.created_at), m.id) AS ids
                 FROM message_thread t JOIN message m ON m.thread_id = t.id
                WHERE t.account_id = ANY($1::bigint[]) AND t.id = ANY($2::bigint[]) GROUP BY t.id""",
            list(account_ids), list(thread_ids),
        )
        return {r["id"]: (list(r["ids"]), r["category"]) for r in rows}

    async def thread_ids(self, account_ids: Sequence[int], limit: int) -> list[int]:
        rows = await self.db.fetch(
            "SELECT id FROM message_thread WHERE account_id = ANY($1::bigint[]) ORDER BY id LIMIT $2",
            list(account_ids), limit)
        return [r["id"] for r in rows]

    async def thread_categories(self, thread_ids: Sequence[int]) -> dict[int, str | None]:
        rows = await self.db.fetch(f"SELECT t.id, {thread_tab('t')} AS category FROM message_thread t "
                                   "WHERE t.id = ANY($1::bigint[])", list(thread_ids))
        return {r["id"]: r["category"] for r in rows}

    async def emails_of_threads(self, account_ids: Sequence[int], thread_ids: Sequence[int]) -> list[int]:
        rows = await self.db.fetch(
            "SELECT id FROM message WHERE account_id = ANY($1::bigint[]) AND thread_id = ANY($2::bigint[])",
            list(account_ids), list(thread_ids))
        return [r["id"] for r in rows]

    async def threads_of_emails(self, account_ids: Sequence[int], ids: Sequence[int]) -> list[int]:
        rows = await self.db.fetch(
            "SELECT DISTINCT thread_id FROM message WHERE account_id = ANY($1::bigint[]) AND id = ANY($2::bigint[]) "
            "AND thread_id IS NOT NULL", list(account_ids), list(ids))
        return [r["thread_id"] for r in rows]

    async def flags(self, account_ids: Sequence[int], ids: Sequence[int]) -> dict[int, tuple[str, ...]]:
        rows = await self.db.fetch(
            "SELECT id, flags FROM message WHERE account_id = ANY($1::bigint[]) AND id = ANY($2::bigint[])",
            list(account_ids), list(ids))
        return {r["id"]: _strings(r["flags"]) for r in rows}
