"""Mail accounts as the user's pages list them."""

from __future__ import annotations

import json

import asyncpg

from plmail.db.database import Database
from plmail.domain.enums import AccountStatus, ProviderKind
from plmail.domain.ingest import AccountFacts
from plmail.domain.models import Account

_COLUMNS = "id, user_id, provider_kind, name, email, status, is_active, last_synced_at"


def _account(row: asyncpg.Record) -> Account:
    return Account(
        id=row["id"],
        user_id=row["user_id"],
        provider_kind=ProviderKind(row["provider_kind"]),
        name=row["name"],
        email=row["email"],
        status=AccountStatus(row["status"]),
        is_active=row["is_active"],
        last_synced_at=row["last_synced_at"],
    )


class AccountRepository:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def for_user(self, user_id: int) -> list[Account]:
        rows = await self.db.fetch(
            f"SELECT {_COLUMNS} FROM account WHERE user_id = $1 ORDER BY sort_order, id", user_id
        )
        return [_account(r) for r in rows]

    async def owned(self, user_id: int, account_id: int) -> Account | None:
        row = await self.db.fetchrow(
            f"SELECT {_COLUMNS} FROM account WHERE id = $1 AND user_id = $2", account_id, user_id
        )
        return _account(row) if row else None

    async def facts(self, account_id: int) -> AccountFacts | None:
        row = await self.db.fetchrow(
            """SELECT a.id, a.user_id, a.provider_kind, a.email, a.settings, u.settings AS user_settings
                 FROM account a JOIN app_user u ON u.id = a.user_id WHERE a.id = $1""",
            account_id,
        )
        if row is None:
            return None
        settings = json.loads(row["settings"]) if isinstance(row["settings"], str) else (row["settings"] or {})
        user_settings = (
            json.loads(row["user_settings"]) if isinstance(row["user_settings"], str) else (row["user_settings"] or {})
        )
        aliases = settings.get("aliases", []) if isinstance(settings, dict) else []
        addresses = {str(a).strip().lower() for a in [row["email"], *aliases] if str(a).strip()}
        disabled = user_settings.get("categories_disabled", []) if isinstance(user_settings, dict) else []
        configured = settings.get("authserv_ids") if isinstance(settings, dict) else None
        learned = settings.get("authserv_ids_learned") if isinstance(settings, dict) else None
        return AccountFacts(
            id=row["id"],
            user_id=row["user_id"],
            provider_kind=ProviderKind(row["provider_kind"]),
            addresses=frozenset(addresses),
            disabled_categories=frozenset(str(c) for c in disabled),
            sorts_by_rules=isinstance(user_settings, dict) and user_settings.get("sorting") == "rules",
            authserv_ids=frozenset(str(i) for i in configured) if isinstance(configured, list) else None,
            authserv_ids_learned=frozenset(str(i) for i in learned) if isinstance(learned, list) else frozenset(),
        )

    async def create(
        self, *, user_id: int, provider_kind: ProviderKind, name: str, email: str, username: str = "",
        credentials: bytes | None = None, settings: dict[str, object] | None = None,
    ) -> int:
        return int(await self.db.fetchval(
            """INSERT INTO account (user_id, provider_kind, name, email, username, credentials, settings, sync_state,
                                    status, status_detail, is_active, sort_order, created_at, updated_at)
               VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb, '{}'::jsonb, 'ok', '', true, 0, now(), now())
               RETURNING id""",
            user_id, provider_kind.value, name, email.strip().lower(), username, credentials,
            json.dumps(settings or {}),
        ))

    async def find_by_name(self, user_id: int, provider_kind: ProviderKind, name: str) -> int | None:
        value = await self.db.fetchval(
            "SELECT id FROM account WHERE user_id = $1 AND provider_kind = $2 AND name = $3 ORDER BY id LIMIT 1",
            user_id, provider_kind.value, name,
        )
        return int(value) if value is not None else None

    async def set_authserv_ids(self, account_id: int, key: str, ids: list[str] | None) -> None:
        """Store the authserv-ids an account believes under `key` (`authserv_ids`, set by a person, or
        `authserv_ids_learned`); None removes the key."""
        if ids is None:
            await self.db.execute("UPDATE account SET settings = settings - $2, updated_at = now() WHERE id = $1",
                                  account_id, key)
            return
        await self.db.execute(
            """UPDATE account SET settings = coalesce(settings, '{}'::jsonb) || jsonb_build_object($2::text, $3::jsonb),
                                  updated_at = now() WHERE id = $1""", account_id, key, json.dumps(ids))
