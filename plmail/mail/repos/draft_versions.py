"""Draft versions (migration 2026-12-06T10:00): the composition each saved version belongs to, where it is in its
life, and the provider copy of a version that is no longer a draft, until the provider has deleted it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from plmail.db.database import Database
from plmail.domain.ingest import ProviderRef

LIVE_STATES = ("current", "submitted")  # the version that is the composition's draft now
RETIRED_STATES = ("superseded", "sent", "destroyed")
DRAFT_LOCK = 0x706C7310  # advisory-lock namespace: one composition's saves, sends and provider pushes in turn


@dataclass(frozen=True, slots=True)
class DraftVersion:
    message_id: int
    lineage: int
    account_id: int
    state: str
    ref: ProviderRef  # the copy still to remove at the provider (a retired version), else empty


def _version(r: Any) -> DraftVersion:
    return DraftVersion(
        message_id=r["message_id"], lineage=r["lineage"], account_id=r["account_id"], state=r["state"],
        ref=ProviderRef(r["provider_container"], r["provider_key"]))


_COLUMNS = "message_id, lineage, account_id, state, provider_container, provider_key"


class DraftVersionRepository:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def lineage_of(self, message_id: int) -> int | None:
        value = await self.db.fetchval("SELECT lineage FROM draft_version WHERE message_id = $1", message_id)
        return int(value) if value is not None else None

    async def adopt(self, message_id: int, account_id: int) -> int:
        """A draft stored before versions were kept (or by JMAP, a sync, a restore) starts its own composition."""
        await self.db.execute(
            "INSERT INTO draft_version (message_id, lineage, account_id) VALUES ($1, $1, $2) "
            "ON CONFLICT (message_id) DO NOTHING", message_id, account_id)
        lineage = await self.lineage_of(message_id)
        assert lineage is not None
        return lineage

    async def add(self, message_id: int, lineage: int, account_id: int) -> None:
        await self.db.execute(
            "INSERT INTO draft_version (message_id, lineage, account_id) VALUES ($1, $2, $3) "
            "ON CONFLICT (message_id) DO UPDATE SET lineage = $2, state = 'current', updated_at = now()",
            message_id, lineage, account_id)

    async def live(self, lineage: int) -> DraftVersion | None:
        row = await self.db.fetchrow(
            f"SELECT {_COLUMNS} FROM draft_version WHERE lineage = $1 AND state = ANY($2::text[]) "
            "ORDER BY message_id DESC LIMIT 1", lineage, list(LIVE_STATES))
        return _version(row) if row is not None else None

    async def latest(self, lineage: int) -> DraftVersion | None:
        row = await self.db.fetchrow(
            f"SELECT {_COLUMNS} FROM draft_version WHERE lineage = $1 ORDER BY message_id DESC LIMIT 1", lineage)
        return _version(row) if row is not None else None

    async def set_state(self, message_id: int, state: str) -> None:
        await self.db.execute("UPDATE draft_version SET state = $2, updated_at = now() WHERE message_id = $1",
                              message_id, state)

    async def retire(self, message_id: int, account_id: int, state: str, ref: ProviderRef | None) -> None:
        """The version is no longer a draft; `ref`, its provider copy, is deleted there by the push job."""
        await self.db.execute(
            """INSERT INTO draft_version (message_id, lineage, account_id, state, provider_container, provider_key)
               VALUES ($1, $1, $2, $3, $4, $5)
               ON CONFLICT (message_id) DO UPDATE SET state = $3, provider_container = $4, provider_key = $5,
                                                      updated_at = now()""",
            message_id, account_id, state, *_ref_values(ref))

    async def remember_copy(self, message_id: int, ref: ProviderRef) -> None:
        """A copy the provider stored for a version that was retired meanwhile: it goes too."""
        await self.db.execute(
            """UPDATE draft_version SET provider_container = $2, provider_key = $3, updated_at = now()
                WHERE message_id = $1""",
            message_id, *_ref_values(ref))

    async def state_of(self, message_id: int) -> str | None:
        value = await self.db.fetchval("SELECT state FROM draft_version WHERE message_id = $1", message_id)
        return str(value) if value is not None else None

    async def to_remove(self, account_id: int, lineage: int) -> list[DraftVersion]:
        rows = await self.db.fetch(
            f"""SELECT {_COLUMNS} FROM draft_version
                 WHERE lineage = $1 AND account_id = $2 AND state = ANY($3::text[])
                   AND provider_key IS NOT NULL
                 ORDER BY message_id""", lineage, account_id, list(RETIRED_STATES))
        return [_version(r) for r in rows]

    async def accounts_of(self, lineage: int) -> list[int]:
        rows = await self.db.fetch("SELECT DISTINCT account_id FROM draft_version WHERE lineage = $1", lineage)
        return [int(r["account_id"]) for r in rows]

    async def removed(self, message_id: int) -> None:
        await self.db.execute(
            """UPDATE draft_version SET provider_container = '', provider_key = NULL,
                                        last_error = '', updated_at = now() WHERE message_id = $1""", message_id)

    async def failed(self, message_id: int, error: str) -> None:
        await self.db.execute(
            "UPDATE draft_version SET attempts = attempts + 1, last_error = $2, updated_at = now() "
            "WHERE message_id = $1", message_id, error[:2000])

    async def pending(self, limit: int = 200) -> list[tuple[int, int]]:
        """(account, composition) of provider copies still to delete, and of live versions not at the provider
        a minute after they were saved (in accounts with a provider): what the sweep sends the push job for
        again."""
        rows = await self.db.fetch(
            """SELECT DISTINCT v.account_id, v.lineage FROM draft_version v
                 JOIN account a ON a.id = v.account_id AND a.provider_kind <> 'local'
                WHERE (v.state = ANY($1::text[])
                       AND v.provider_key IS NOT NULL)
                   OR (v.state = ANY($2::text[]) AND v.updated_at < now() - interval '1 minute'
                       AND v.updated_at > now() - interval '1 day'
                       AND EXISTS (SELECT 1 FROM message m WHERE m.id = v.message_id AND m.provider_key IS NULL))
                LIMIT $3""", list(RETIRED_STATES), list(LIVE_STATES), limit)
        return [(int(r["account_id"]), int(r["lineage"])) for r in rows]


def _ref_values(ref: ProviderRef | None) -> tuple[str, str | None]:
    if ref is None:
        return "", None
    return ref.container, ref.key
