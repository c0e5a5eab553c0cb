"""Labels as the sidebar and pages read them."""

from __future__ import annotations

from plmail.db.database import Database
from plmail.domain.enums import LabelRole
from plmail.domain.models import LabelInfo, SidebarLabel

# Order and visibility of the system labels every user starts with.
SYSTEM_LABELS: tuple[tuple[LabelRole, str, int, bool], ...] = (
    (LabelRole.INBOX, "Inbox", 0, True),
    (LabelRole.SNOOZED, "Snoozed", 5, True),
    (LabelRole.SENT, "Sent", 10, True),
    (LabelRole.DRAFTS, "Drafts", 20, True),
    (LabelRole.SPAM, "Spam", 30, True),
    (LabelRole.TRASH, "Trash", 40, True),
    # Location bookkeeping for plain IMAP servers, not a state: hidden until the user shows it.
    (LabelRole.ARCHIVE, "Archive", 50, False),
)


class LabelRepository:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def ensure_system_labels(self, user_id: int) -> None:
        await self.db.executemany(
            """INSERT INTO label (user_id, parent_id, name, role, color, is_visible, sort_order, created_at, updated_at)
               VALUES ($1, NULL, $2, $3, NULL, $4, $5, now(), now())
               ON CONFLICT DO NOTHING""",
            [(user_id, name, role.value, visible, order) for role, name, order, visible in SYSTEM_LABELS],
        )

    async def sidebar(self, user_id: int) -> list[SidebarLabel]:
        """Visible labels with the number of unread, not-binned threads under each (the kept counts)."""
        rows = await self.db.fetch(
            """WITH RECURSIVE tree AS (
                   SELECT id, 0 AS depth, ARRAY[lpad(coalesce(sort_order, 999999)::text, 7, '0'), lower(name)] AS ord
                     FROM label WHERE user_id = $1 AND parent_id IS NULL AND is_visible
                   UNION ALL
                   SELECT l.id, tree.depth + 1, tree.ord || ARRAY[lpad(coalesce(l.sort_order, 999999)::text, 7, '0'),
                                                                  lower(l.name)]
                     FROM label l JOIN tree ON l.parent_id = tree.id WHERE l.user_id = $1 AND l.is_visible)
               SELECT l.id, l.name, l.role, l.parent_id, l.color, tree.depth,
                      (SELECT coalesce(sum(c.unread_threads), 0) FROM label_count c
                        WHERE c.label_id = l.id AND NOT c.binned) AS unread_threads
                 FROM tree JOIN label l ON l.id = tree.id
                ORDER BY tree.ord""",
            user_id,
        )
        return [
            SidebarLabel(
                id=r["id"],
                name=r["name"],
                role=LabelRole(r["role"]) if r["role"] else None,
                parent_id=r["parent_id"],
                color=r["color"],
                unread_threads=r["unread_threads"],
                depth=r["depth"],
            )
            for r in rows
        ]

    async def owned(self, user_id: int, label_id: int) -> SidebarLabel | None:
        row = await self.db.fetchrow(
            "SELECT id, name, role, parent_id, color FROM label WHERE id = $1 AND user_id = $2", label_id, user_id
        )
        if row is None:
            return None
        return SidebarLabel(
            id=row["id"],
            name=row["name"],
            role=LabelRole(row["role"]) if row["role"] else None,
            parent_id=row["parent_id"],
            color=row["color"],
            unread_threads=0,
        )

    async def by_role(self, user_id: int, role: LabelRole) -> int | None:
        value = await self.db.fetchval("SELECT id FROM label WHERE user_id = $1 AND role = $2", user_id, role.value)
        return int(value) if value is not None else None

    async def find_or_create(self, user_id: int, name: str, parent_id: int | None = None) -> int:
        """The user's label `name` under `parent_id`, created when missing; safe against a concurrent create."""
        return (await self.find_or_create_noting(user_id, name, parent_id))[0]

    async def find_or_create_noting(self, user_id: int, name: str, parent_id: int | None = None) -> tuple[int, bool]:
        """(label id, whether this call created it)."""
        value = await self.db.fetchval(
            """INSERT INTO label (user_id, parent_id, name, role, color, is_visible, sort_order, created_at, updated_at)
               VALUES ($1, $2, $3, NULL, NULL, true, NULL, now(), now())
               ON CONFLICT (user_id, coalesce(parent_id, 0), name) DO NOTHING RETURNING id""",
            user_id, parent_id, name,
        )
        if value is not None:
            return int(value), True
        found = await self.db.fetchval(
            "SELECT id FROM label WHERE user_id = $1 AND coalesce(parent_id, 0) = coalesce($2::int, 0) AND name = $3",
            user_id, parent_id, name,
        )
        return int(found), False

    async def find_or_create_path(self, user_id: int, path: str, separator: str = "/") -> int:
        """A nested name such as "Work/Invoices" becomes a parent chain."""
        parent: int | None = None
        for segment in [s.strip() for s in path.split(separator) if s.strip()]:
            parent = await self.find_or_create(user_id, segment[:255], parent)
        if parent is None:
            raise ValueError("empty label name")
        return parent

    async def role_ids(self, user_id: int) -> dict[LabelRole, int]:
        rows = await self.db.fetch("SELECT id, role FROM label WHERE user_id = $1 AND role IS NOT NULL", user_id)
        return {LabelRole(r["role"]): r["id"] for r in rows}

    async def find_path(self, user_id: int, path: str) -> int | None:
        """The user's label at a "/"-separated path, matched case-insensitively; None when missing."""
        parent: int | None = None
        found: int | None = None
        for segment in [s.strip() for s in path.split("/") if s.strip()]:
            found = await self.db.fetchval(
                "SELECT id FROM label WHERE user_id = $1 AND coalesce(parent_id, 0) = coalesce($2::int, 0) "
                "AND lower(name) = lower($3) ORDER BY id LIMIT 1",
                user_id, parent, segment,
            )
            if found is None:
                return None
            parent = int(found)
        return parent

    async def all_for_user(self, user_id: int) -> list[LabelInfo]:
        """Every label of the user, hidden ones too, parents before their children."""
        rows = await self.db.fetch(
            """WITH RECURSIVE tree AS (
                   SELECT id, name, role, parent_id, color, is_visible, 0 AS depth, name::text AS path,
                          ARRAY[coalesce(sort_order, 1000000), id] AS ord
                     FROM label WHERE user_id = $1 AND parent_id IS NULL
                   UNION ALL
                   SELECT l.id, l.name, l.role, l.parent_id, l.color, l.is_visible, tree.depth + 1,
                          tree.path || '/' || l.name, tree.ord || ARRAY[coalesce(l.sort_order, 1000000), l.id]
                     FROM label l JOIN tree ON l.parent_id = tree.id WHERE l.user_id = $1)
               SELECT * FROM tree ORDER BY ord""",
            user_id,
        )
        return [LabelInfo(r["id"], r["name"], LabelRole(r["role"]) if r["role"] else None, r["parent_id"],
                          r["color"], r["is_visible"], r["depth"], r["path"]) for r in rows]
