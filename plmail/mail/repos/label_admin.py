"""Label administration: bindings, renames, nesting, visibility and deletion."""

from __future__ import annotations

from plmail.db.database import Database


class LabelAdminRepository:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def upsert_binding(
        self, label_id: int, account_id: int, mailbox_id: int | None, provider_key: str | None,
        provider_tag: str | None,
    ) -> int:
        """The binding of (label, account); what it already knows is kept where the new handle says nothing."""
        async with self.db.transaction():
            if mailbox_id is not None:
                # A folder is bound to one label: a renamed folder hands its mailbox to the new label.
                await self.db.execute(
                    "UPDATE label_binding SET mailbox_id = NULL, updated_at = now() "
                    "WHERE mailbox_id = $1 AND NOT (label_id = $2 AND account_id = $3)",
                    mailbox_id, label_id, account_id,
                )
            value = await self.db.fetchval(
                """INSERT INTO label_binding (label_id, account_id, mailbox_id, provider_key, provider_tag, created_at,
                                              updated_at)
                   VALUES ($1, $2, $3, $4, $5, now(), now())
                   ON CONFLICT (label_id, account_id) DO UPDATE SET
                       mailbox_id = coalesce(EXCLUDED.mailbox_id, label_binding.mailbox_id),
                       provider_key = coalesce(EXCLUDED.provider_key, label_binding.provider_key),
                       provider_tag = coalesce(EXCLUDED.provider_tag, label_binding.provider_tag),
                       updated_at = now()
                   RETURNING id""",
                label_id, account_id, mailbox_id, provider_key, provider_tag,
            )
        return int(value)

    async def exists(self, user_id: int, parent_id: int | None, name: str, *, exclude: int | None = None) -> bool:
        return bool(await self.db.fetchval(
            """SELECT EXISTS (SELECT 1 FROM label WHERE user_id = $1 AND coalesce(parent_id, 0) = coalesce($2::int, 0)
                                 AND lower(name) = lower($3) AND id IS DISTINCT FROM $4)""",
            user_id, parent_id, name, exclude,
        ))

    async def create(self, user_id: int, name: str, parent_id: int | None, color: str | None) -> int:
        return int(await self.db.fetchval(
            """INSERT INTO label (user_id, parent_id, name, role, color, is_visible, sort_order, created_at, updated_at)
               VALUES ($1, $2, $3, NULL, $4, true, NULL, now(), now()) RETURNING id""",
            user_id, parent_id, name, color,
        ))

    async def update(
        self, label_id: int, *, name: str | None, color: str | None, parent_id: int | None, visible: bool | None,
        sort_order: int | None = None,
    ) -> None:
        await self.db.execute(
            """UPDATE label SET name = coalesce($2, name), color = coalesce($3, color), parent_id = $4,
                                is_visible = coalesce($5, is_visible), sort_order = coalesce($6, sort_order),
                                updated_at = now()
                WHERE id = $1""",
            label_id, name, color, parent_id, visible, sort_order,
        )

    async def ancestry(self, label_id: int) -> set[int]:
        rows = await self.db.fetch(
            """WITH RECURSIVE up(id, parent_id) AS (
                   SELECT id, parent_id FROM label WHERE id = $1
                   UNION SELECT l.id, l.parent_id FROM label l JOIN up ON l.id = up.parent_id)
               SELECT id FROM up""",
            label_id,
        )
        return {r["id"] for r in rows}

    async def bindings_of(self, label_id: int) -> list[tuple[int, int]]:
        rows = await self.db.fetch("SELECT account_id, id FROM label_binding WHERE label_id = $1", label_id)
        return [(r["account_id"], r["id"]) for r in rows]

    async def bindings_of_tree(self, user_id: int, label_id: int) -> list[tuple[int, int]]:
        """(account id, binding id) of a label and every label nested below it."""
        rows = await self.db.fetch(
            """WITH RECURSIVE tree(id) AS (
                   SELECT id FROM label WHERE id = $2 AND user_id = $1
                   UNION SELECT l.id FROM label l JOIN tree ON l.parent_id = tree.id)
               SELECT account_id, id FROM label_binding WHERE label_id IN (SELECT id FROM tree)""",
            user_id, label_id,
        )
        return [(r["account_id"], r["id"]) for r in rows]

    async def tree_ids(self, user_id: int, label_id: int) -> list[int]:
        """A label of the user and every label nested below it."""
        rows = await self.db.fetch(
            """WITH RECURSIVE tree(id) AS (
                   SELECT id FROM label WHERE id = $2 AND user_id = $1
                   UNION SELECT l.id FROM label l JOIN tree ON l.parent_id = tree.id)
               SELECT id FROM tree""",
            user_id, label_id,
        )
        return [r["id"] for r in rows]

    async def delete_keeping_mail(self, user_id: int, label_id: int) -> list[tuple[int, int, int | None]]:
        """Delete the label and its children; messages left without any label get Archive.
        Returns (account id, message id, thread id) of every message that lost a label."""
        rows = await self.db.fetch(
            """WITH RECURSIVE tree(id) AS (
                   SELECT id FROM label WHERE id = $2 AND user_id = $1
                   UNION SELECT l.id FROM label l JOIN tree ON l.parent_id = tree.id)
               SELECT DISTINCT m.account_id, m.id, m.thread_id FROM message_label ml
                 JOIN message m ON m.id = ml.message_id WHERE ml.label_id IN (SELECT id FROM tree)""",
            user_id, label_id,
        )
        await self.db.execute("DELETE FROM label WHERE id = $1 AND user_id = $2", label_id, user_id)
        message_ids = [r["id"] for r in rows]
        await self.db.execute(
            """INSERT INTO message_label (message_id, label_id)
               SELECT m.id, (SELECT id FROM label WHERE user_id = $2 AND role = 'archive')
                 FROM message m WHERE m.id = ANY($1::bigint[])
                  AND NOT EXISTS (SELECT 1 FROM message_label ml WHERE ml.message_id = m.id)
               ON CONFLICT DO NOTHING""",
            message_ids, user_id,
        )
        thread_ids = sorted({r["thread_id"] for r in rows if r["thread_id"] is not None})
        await self.db.execute(
            """INSERT INTO thread_label (thread_id, label_id)
               SELECT DISTINCT m.thread_id, ml.label_id FROM message m JOIN message_label ml ON ml.message_id = m.id
                WHERE m.thread_id = ANY($1::bigint[]) ON CONFLICT DO NOTHING""",
            thread_ids,
        )
        return [(r["account_id"], r["id"], r["thread_id"]) for r in rows]
