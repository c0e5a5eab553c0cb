"""A user's mail accounts as the pages and the command line see them, whatever their provider."""

from __future__ import annotations

from plmail.db.database import Database
from plmail.db.repos.account_admin import AccountAdminRepository, AccountRecord
from plmail.db.repos.accounts import AccountRepository
from plmail.domain.models import Account


class AccountService:
    def __init__(self, db: Database) -> None:
        self.repo = AccountRepository(db)
        self.admin = AccountAdminRepository(db)

    async def for_user(self, user_id: int) -> list[Account]:
        return await self.repo.for_user(user_id)

    async def owned(self, user_id: int, account_id: int) -> Account | None:
        return await self.repo.owned(user_id, account_id)

    async def settings_of(self, user_id: int, account_id: int) -> AccountRecord | None:
        """The account with its connection settings (never its credentials in the clear), if the user owns it."""
        return await self.admin.owned(user_id, account_id)

    async def exists(self, account_id: int) -> bool:
        return await self.admin.for_job(account_id) is not None
