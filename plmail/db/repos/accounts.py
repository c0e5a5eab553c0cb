"""Mail accounts as the user's pages list them."""

from __future__ import annotations

import asyncpg

from plmail.db.database import Database
from plmail.domain.enums import AccountStatus, ProviderKind
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
