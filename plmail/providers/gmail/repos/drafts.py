"""Gmail drafts as plmail's draft store keeps them: a draft's own id by the id of the message it holds (Gmail
updates and deletes drafts by draft id; a stored message knows its message id)."""

from __future__ import annotations

from plmail.db.database import Database


class GmailDraftRepository:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def draft_id(self, account_id: int, gmail_message_id: str) -> str | None:
        value = await self.db.fetchval(
            "SELECT draft_id FROM gmail_draft WHERE account_id = $1 AND gmail_message_id = $2 "
            "ORDER BY updated_at DESC LIMIT 1",
            account_id, gmail_message_id,
        )
        return str(value) if value is not None else None

    async def remember(self, account_id: int, draft_id: str, gmail_message_id: str) -> None:
        """The draft holds this message now (a new draft, or an update that replaced its message)."""
        await self.db.execute(
            """INSERT INTO gmail_draft (account_id, draft_id, gmail_message_id, updated_at)
               VALUES ($1, $2, $3, now())
               ON CONFLICT (account_id, draft_id) DO UPDATE SET gmail_message_id = excluded.gmail_message_id,
                                                              updated_at = now()""",
            account_id, draft_id, gmail_message_id,
        )

    async def forget(self, account_id: int, draft_id: str) -> None:
        await self.db.execute("DELETE FROM gmail_draft WHERE account_id = $1 AND draft_id = $2", account_id, draft_id)
