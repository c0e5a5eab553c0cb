"""IMAP folders: discovery, per-folder sync cursors, the user's sync toggles, import progress.

A mailbox reaches its label only through its LabelBinding; the joins below read the label that way.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import asyncpg

from plmail.db.database import UNFLUSHED_COMMIT, Database
from plmail.domain.enums import AccountStatus, ProviderKind

_SELECT = """SELECT m.id, m.account_id, m.name, m.full_path, m.delimiter, m.special_use, m.uid_validity,
                    m.last_seen_uid, m.import_floor_uid, m.highest_modseq, m.total_messages, m.unread_messages,
                    m.is_sync_enabled, m.is_idle_enabled, m.synced_at, m.swept_at, b.label_id
               FROM mailbox m LEFT JOIN label_binding b ON b.mailbox_id = m.id"""


@dataclass(frozen=True, slots=True)
class MailboxRow:
    id: int
    account_id: int
    name: str
    full_path: str
    delimiter: str | None
    special_use: str | None
    uid_validity: int | None
    last_seen_uid: int | None
    import_floor_uid: int | None
    highest_modseq: int | None
    total_messages: int | None
    unread_messages: int | None
    is_sync_enabled: bool
    is_idle_enabled: bool
    synced_at: datetime | None
    swept_at: datetime | None
    label_id: int | None

    @property
    def contacted(self) -> bool:
        return self.uid_validity is not None and self.last_seen_uid is not None

    @property
    def importing(self) -> bool:
        """History below the floor may remain; a folder never contacted counts too (doubt = importing)."""
        return self.import_floor_uid is None or self.import_floor_uid > 1


@dataclass(frozen=True, slots=True)
class IdleTarget:
    account_id: int
    mailbox_id: int
    path: str
    version: datetime  # the account's updated_at: new credentials or settings restart the watcher


def _row(r: asyncpg.Record) -> MailboxRow:
    return MailboxRow(
        id=r["id"], account_id=r["account_id"], name=r["name"], full_path=r["full_path"], delimiter=r["delimiter"],
        special_use=r["special_use"], uid_validity=r["uid_validity"], last_seen_uid=r["last_seen_uid"],
        import_floor_uid=r["import_floor_uid"], highest_modseq=r["highest_modseq"],
        total_messages=r["total_messages"], unread_messages=r["unread_messages"],
        is_sync_enabled=r["is_sync_enabled"], is_idle_enabled=r["is_idle_enabled"], synced_at=r["synced_at"],
        swept_at=r["swept_at"], label_id=r["label_id"],
    )


class MailboxRepository:
    def __init__(self, db: Database) -> None:
        self.db = db

    # -- for sync (by account id; jobs act for the account's owner) --------------------------------------

    async def for_account(self, account_id: int) -> list[MailboxRow]:
        rows = await self.db.fetch(_SELECT + " WHERE m.account_id = $1 ORDER BY m.full_path", account_id)
        return [_row(r) for r in rows]

    async def by_role(self, account_id: int, role: str) -> MailboxRow | None:
        """The account's folder bound to the user's label of this role (Drafts, Sent), if there is one."""
        row = await self.db.fetchrow(
            f"""{_SELECT} JOIN label l ON l.id = b.label_id
                 WHERE m.account_id = $1 AND l.role = $2 ORDER BY m.id LIMIT 1""",
            account_id, role,
        )
        return _row(row) if row else None

    async def get(self, mailbox_id: int) -> MailboxRow | None:
        row = await self.db.fetchrow(_SELECT + " WHERE m.id = $1", mailbox_id)
        return _row(row) if row else None

    async def upsert(
        self, account_id: int, *, path: str, name: str, delimiter: str | None, special_use: str | None,
        sync_enabled: bool, idle_enabled: bool,
    ) -> int:
        """The folder's row, created on first sight with the given defaults; later sightings refresh only what
        the server says (delimiter, role), never the user's toggles."""
        return int(await self.db.fetchval(
            """INSERT INTO mailbox (account_id, name, full_path, delimiter, special_use, is_sync_enabled,
                                    is_idle_enabled, created_at, updated_at)
               VALUES ($1, $2, $3, $4, $5, $6, $7, now(), now())
               ON CONFLICT (account_id, full_path) DO UPDATE SET
                   name = EXCLUDED.name, delimiter = EXCLUDED.delimiter, special_use = EXCLUDED.special_use,
                   updated_at = CASE WHEN mailbox.special_use IS DISTINCT FROM EXCLUDED.special_use
                                       OR mailbox.delimiter IS DISTINCT FROM EXCLUDED.delimiter
                                     THEN now() ELSE mailbox.updated_at END
               RETURNING id""",
            account_id, name, path, delimiter, special_use, sync_enabled, idle_enabled,
        ))

    async def first_contact(self, mailbox_id: int, *, uid_validity: int, top: int, modseq: int | None,
                            total: int) -> None:
        """First contact, or a fresh start after UIDVALIDITY changed: new mail is everything above `top`,
        history everything below the floor just over it."""
        await self.db.execute(
            """UPDATE mailbox SET uid_validity = $2, last_seen_uid = $3::bigint, import_floor_uid = $3::bigint + 1,
                                  highest_modseq = $4, total_messages = $5, updated_at = now()
                WHERE id = $1""",
            mailbox_id, uid_validity, top, modseq, total,
        )

    async def set_last_seen(self, mailbox_id: int, uid: int) -> None:
        await self.db.execute(
            "UPDATE mailbox SET last_seen_uid = greatest(last_seen_uid, $2) WHERE id = $1", mailbox_id, uid
        )

    async def lower_floor(self, mailbox_id: int, floor: int) -> None:
        """The floor only ever moves down (1 = nothing left to import).

        On its own, committed without waiting for the disk (one flush fewer per import page): a floor lost in a
        crash is only higher than it should be, and the page under it is listed again, its stored messages
        skipped; one that survived came after the page's messages in the log, so they survived too."""
        sql = "UPDATE mailbox SET import_floor_uid = least(import_floor_uid, $2) WHERE id = $1"
        if not self.db.in_transaction():
            sql = (f"WITH unflushed AS ({UNFLUSHED_COMMIT}) UPDATE mailbox SET import_floor_uid = "
                   "least(import_floor_uid, $2) FROM unflushed WHERE id = $1")
        await self.db.execute(sql, mailbox_id, max(floor, 1))

    async def set_modseq(self, mailbox_id: int, modseq: int | None) -> None:
        await self.db.execute("UPDATE mailbox SET highest_modseq = $2 WHERE id = $1", mailbox_id, modseq)

    async def swept(self, mailbox_id: int, *, total: int) -> None:
        """A full listing ran: the counters are fresh and deletions up to now are known."""
        await self.db.execute(
            """UPDATE mailbox SET total_messages = $2, swept_at = now(), synced_at = now(),
                      unread_messages = (SELECT count(*) FROM message
                                          WHERE mailbox_id = $1 AND vanished_at IS NULL AND seen_at IS NULL)
                WHERE id = $1""",
            mailbox_id, total,
        )

    async def delete_if_empty(self, mailbox_id: int) -> bool:
        status = await self.db.execute(
            "DELETE FROM mailbox m WHERE m.id = $1 AND NOT EXISTS (SELECT 1 FROM message WHERE mailbox_id = m.id)",
            mailbox_id,
        )
        return status.endswith(" 1")

    async def importing(self, account_id: int) -> bool:
        """Whether history may remain: a folder still has a floor above 1, or the account has none yet."""
        row = await self.db.fetchrow(
            """SELECT count(*) AS folders,
                      count(*) FILTER (WHERE import_floor_uid IS NULL OR import_floor_uid > 1) AS importing
                 FROM mailbox WHERE account_id = $1 AND is_sync_enabled""",
            account_id,
        )
        return row is None or row["folders"] == 0 or row["importing"] > 0

    async def history_waiting(self, account_id: int) -> bool:
        """A contacted folder still has history below its floor: the importer has work."""
        return bool(await self.db.fetchval(
            """SELECT EXISTS (SELECT 1 FROM mailbox WHERE account_id = $1 AND is_sync_enabled
                                 AND uid_validity IS NOT NULL AND import_floor_uid > 1)""",
            account_id,
        ))

    async def import_counts(self, account_id: int) -> tuple[int, int]:
        """(messages stored, messages the server reported) over the account's synced folders."""
        row = await self.db.fetchrow(
            """SELECT (SELECT count(*) FROM message msg JOIN mailbox mb ON mb.id = msg.mailbox_id
                        WHERE mb.account_id = $1 AND mb.is_sync_enabled AND msg.vanished_at IS NULL) AS done,
                      (SELECT coalesce(sum(total_messages), 0) FROM mailbox
                        WHERE account_id = $1 AND is_sync_enabled) AS total""",
            account_id,
        )
        assert row is not None
        return int(row["done"]), int(row["total"])

    async def idle_targets(self) -> list[IdleTarget]:
        """Folders to watch with IDLE: the chosen ones of active IMAP accounts whose sign-in works."""
        rows = await self.db.fetch(
            """SELECT a.id AS account_id, m.id AS mailbox_id, m.full_path, a.updated_at
                 FROM mailbox m JOIN account a ON a.id = m.account_id
                WHERE a.is_active AND a.status = $1 AND a.provider_kind = $2
                  AND m.is_idle_enabled AND m.is_sync_enabled AND m.uid_validity IS NOT NULL
                ORDER BY a.id, m.id""",
            AccountStatus.OK.value, ProviderKind.IMAP.value,
        )
        return [IdleTarget(r["account_id"], r["mailbox_id"], r["full_path"], r["updated_at"]) for r in rows]

    # -- for the user's pages (scoped by user) ---------------------------------------------------------

    async def owned(self, user_id: int, account_id: int) -> list[MailboxRow]:
        rows = await self.db.fetch(
            _SELECT + " JOIN account a ON a.id = m.account_id WHERE m.account_id = $1 AND a.user_id = $2"
            " ORDER BY m.full_path",
            account_id, user_id,
        )
        return [_row(r) for r in rows]

    async def set_sync_enabled(self, user_id: int, account_id: int, mailbox_id: int, enabled: bool) -> bool:
        status = await self.db.execute(
            """UPDATE mailbox m SET is_sync_enabled = $4, updated_at = now() FROM account a
                WHERE m.id = $3 AND m.account_id = $2 AND a.id = m.account_id AND a.user_id = $1""",
            user_id, account_id, mailbox_id, enabled,
        )
        return status.endswith(" 1")
