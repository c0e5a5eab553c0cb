"""Deleting destroyed mail for good at Microsoft 365: POST /me/messages/{id}/permanentDelete (a plain DELETE
would only move it to Deleted Items, from where a sync would bring it back)."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from urllib.parse import quote

from plmail.db.repos.account_admin import AccountAdminRepository
from plmail.domain.enums import AccountStatus, ProviderKind
from plmail.domain.errors import OAuthError
from plmail.domain.providers import PropagationOutcome, Tombstone
from plmail.mail.propagation import PropagationError
from plmail.providers.graph.client import GraphClient
from plmail.providers.graph.errors import GraphError, GraphNotFound, GraphThrottled

log = logging.getLogger(__name__)


class GraphDestroyer:
    kind = ProviderKind.GRAPH

    def __init__(self, accounts: AccountAdminRepository, client: GraphClient) -> None:
        self.accounts = accounts
        self.client = client

    async def refusal(self, account_id: int) -> str | None:
        return None  # Mail.ReadWrite, which every connected account has, may delete for good

    async def destroy(self, account_id: int, doomed: Sequence[Tombstone]) -> PropagationOutcome:
        record = await self.accounts.for_job(account_id)
        if record is None or not record.is_active or record.status is not AccountStatus.OK:
            return PropagationOutcome()
        done: list[int] = []
        failed: dict[int, str] = {}
        try:
            for tombstone in doomed:
                if tombstone.ref.key is None:
                    done.append(tombstone.id)
                    continue
                try:
                    await self.client.request(record.account, "POST",
                                              f"me/messages/{quote(tombstone.ref.key, safe='')}/permanentDelete")
                except GraphNotFound:
                    pass  # gone at Microsoft already
                except GraphError as exc:
                    if exc.retryable:
                        raise
                    failed[tombstone.id] = str(exc)
                    continue
                done.append(tombstone.id)
        except GraphThrottled:
            pass  # the rest waits for the next run
        except (GraphError, OAuthError) as exc:
            if exc.retryable:
                raise PropagationError(str(exc)) from exc
            log.warning("deletions for Microsoft account %s wait: %s", account_id, exc)
        return PropagationOutcome(done=tuple(done), failed=failed)
