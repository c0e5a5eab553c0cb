"""The original MIME bytes of a stored Graph message, fetched on first use (a second API call per message,
so it is not made at sync time except for invitations)."""

from __future__ import annotations

from plmail.db.database import Database
from plmail.db.repos.account_admin import AccountAdminRepository
from plmail.domain.enums import ProviderKind
from plmail.domain.errors import NotFoundError
from plmail.providers.graph.client import GraphClient
from plmail.providers.graph.errors import GraphNotFound
from plmail.providers.graph.repos.messages import GraphMessageRepository


class GraphRawFetcher:
    kind = ProviderKind.GRAPH

    def __init__(self, db: Database, accounts: AccountAdminRepository, client: GraphClient) -> None:
        self.accounts = accounts
        self.client = client
        self.repo = GraphMessageRepository(db)

    async def fetch_raw(self, account_id: int, message_id: int) -> bytes:
        record = await self.accounts.for_job(account_id)
        graph_id = await self.repo.graph_id_of(account_id, message_id)
        if record is None or graph_id is None:
            raise NotFoundError("The message is not at Microsoft any more.")
        try:
            return await self.client.mime(record.account, graph_id)
        except GraphNotFound:
            raise NotFoundError("Microsoft no longer has this message under the id plmail knows; the next sync "
                                "finds where it went.") from None
