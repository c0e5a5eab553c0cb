"""The installation as a whole, for backup, restore, metrics and `plmail doctor`: counts, emptiness, account health.

`snapshot()` exports a snapshot from a read-only repeatable-read transaction, so a `pg_dump --snapshot`
run while it is open dumps exactly what the counts taken in it saw, however busy the server is.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import asdict, dataclass
from datetime import datetime

import asyncpg

from plmail.db.database import Database
from plmail.domain.enums import AccountStatus, ProviderKind

# What a manifest counts and a restore compares; each name is the manifest's key and its table.
COUNTED_TABLES = {
    "users": "app_user",
    "accounts": "account",
    "messages": "message",
    "threads": "message_thread",
    "labels": "label",
    "events": "calendar_event",
}


@dataclass(frozen=True, slots=True)
class InstallationCounts:
    users: int
    accounts: int
    messages: int
    threads: int
    labels: int
    events: int

    def as_dict(self) -> dict[str, int]:
        return asdict(self)


@dataclass(frozen=True, slots=True)
class AccountHealth:
    id: int
    user_email: str
    provider_kind: ProviderKind
    name: str
    status: AccountStatus
    status_detail: str
    is_active: bool
    last_synced_at: datetime | None
    import_error: str | None


@dataclass(frozen=True, slots=True)
class Snapshot:
    id: str
    counts: InstallationCounts
    server_version: str


async def _counts(conn: asyncpg.Connection) -> InstallationCounts:
    present = {
        r["name"] for r in await conn.fetch(
            "SELECT relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p') AND relname = ANY($1::text[])",
            list(COUNTED_TABLES.values()),
        )
    }
    values: dict[str, int] = {}
    for key, table in COUNTED_TABLES.items():
        values[key] = int(await conn.fetchval(f'SELECT count(*) FROM "{table}"')) if table in present else 0
    return InstallationCounts(**values)


class InstallationRepository:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def counts(self) -> InstallationCounts:
        async with self.db.connection() as conn:
            return await _counts(conn)

    async def server_version(self) -> str:
        return str(await self.db.fetchval("SHOW server_version"))

    async def server_major(self) -> int:
        return int(await self.db.fetchval("SHOW server_version_num")) // 10000

    async def user_relations(self) -> int:
        """Tables, views and sequences outside the system schemas: zero for a database fit to restore into."""
        return int(await self.db.fetchval(
            """SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                WHERE n.nspname NOT IN ('pg_catalog', 'information_schema', 'pg_toast')
                  AND n.nspname NOT LIKE 'pg_temp%' AND n.nspname NOT LIKE 'pg_toast_temp%'
                  AND c.relkind IN ('r', 'p', 'v', 'm', 'S', 'f')"""
        ))

    @asynccontextmanager
    async def snapshot(self) -> AsyncIterator[Snapshot]:
        """A consistent view held open until the block ends; its id goes to `pg_dump --snapshot`."""
        async with self.db.connection() as conn, conn.transaction(isolation="repeatable_read", readonly=True):
            snapshot_id = str(await conn.fetchval("SELECT pg_export_snapshot()"))
            counts = await _counts(conn)
            version = str(await conn.fetchval("SHOW server_version"))
            yield Snapshot(snapshot_id, counts, version)

    async def account_health(self) -> list[AccountHealth]:
        rows = await self.db.fetch(
            """SELECT a.id, u.email AS user_email, a.provider_kind, a.name, a.status, a.status_detail, a.is_active,
                      a.last_synced_at, a.sync_state -> 'import' ->> 'last_error' AS import_error
                 FROM account a JOIN app_user u ON u.id = a.user_id
                ORDER BY a.id"""
        )
        return [
            AccountHealth(r["id"], r["user_email"], ProviderKind(r["provider_kind"]), r["name"],
                          AccountStatus(r["status"]), r["status_detail"], r["is_active"], r["last_synced_at"],
                          r["import_error"])
            for r in rows
        ]
