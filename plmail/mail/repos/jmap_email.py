"""Emails and Threads as JMAP reads them, always within the accounts of the asking user that the JMAP account
holds (one, or all of them for the unified account).

The label ids come from message_label, the authoritative per-message labels — never thread_label,
which is the union over a thread and would put every message of a conversation in every mailbox.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Sequence
from typing import Any

import asyncpg

from plmail.db.database import Database
from plmail.db.repos.threads import thread_tab
from plmail.domain.mailstore import EmailRow, PartRow

# An Email's own category is the user's "file into category" verdict when a rule wrote one.
_BASE = """m.id, m.account_id, m.thread_id, m.size, m.received_at, m.sent_at, m.created_at, m.rfc_message_id,
           {in_reply_to}, {thread_references}, m.subject, m.from_address, m.from_name, {to_addresses}, {cc_addresses},
           {bcc_addresses}, {reply_to}, m.seen_at IS NOT NULL AS seen, m.starred_at IS NOT NULL AS starred, m.flags,
           m.has_attachments, m.preview, coalesce(m.rule_category, m.category) AS category, m.raw_path,
           octet_length(m.body_text) AS text_size, octet_length(m.body_html_safe) AS html_size,
           CASE WHEN coalesce(m.subject, '') <> '' THEN true
                ELSE EXISTS (SELECT 1 FROM jsonb_object_keys(coalesce(m.headers, '{{}}'::jsonb)) k
                              WHERE lower(k) = 'subject') END AS has_subject"""
# The lists of addresses and ids each only one Email property shows: read (and decoded) only when it is asked for.
_ONLY_FOR = {"in_reply_to": "inReplyTo", "thread_references": "references", "to_addresses": "to",
             "cc_addresses": "cc", "bcc_addresses": "bcc", "reply_to": "replyTo"}


def _columns(properties: Collection[str] | None, *, headers: bool, bodies: bool, tree: bool) -> str:
    """The columns of an EmailRow; with `properties`, the lists no asked-for property shows come back empty."""
    lists = {column: f"m.{column}" if properties is None or shown in properties else f"NULL::jsonb AS {column}"
             for column, shown in _ONLY_FOR.items()}
    return (_BASE.format(**lists) + (", m.headers" if headers else "")
            + (", m.body_text, m.body_html_safe" if bodies else "") + (", m.mime_tree" if tree else ""))


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
                     tree: bool = False, properties: Collection[str] | None = None) -> list[EmailRow]:
        rows = await self.db.fetch(
            f"""SELECT {_columns(properties, headers=headers, bodies=bodies, tree=tree)} FROM message m
                 WHERE m.account_id = ANY($1::bigint[]) AND m.id = ANY($2::bigint[])""",
            list(account_ids), list(ids),
        )
        return [_email(r, headers, bodies, tree) for r in rows]

    async def emails_in_mailboxes(self, account_ids: Sequence[int], ids: Sequence[int], *, unified: bool,
                                  headers: bool, bodies: bool, tree: bool = False,
                                  properties: Collection[str] | None = None, unbound_of: int | None = None
                                  ) -> tuple[list[tuple[EmailRow, tuple[int, ...]]], bool]:
        """The rows with each email's Mailbox ids in the same statement: its own labels (message_label) in the
        unified account, where a Mailbox is a label, else those labels' bindings in the email's account. With
        `unbound_of` (a user id), also whether some label of that user lacks a binding in one of the accounts
        (asked once, beside the rows; False when no row was found)."""
        mailboxes = ("SELECT ml.label_id FROM message_label ml WHERE ml.message_id = m.id ORDER BY ml.label_id"
                     if unified else
                     """SELECT b.id FROM message_label ml
                          JOIN label_binding b ON b.label_id = ml.label_id AND b.account_id = m.account_id
                         WHERE ml.message_id = m.id ORDER BY b.id""")
        unbound = """EXISTS (SELECT 1 FROM unnest($1::bigint[]) AS acc(id) JOIN label l ON l.user_id = $3
                              WHERE NOT EXISTS (SELECT 1 FROM label_binding b
                                                 WHERE b.label_id = l.id AND b.account_id = acc.id))"""
        rows = await self.db.fetch(
            f"""SELECT {_columns(properties, headers=headers, bodies=bodies, tree=tree)},
                       ARRAY({mailboxes}) AS mailbox_ids, {unbound if unbound_of is not None else "false"} AS unbound
                  FROM message m WHERE m.account_id = ANY($1::bigint[]) AND m.id = ANY($2::bigint[])""",
            list(account_ids), list(ids), *(() if unbound_of is None else (unbound_of,)),
        )
        return ([(_email(r, headers, bodies, tree), tuple(r["mailbox_ids"])) for r in rows],
                any(r["unbound"] for r in rows[:1]))

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
