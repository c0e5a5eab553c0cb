"""The Gmail side of label propagation: every operation is a label change, sent with messages.batchModify.

Archive is INBOX removed; trash is TRASH added (and INBOX removed, as plmail's trash does); star is STARRED;
read is UNREAD removed; snooze is INBOX removed — Snoozed itself has no Gmail counterpart and stays in plmail,
and so does the Archive label, which is location bookkeeping. A label of the user's that Gmail does not have
yet is created there on its first use (nested names as `Parent/Child`) and bound to the account.

Changes to many messages with the same label change go in one request (up to 1,000 ids). A quota refusal
leaves the rest pending and asks for the propagation again when the account's minute is over.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import datetime

from plmail.db.database import Database
from plmail.db.repos.account_admin import AccountAdminRepository
from plmail.db.repos.gmail_messages import GmailBinding, GmailMessageRepository
from plmail.domain.enums import AccountStatus, LabelRole, ProviderKind
from plmail.domain.errors import OAuthError
from plmail.domain.jobs import PROPAGATE_PROVIDER_CHANGES
from plmail.domain.ports import Enqueuer
from plmail.domain.providers import PendingChange, PropagationOutcome
from plmail.mail.labels import BindingHandle, LabelResolver
from plmail.mail.propagation import PropagationError
from plmail.providers.gmail.client import GmailApi, GmailApiError, GmailSession
from plmail.providers.gmail.labels import NOT_SETTABLE, SYSTEM_OF_ROLE
from plmail.providers.gmail.pacer import GmailQuotaDeferred, GmailTime, SystemTime

log = logging.getLogger(__name__)

_NO_COUNTERPART = (LabelRole.SNOOZED, LabelRole.ARCHIVE)


class GmailLabelPropagator:
    kind = ProviderKind.GMAIL

    def __init__(self, db: Database, accounts: AccountAdminRepository, api: GmailApi,
                 queues: Enqueuer | None = None, time: GmailTime | None = None) -> None:
        self.accounts = accounts
        self.api = api
        self.queues = queues
        self.time: GmailTime = time or SystemTime()
        self.repo = GmailMessageRepository(db)
        self.resolver = LabelResolver(db)

    async def propagate(self, account_id: int, changes: Sequence[PendingChange]) -> PropagationOutcome:
        record = await self.accounts.for_job(account_id)
        if record is None or not record.is_active or record.status is not AccountStatus.OK:
            return PropagationOutcome()  # the changes wait until the account can be reached again
        try:
            session = await self.api.session(record.account)
            return await self._propagate(session, record.user_id, account_id, changes)
        except GmailQuotaDeferred as deferred:
            await self._again_at(account_id, deferred.until)
            return PropagationOutcome()
        except (GmailApiError, OAuthError) as exc:
            if exc.retryable:
                raise PropagationError(str(exc)) from exc
            log.warning("propagation for Gmail account %s waits: %s", account_id, exc)
            return PropagationOutcome()

    async def _propagate(self, session: GmailSession, user_id: int, account_id: int,
                         changes: Sequence[PendingChange]) -> PropagationOutcome:
        gmail_ids = await self.repo.gmail_ids(account_id, sorted({c.message_id for c in changes}))
        bindings = {b.label_id: b for b in await self.repo.bindings(account_id)}
        # The net label change per message, in the order the user made them.
        net: dict[int, dict[str, bool]] = {}
        done: list[int] = []
        failed: dict[int, str] = {}
        for change in sorted(changes, key=lambda c: c.id):
            if change.message_id not in gmail_ids:
                done.append(change.id)  # not at Gmail (yet): nothing to change there
                continue
            wanted = net.setdefault(change.message_id, {})
            if change.kind == "seen":
                wanted["UNREAD"] = not bool(change.flag_value)
            elif change.kind == "starred":
                wanted["STARRED"] = bool(change.flag_value)
            # Keywords beyond read and starred ($answered, $forwarded, custom ones) have no Gmail label: they are
            # kept in plmail only, and count as done below like every change of a message Gmail holds.
            elif change.kind == "labels":
                try:
                    for label_id in change.added:
                        gmail = await self._gmail_label(session, user_id, account_id, label_id, bindings)
                        if gmail is not None:
                            wanted[gmail] = True
                    for label_id in change.removed:
                        binding = bindings.get(label_id)
                        gone = binding.gmail_label_id if binding is not None else None
                        if gone and gone not in NOT_SETTABLE:
                            wanted[gone] = False
                except GmailApiError as exc:
                    if exc.retryable:
                        raise
                    failed[change.id] = str(exc)
                    continue
        groups: dict[tuple[frozenset[str], frozenset[str]], list[int]] = {}
        for message_id, wanted in net.items():
            add = frozenset(k for k, v in wanted.items() if v)
            remove = frozenset(k for k, v in wanted.items() if not v)
            if add or remove:
                groups.setdefault((add, remove), []).append(message_id)
        for (add, remove), message_ids in sorted(groups.items(), key=lambda g: sorted(g[1])):
            await session.batch_modify([gmail_ids[m] for m in message_ids], add=sorted(add), remove=sorted(remove))
            await self.repo.set_gmail_labels(message_ids, sorted(add), sorted(remove))
        done.extend(c.id for c in changes if c.message_id in gmail_ids and c.id not in failed)
        return PropagationOutcome(done=tuple(sorted(set(done))), failed=failed)

    async def _gmail_label(self, session: GmailSession, user_id: int, account_id: int, label_id: int,
                           bindings: dict[int, GmailBinding]) -> str | None:
        """The Gmail label id for one of the user's labels; None when Gmail has no counterpart."""
        binding = bindings.get(label_id)
        if binding is not None and binding.gmail_label_id:
            return binding.gmail_label_id if binding.gmail_label_id not in NOT_SETTABLE else None
        paths = await self.repo.label_paths(user_id, [label_id])
        if label_id not in paths:
            return None
        role, path = paths[label_id]
        if role is not None:
            system = SYSTEM_OF_ROLE.get(role) if role not in _NO_COUNTERPART else None
            return system if system not in NOT_SETTABLE else None
        created = await self._create(session, path)
        binding_id = await self.resolver.bind(label_id, account_id, BindingHandle(provider_key=created))
        bindings[label_id] = GmailBinding(label_id, binding_id, created, None, path)
        return created

    async def _create(self, session: GmailSession, path: str) -> str:
        """Labels reach Gmail on their first use. One Gmail already has under that name is taken as it is."""
        try:
            return (await session.create_label(path)).id
        except GmailApiError as exc:
            if exc.status != 409:
                raise
        for label in await session.labels():
            if label.name.lower() == path.lower():
                return label.id
        raise GmailApiError(f"Gmail refused to create the label {path!r}.", status=409)

    async def _again_at(self, account_id: int, until: datetime) -> None:
        if self.queues is None:
            return
        delay = max((until - self.time.now()).total_seconds(), 1.0)
        await self.queues.enqueue(PROPAGATE_PROVIDER_CHANGES, delay_seconds=delay,
                                  unique_key=f"gmail-propagate-later:{account_id}", account_id=account_id)
