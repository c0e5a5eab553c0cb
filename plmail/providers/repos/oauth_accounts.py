"""Accounts that sign in with OAuth: their sealed tokens, and finding the account a consent belongs to."""

from __future__ import annotations

from plmail.db.database import Database
from plmail.domain.enums import AccountStatus, ProviderKind


class OAuthAccountRepository:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def replace_credentials(self, account_id: int, sealed: bytes) -> None:
        """New tokens after a refresh; `updated_at` stays, since the connection settings did not change."""
        await self.db.execute("UPDATE account SET credentials = $2 WHERE id = $1", account_id, sealed)

    async def find(self, user_id: int, kind: ProviderKind, email: str) -> int | None:
        value = await self.db.fetchval(
            "SELECT id FROM account WHERE user_id = $1 AND provider_kind = $2 AND lower(email) = lower($3) "
            "ORDER BY id LIMIT 1",
            user_id, kind.value, email.strip(),
        )
        return int(value) if value is not None else None

    async def reconnect(self, user_id: int, account_id: int, sealed: bytes) -> bool:
        """The user signed in again: new tokens, and the account syncs again."""
        status = await self.db.execute(
            """UPDATE account SET credentials = $3, status = $4, status_detail = '', updated_at = now()
                WHERE id = $1 AND user_id = $2""",
            account_id, user_id, sealed, AccountStatus.OK.value,
        )
        return status.endswith(" 1")
