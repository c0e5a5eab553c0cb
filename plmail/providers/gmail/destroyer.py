"""Deleting destroyed mail for good at Gmail: users.messages.delete, which only the full mail scope
(https://mail.google.com/) may call. An account connected with less is refused with that reason until it is
reconnected; trashing instead would leave the message at Gmail while plmail says it is gone."""

from __future__ import annotations

import logging
from collections.abc import Sequence

from plmail.db.repos.account_admin import AccountAdminRepository
from plmail.domain.enums import AccountStatus, ProviderKind
from plmail.domain.errors import OAuthError, PlmailError
from plmail.domain.providers import PropagationOutcome, Tombstone
from plmail.mail.propagation import PropagationError
from plmail.providers.gmail.client import GmailApi, GmailApiError, GmailNotFound
from plmail.providers.gmail.pacer import GmailQuotaDeferred
from plmail.providers.oauth import GOOGLE_FULL_MAIL_SCOPE

log = logging.getLogger(__name__)

NEEDS_FULL_SCOPE = ("Deleting mail for good needs Gmail's full mail access, which this account was connected "
                    "without. Reconnect it under Settings → Accounts and allow full access; until then, move the "
                    "mail to Trash instead.")


class GmailDestroyer:
    kind = ProviderKind.GMAIL

    def __init__(self, accounts: AccountAdminRepository, api: GmailApi) -> None:
        self.accounts = accounts
        self.api = api

    async def refusal(self, account_id: int) -> str | None:
        record = await self.accounts.for_job(account_id)
        if record is None:
            return "The account was removed."
        try:
            granted = self.api.tokens.tokens_of(record).scope.split()
        except PlmailError as exc:
            return str(exc)
        return None if GOOGLE_FULL_MAIL_SCOPE in granted else NEEDS_FULL_SCOPE

    async def destroy(self, account_id: int, doomed: Sequence[Tombstone]) -> PropagationOutcome:
        record = await self.accounts.for_job(account_id)
        if record is None or not record.is_active or record.status is not AccountStatus.OK:
            return PropagationOutcome()
        done: list[int] = []
        failed: dict[int, str] = {}
        try:
            session = await self.api.session(record.account)
            for tombstone in doomed:
                if tombstone.ref.key is None:
                    done.append(tombstone.id)
                    continue
                try:
                    await session.delete_message(tombstone.ref.key)
                except GmailNotFound:
                    pass  # deleted at Gmail already
                except GmailApiError as exc:
                    if exc.retryable:
                        raise
                    failed[tombstone.id] = NEEDS_FULL_SCOPE if exc.status == 403 else str(exc)
                    continue
                done.append(tombstone.id)
        except GmailQuotaDeferred:
            pass  # the rest waits for the next run, after the account's minute
        except (GmailApiError, OAuthError) as exc:
            if exc.retryable:
                raise PropagationError(str(exc)) from exc
            log.warning("deletions for Gmail account %s wait: %s", account_id, exc)
        return PropagationOutcome(done=tuple(done), failed=failed)
