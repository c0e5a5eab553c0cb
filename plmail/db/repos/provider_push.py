"""Each Gmail or Microsoft account's push registration (the Gmail watch, the Graph subscription), kept in
`account.sync_state -> 'push'`, and the lookups a notification needs to find its account."""

from __future__ import annotations

import json
from typing import Any

from plmail.db.database import Database
from plmail.domain.enums import AccountStatus, ProviderKind

PUSH_KEY = "push"


class ProviderPushRepository:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def watchable_ids(self, kind: ProviderKind) -> list[int]:
        """Accounts of this kind that are synced (active, signed in): the ones a watch is kept for."""
        rows = await self.db.fetch(
            "SELECT id FROM account WHERE is_active AND status = $1 AND provider_kind = $2 ORDER BY id",
            AccountStatus.OK.value, kind.value,
        )
        return [int(r["id"]) for r in rows]

    async def state(self, account_id: int) -> dict[str, Any] | None:
        value = await self.db.fetchval("SELECT sync_state -> $2 FROM account WHERE id = $1", account_id, PUSH_KEY)
        loaded = json.loads(value) if isinstance(value, str) else value
        return loaded if isinstance(loaded, dict) else None

    async def save(self, account_id: int, state: dict[str, Any]) -> None:
        await self.db.execute(
            "UPDATE account SET sync_state = jsonb_set(sync_state, ARRAY[$2::text], $3::jsonb) WHERE id = $1",
            account_id, PUSH_KEY, json.dumps(state),
        )

    async def forget(self, account_id: int) -> None:
        await self.db.execute("UPDATE account SET sync_state = sync_state - $2 WHERE id = $1", account_id, PUSH_KEY)

    async def watched_by_address(self, kind: ProviderKind, address: str) -> list[int]:
        """Active accounts of this kind for this address that have a watch (one per user who added it)."""
        rows = await self.db.fetch(
            """SELECT id FROM account WHERE provider_kind = $1 AND lower(email) = lower($2) AND is_active
                  AND status = $3 AND sync_state ? $4 ORDER BY id""",
            kind.value, address, AccountStatus.OK.value, PUSH_KEY,
        )
        return [int(r["id"]) for r in rows]

    async def by_subscription(self, kind: ProviderKind, subscription_id: str) -> tuple[int, dict[str, Any]] | None:
        """The account whose push registration has this id, with that registration."""
        row = await self.db.fetchrow(
            """SELECT id, sync_state -> $3 AS push FROM account
                WHERE provider_kind = $1 AND sync_state -> $3 ->> 'subscription_id' = $2 AND is_active""",
            kind.value, subscription_id, PUSH_KEY,
        )
        if row is None:
            return None
        loaded = json.loads(row["push"]) if isinstance(row["push"], str) else row["push"]
        return int(row["id"]), dict(loaded)
