"""What the IMAP propagator reads and writes: where messages live, which labels have folders, the order
labels were added in, and a message's new home after a move. Scoped to one account, which the pending
changes being propagated belong to.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from plmail.db.database import Database
from plmail.domain.enums import LabelRole


@dataclass(frozen=True, slots=True)
class PlacedMessage:
    id: int
    mailbox_id: int | None
    imap_uid: int | None
    labels: frozenset[int]


@dataclass(frozen=True, slots=True)
class FolderLabel:
    """A label with a folder at this account."""

    label_id: int
    role: LabelRole | None
    mailbox_id: int
    path: str


def _uid(key: str | None) -> int | None:
    return int(key) if key is not None and key.isdigit() else None


class ImapPropagationRepository:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def placed(self, account_id: int, message_ids: Sequence[int]) -> dict[int, PlacedMessage]:
        rows = await self.db.fetch(
            """SELECT m.id, m.mailbox_id, m.provider_key,
                      coalesce(array_agg(ml.label_id) FILTER (WHERE ml.label_id IS NOT NULL), '{}') AS labels
                 FROM message m LEFT JOIN message_label ml ON ml.message_id = m.id
                WHERE m.account_id = $1 AND m.id = ANY($2::bigint[])
                GROUP BY m.id""",
            account_id, list(message_ids),
        )
        return {r["id"]: PlacedMessage(r["id"], r["mailbox_id"], _uid(r["provider_key"]), frozenset(r["labels"]))
                for r in rows}

    async def folder_labels(self, account_id: int) -> list[FolderLabel]:
        rows = await self.db.fetch(
            """SELECT b.label_id, l.role, b.mailbox_id, mb.full_path
                 FROM label_binding b JOIN label l ON l.id = b.label_id JOIN mailbox mb ON mb.id = b.mailbox_id
                WHERE b.account_id = $1""",
            account_id,
        )
        return [FolderLabel(r["label_id"], LabelRole(r["role"]) if r["role"] else None, r["mailbox_id"],
                            r["full_path"]) for r in rows]

    async def moved(self, message_id: int, mailbox_id: int, uid: int | None) -> None:
        """The message's new folder and UID (from COPYUID), so the next sync knows it and does not fetch it
        again. Without a UID it waits vanished until that sync re-points it by its content."""
        await self.db.execute(
            """UPDATE message SET mailbox_id = $2, provider_container = $3, provider_key = $4,
                                  vanished_at = CASE WHEN $4::text IS NULL THEN now() END, updated_at = now()
                WHERE id = $1""",
            message_id, mailbox_id, str(mailbox_id), str(uid) if uid is not None else None,
        )

    async def flags_confirmed(self, message_ids: Sequence[int]) -> None:
        if message_ids:
            await self.db.execute(
                "UPDATE message SET flags_touched_at = NULL WHERE id = ANY($1::bigint[]) AND flags_touched_at "
                "IS NOT NULL", list(message_ids),
            )
