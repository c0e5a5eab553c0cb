"""The stored sender verdict: which receiving server an account believes, and the verdict every consumer reads.

The pipeline judges each message as it stores it (`sender_auth.judge`); filing into a category, the thread view's
warning and "Why is this here?" read that one stored verdict (`verdicts`), never the headers again. Mail stored
before verdicts existed, or after the account's trusted ids changed, is judged on first use and stored then.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

from plmail.db.database import Database
from plmail.db.repos.accounts import AccountRepository
from plmail.db.repos.labels import LabelRepository
from plmail.domain.authentication import EXCHANGE_ONLINE, SenderVerdict
from plmail.domain.enums import LabelRole, ProviderKind
from plmail.domain.errors import NotFoundError, ValidationError
from plmail.domain.ingest import AccountFacts, IngestedMessage
from plmail.domain.messages import RawHeaders
from plmail.mail.repos.sender_auth import SenderAuthRepository
from plmail.mail.sender_auth import GMAIL_RECEIVER, LEARN_SAMPLE, judge, learn_receiver, results_for_display

# The providers whose receiving server is known: Gmail's MX, and Exchange Online (Microsoft 365, Outlook.com).
FIXED_RECEIVERS: dict[ProviderKind, frozenset[str]] = {
    ProviderKind.GMAIL: frozenset({GMAIL_RECEIVER}),
    ProviderKind.GRAPH: frozenset({EXCHANGE_ONLINE}),
}
MAX_IDS = 8
_ID_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789.-_")


def trusted_receivers(account: AccountFacts) -> frozenset[str]:
    """The authserv-ids whose headers the account believes: the provider's own, else those a person set, else
    the one learned from the account's Inbox (possibly none yet)."""
    fixed = FIXED_RECEIVERS.get(account.provider_kind)
    if fixed is not None:
        return fixed
    if account.authserv_ids is not None:
        return account.authserv_ids
    return account.authserv_ids_learned


def parse_ids(text: str) -> list[str]:
    """Authserv-ids as a person types them: host names separated by commas or spaces."""
    ids = [part.strip().lower().rstrip(".") for part in text.replace(",", " ").split()]
    ids = list(dict.fromkeys(i for i in ids if i))
    if len(ids) > MAX_IDS:
        raise ValidationError("At most 8 receiving servers.", field="authserv_ids")  # MAX_IDS
    for value in ids:
        if not set(value) <= _ID_CHARS:
            raise ValidationError("A receiving server is named like mx.example.org.", field="authserv_ids")
    return ids


@dataclass(frozen=True, slots=True)
class ReceiverSettings:
    """What the account page shows: the ids believed now, and where they came from."""

    fixed: bool  # the provider's own server (Gmail, Microsoft 365): nothing to set
    configured: frozenset[str] | None
    learned: frozenset[str]
    believed: frozenset[str]

    @property
    def awaiting_confirmation(self) -> bool:
        return not self.fixed and self.configured is None and bool(self.learned)


class SenderAuthentication:
    def __init__(self, db: Database) -> None:
        self.db = db
        self.repo = SenderAuthRepository(db)
        self.accounts = AccountRepository(db)
        self.labels = LabelRepository(db)
        # Accounts whose newest stored Inbox mail taught no receiver, as this process last looked: a page with no
        # Inbox mail of its own would read those same headers again (in a first import, every page of every
        # other folder). New Inbox mail in a batch looks again.
        self._taught_nothing: set[int] = set()

    async def facts_with_receivers(self, account: AccountFacts, batch: Sequence[IngestedMessage]) -> AccountFacts:
        """The account as the pipeline judges a batch with: an IMAP account whose receiving server nobody set and
        none was learned yet learns it from the newest Inbox mail, this batch's and the stored."""
        if trusted_receivers(account) or account.provider_kind in FIXED_RECEIVERS or account.authserv_ids is not None:
            return account
        inbox = (await self.labels.role_ids(account.user_id)).get(LabelRole.INBOX)
        fresh = sorted((m for m in batch if inbox is not None and inbox in m.label_ids and not m.is_draft),
                       key=lambda m: m.occurred_at.timestamp() if m.occurred_at else 0.0, reverse=True)
        if not fresh and account.id in self._taught_nothing:
            return account
        sample = [m.parsed.headers for m in fresh[:LEARN_SAMPLE]]
        if len(sample) < LEARN_SAMPLE and inbox is not None:
            sample += await self.repo.newest_inbox_headers(account.id, inbox, LEARN_SAMPLE - len(sample))
        learned = learn_receiver(sample)
        if learned is None:
            self._taught_nothing.add(account.id)
            return account
        self._taught_nothing.discard(account.id)
        await self.accounts.set_authserv_ids(account.id, "authserv_ids_learned", [learned])
        return dataclasses.replace(account, authserv_ids_learned=frozenset({learned}))

    async def verdicts(self, message_ids: Sequence[int]) -> dict[int, SenderVerdict]:
        """The stored verdict of each message; one not judged yet is judged now and stored."""
        found: dict[int, SenderVerdict] = {}
        missing: list[tuple[int, SenderVerdict]] = []
        facts: dict[int, AccountFacts | None] = {}
        for message_id, account_id, sender, headers, stored in await self.repo.stored(message_ids):
            verdict = SenderVerdict.from_json(stored)
            if verdict is None:
                if account_id not in facts:
                    facts[account_id] = await self.accounts.facts(account_id)
                account = facts[account_id]
                if account is None:
                    continue
                verdict = judge(headers, sender, trusted_receivers(account))
                missing.append((message_id, verdict))
            found[message_id] = verdict
        await self.repo.store([(i, v.as_json()) for i, v in missing])
        return found

    async def withheld(self, message_ids: Sequence[int], category: str) -> None:
        """A filter wanted to file these into `category`, but their senders were not verified."""
        await self.repo.note_withheld(message_ids, category)

    async def filings(self, message_ids: Sequence[int]) -> dict[int, tuple[str | None, str | None]]:
        """Per message: the category a filter filed it into, and the one a filter withheld (sender unverified)."""
        return await self.repo.filings(message_ids)

    async def believed_results(self, account_id: int, headers: RawHeaders) -> list[tuple[str, str, str]]:
        """The results of the header the account believes, for "Show original"."""
        account = await self.accounts.facts(account_id)
        return results_for_display(headers, trusted_receivers(account)) if account is not None else []

    async def receiver_settings(self, user_id: int, account_id: int) -> ReceiverSettings:
        account = await self._owned(user_id, account_id)
        return ReceiverSettings(account.provider_kind in FIXED_RECEIVERS, account.authserv_ids,
                                account.authserv_ids_learned, trusted_receivers(account))

    async def set_receivers(self, user_id: int, account_id: int, ids: list[str] | None) -> None:
        """The user or administrator sets (or confirms) the receiving servers; None goes back to the learned one.
        The account's verdicts are judged again, on first use, with the new ids."""
        account = await self._owned(user_id, account_id)
        if account.provider_kind in FIXED_RECEIVERS:
            raise ValidationError("This provider's receiving server is known; there is nothing to set.",
                                  field="authserv_ids")
        async with self.db.transaction():
            await self.accounts.set_authserv_ids(account_id, "authserv_ids", ids)
            if ids is None:  # back to learning: learn again from the Inbox as it is now
                inbox = (await self.labels.role_ids(account.user_id)).get(LabelRole.INBOX)
                learned = learn_receiver(await self.repo.newest_inbox_headers(account_id, inbox, LEARN_SAMPLE)
                                         if inbox is not None else [])
                await self.accounts.set_authserv_ids(account_id, "authserv_ids_learned",
                                                     [learned] if learned is not None else None)
            await self.repo.forget_account(account_id)

    async def owner_of(self, account_id: int) -> int:
        """The user an account belongs to, for the administrator's command line."""
        account = await self.accounts.facts(account_id)
        if account is None:
            raise NotFoundError(f"There is no account {account_id}.")
        return account.user_id

    async def _owned(self, user_id: int, account_id: int) -> AccountFacts:
        account = await self.accounts.facts(account_id)
        if account is None or account.user_id != user_id:
            raise NotFoundError("No such account.")
        return account
