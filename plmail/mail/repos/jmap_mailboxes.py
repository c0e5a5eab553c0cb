"""Labels as JMAP Mailboxes: one label binding per (label, account), its id the Mailbox id; in the unified
account the label itself, its id the Mailbox id."""

from __future__ import annotations

from collections.abc import Sequence

from plmail.db.database import Database
from plmail.domain.mailstore import MailboxCounts, MailboxRow


class JmapMailboxRepository:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def unbound(self, user_id: int, account_ids: Sequence[int]) -> list[int]:
        """The accounts (of `account_ids`) in which some label of the user lacks a binding; the common answer is
        none, asked in one statement for all of them."""
        rows = await self.db.fetch(
            """SELECT acc.id FROM unnest($2::bigint[]) AS acc(id)
                WHERE EXISTS (SELECT 1 FROM label l WHERE l.user_id = $1 AND NOT EXISTS (
                          SELECT 1 FROM label_binding b WHERE b.label_id = l.id AND b.account_id = acc.id))
                ORDER BY acc.id""",
            user_id, list(account_ids),
        )
        return [r["id"] for r in rows]

    async def bind_missing(self, user_id: int, account_id: int) -> list[int]:
        """Bind every label of the user to the account where no binding exists yet; returns the new ids."""
        rows = await self.db.fetch(
            """INSERT INTO label_binding (label_id, account_id, mailbox_id, provider_key, provider_tag, created_at,
                                          updated_at)
               SELECT l.id, a.id, NULL, NULL, NULL, now(), now()
                 FROM label l JOIN account a ON a.user_id = l.user_id AND a.id = $2
                WHERE l.user_id = $1
                  AND NOT EXISTS (SELECT 1 FROM label_binding b WHERE b.label_id = l.id AND b.account_id = a.id)
               ON CONFLICT (label_id, account_id) DO NOTHING
               RETURNING id""",
            user_id, account_id,
        )
        return sorted(r["id"] for r in rows)

    async def mailboxes(self, user_id: int, account_id: int) -> list[MailboxRow]:
        rows = await self.db.fetch(
            """SELECT b.id AS binding_id, l.id AS label_id, l.name, l.role, l.parent_id, pb.id AS parent_binding,
                      l.sort_order, l.is_visible
                 FROM label_binding b JOIN label l ON l.id = b.label_id
                 LEFT JOIN label_binding pb ON pb.label_id = l.parent_id AND pb.account_id = b.account_id
                WHERE b.account_id = $2 AND l.user_id = $1
                ORDER BY l.sort_order NULLS LAST, lower(l.name), b.id""",
            user_id, account_id,
        )
        return [MailboxRow(r["binding_id"], r["label_id"], r["name"], r["role"], r["parent_id"], r["parent_binding"],
                           r["sort_order"], r["is_visible"]) for r in rows]

    async def labels(self, user_id: int) -> list[MailboxRow]:
        """The user's labels as the unified account's Mailboxes (the same tree the web sidebar shows)."""
        rows = await self.db.fetch(
            """SELECT l.id, l.name, l.role, l.parent_id, l.sort_order, l.is_visible FROM label l
                WHERE l.user_id = $1 ORDER BY l.sort_order NULLS LAST, lower(l.name), l.id""",
            user_id,
        )
        return [MailboxRow(r["id"], r["id"], r["name"], r["role"], r["parent_id"], r["parent_id"], r["sort_order"],
                           r["is_visible"]) for r in rows]

    async def owned_labels(self, user_id: int, label_ids: Sequence[int]) -> dict[int, int]:
        """label id -> label id for the user's own labels among `label_ids`."""
        rows = await self.db.fetch("SELECT id FROM label WHERE user_id = $1 AND id = ANY($2::int[])",
                                   user_id, list(label_ids))
        return {r["id"]: r["id"] for r in rows}

    async def counts(self, account_ids: Sequence[int], label_ids: Sequence[int]) -> dict[int, MailboxCounts]:
        """Emails and threads per label within the accounts, read from the kept counts (binned mail included);
        unread emails leave drafts out (RFC 8621 §2)."""
        if not label_ids:
            return {}
        rows = await self.db.fetch(
            """SELECT label_id, sum(emails)::int AS total, sum(unread_emails)::int AS unread,
                      sum(email_threads)::int AS threads, sum(unread_email_threads)::int AS unread_threads
                 FROM label_count WHERE account_id = ANY($1::int[]) AND label_id = ANY($2::int[])
                GROUP BY label_id HAVING sum(emails) > 0""",
            list(account_ids), list(label_ids),
        )
        return {r["label_id"]: MailboxCounts(r["total"], r["unread"], r["threads"], r["unread_threads"]) for r in rows}

    async def labels_of_bindings(self, user_id: int, account_id: int, binding_ids: Sequence[int]) -> dict[int, int]:
        """binding id -> label id, for bindings of this account owned by this user."""
        if not binding_ids:
            return {}
        rows = await self.db.fetch(
            """SELECT b.id, b.label_id FROM label_binding b JOIN label l ON l.id = b.label_id
                WHERE b.account_id = $2 AND l.user_id = $1 AND b.id = ANY($3::int[])""",
            user_id, account_id, list(binding_ids),
        )
        return {r["id"]: r["label_id"] for r in rows}

    async def bindings_of_tree(self, user_id: int, label_id: int) -> list[tuple[int, int]]:
        """(account id, binding id) of a label and everything nested under it, across the user's accounts."""
        rows = await self.db.fetch(
            """WITH RECURSIVE tree(id) AS (
                   SELECT id FROM label WHERE id = $2 AND user_id = $1
                   UNION SELECT l.id FROM label l JOIN tree ON l.parent_id = tree.id)
               SELECT b.account_id, b.id FROM label_binding b WHERE b.label_id IN (SELECT id FROM tree)""",
            user_id, label_id,
        )
        return [(r["account_id"], r["id"]) for r in rows]

    async def has_children(self, user_id: int, label_id: int) -> bool:
        return bool(await self.db.fetchval(
            "SELECT EXISTS (SELECT 1 FROM label WHERE user_id = $1 AND parent_id = $2)", user_id, label_id))

    async def materialising_accounts(self, user_id: int, label_ids: list[int]) -> list[int]:
        """The user's accounts whose provider holds one of these labels as a folder or label of its own (not only
        as a tag on messages), in the user's order of accounts."""
        rows = await self.db.fetch(
            """SELECT a.id FROM account a
                WHERE a.user_id = $1 AND EXISTS (
                      SELECT 1 FROM label_binding b
                       WHERE b.account_id = a.id AND b.label_id = ANY($2::int[])
                         AND (b.mailbox_id IS NOT NULL OR b.provider_key IS NOT NULL))
                ORDER BY a.sort_order, a.id""",
            user_id, label_ids,
        )
        return [r["id"] for r in rows]

    async def mail_only_in_tree(self, user_id: int, label_id: int) -> list[int]:
        """The user's messages in a label or its nested labels that have no label outside them."""
        rows = await self.db.fetch(
            """WITH RECURSIVE tree(id) AS (
                   SELECT id FROM label WHERE id = $2 AND user_id = $1
                   UNION SELECT l.id FROM label l JOIN tree ON l.parent_id = tree.id)
               SELECT DISTINCT ml.message_id FROM message_label ml
                 JOIN message m ON m.id = ml.message_id JOIN account a ON a.id = m.account_id
                WHERE ml.label_id IN (SELECT id FROM tree) AND a.user_id = $1
                  AND NOT EXISTS (SELECT 1 FROM message_label o
                                   WHERE o.message_id = ml.message_id AND o.label_id NOT IN (SELECT id FROM tree))
                ORDER BY ml.message_id""",
            user_id, label_id,
        )
        return [r["message_id"] for r in rows]

    async def has_mail(self, user_id: int, label_id: int) -> bool:
        return bool(await self.db.fetchval(
            """SELECT EXISTS (SELECT 1 FROM message_label ml JOIN message m ON m.id = ml.message_id
                                JOIN account a ON a.id = m.account_id
                               WHERE ml.label_id = $2 AND a.user_id = $1)""",
            user_id, label_id,
        ))
