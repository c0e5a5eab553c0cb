"""The original bytes of a stored Gmail message, fetched again (format=raw) for one that was stored without."""

from __future__ import annotations

from plmail.db.repos.account_admin import AccountAdminRepository
from plmail.db.repos.gmail_messages import GmailMessageRepository
from plmail.domain.enums import ProviderKind
from plmail.domain.errors import NotFoundError
from plmail.providers.gmail.client import GmailApi
from plmail.providers.gmail.pacer import GmailQuotaDeferred


class GmailRawFetcher:
    kind = ProviderKind.GMAIL

    def __init__(self, accounts: AccountAdminRepository, api: GmailApi) -> None:
        self.accounts = accounts
        self.api = api
        self.repo = GmailMessageRepository(accounts.db)

    async def fetch_raw(self, account_id: int, message_id: int) -> bytes:
        record = await self.accounts.for_job(account_id)
        gmail_id = (await self.repo.gmail_ids(account_id, [message_id])).get(message_id)
        if record is None or gmail_id is None:
            raise NotFoundError("This message is not at Gmail.")
        session = await self.api.session(record.account)
        result = await session.fetch([gmail_id])
        if result.deferred_until is not None:
            raise GmailQuotaDeferred(result.deferred_until)
        fetched = result.fetched.get(gmail_id)
        if fetched is None or fetched.raw is None:
            raise NotFoundError("Gmail no longer has this message.")
        return fetched.raw
