"""The outbox: a submission waits for its send time (the undo window, or a time the user scheduled), is
claimed by exactly one worker, and goes out through its account's transport.

Nothing a user wrote is ever lost: the message stays a draft until the transport accepted it, and a
failure leaves it in Drafts with the reason. Temporary failures (4xx, refused connection, timeout before
DATA) are tried again with backoff; permanent ones (5xx, refused recipients) end it; a connection lost after
the final dot is never resent blindly — the submission says "may have been sent" and the user decides.
"""

from __future__ import annotations

import email
import email.policy
import logging
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from plmail.db.database import Database
from plmail.db.repos.account_admin import SYNC_LOCK, AccountAdminRepository
from plmail.db.repos.changes import ChangeLogRepository
from plmail.db.repos.drafts import DraftRepository, WrittenMessage
from plmail.db.repos.labels import LabelRepository
from plmail.db.repos.threads import ThreadRepository
from plmail.db.repos.users import UserRepository
from plmail.domain.enums import ChangeType, JmapObjectType, LabelRole
from plmail.domain.errors import ForbiddenError, NotFoundError, PlmailError, ValidationError
from plmail.domain.ingest import ref_from_json, ref_json
from plmail.domain.jobs import FILE_SENT_COPY, SEND_SUBMISSION
from plmail.domain.messages import Address
from plmail.domain.outgoing import (
    Envelope,
    OutboxEntry,
    OutgoingMessage,
    SendError,
    SendFailure,
    SendReceipt,
    Submission,
    SubmissionQuery,
    SubmissionRefused,
    SubmissionState,
)
from plmail.domain.ports import Enqueuer
from plmail.domain.registry import ProviderRegistry
from plmail.mail.blobs import BlobStore
from plmail.mail.changes import Change, StateManager
from plmail.mail.compose import MAX_RECIPIENTS, check_address, envelope_of, wire_bytes
from plmail.mail.drafts import DraftService
from plmail.mail.identities import IdentityService
from plmail.mail.operations import ThreadOperations
from plmail.mail.repos.submissions import SubmissionRepository
from plmail.mail.settle import announce

log = logging.getLogger(__name__)

MAX_DELAYED_SEND = timedelta(days=30)  # a scheduled send may be up to 30 days ahead
DEFAULT_UNDO_SECONDS = 10
MAX_UNDO_SECONDS = 60
DEFAULT_SENDS_PER_HOUR = 200
STUCK_SENDING = timedelta(minutes=15)  # a claim nobody finished: longer than any job may run
COPY_WAIT = timedelta(hours=1)  # a provider's own Sent copy arrives within a sync or two, or not at all
_ANSWER_KEYWORDS = frozenset({"$answered", "$forwarded"})


def _message_id(raw: bytes) -> str:
    head = email.message_from_bytes(raw.split(b"\r\n\r\n", 1)[0] + b"\r\n\r\n", policy=email.policy.compat32)
    return str(head.get("Message-ID") or "").strip().strip("<>")


def receipt_json(receipt: SendReceipt) -> dict[str, Any]:
    return {"ref": ref_json(receipt.ref), "provider_files_copy": receipt.provider_files_copy}


def receipt_from_json(value: Any) -> SendReceipt:
    data = value if isinstance(value, dict) else {}
    return SendReceipt(ref=ref_from_json(data.get("ref")), provider_files_copy=bool(data.get("provider_files_copy")))


class OutboxService:
    def __init__(self, db: Database, blobs: BlobStore, identities: IdentityService, drafts: DraftService,
                 operations: ThreadOperations, providers: ProviderRegistry, queues: Enqueuer | None, *,
                 sends_per_hour: int = DEFAULT_SENDS_PER_HOUR) -> None:
        self.db = db
        self.blobs = blobs
        self.identities = identities
        self.drafts = drafts
        self.operations = operations
        self.transports = providers.transports
        self.stores = providers.draft_stores
        self.queues = queues
        self.sends_per_hour = sends_per_hour
        self.repo = SubmissionRepository(db)
        self.messages = DraftRepository(db)
        self.labels = LabelRepository(db)
        self.threads = ThreadRepository(db)
        self.users = UserRepository(db)
        self.accounts = AccountAdminRepository(db)
        self.change_log = ChangeLogRepository(db)

    # -- the user's side ------------------------------------------------------------------------------------

    async def undo_delay(self, user_id: int) -> int:
        """Seconds a send waits before it goes, during which Undo takes it back (the user's setting)."""
        value = (await self.users.settings(user_id)).get("undo_delay_seconds")
        return max(0, min(int(value), MAX_UNDO_SECONDS)) if isinstance(value, int) else DEFAULT_UNDO_SECONDS

    async def set_undo_delay(self, user_id: int, seconds: int) -> None:
        if not 0 <= seconds <= MAX_UNDO_SECONDS:
            raise ValidationError(f"The undo delay is between 0 and {MAX_UNDO_SECONDS} seconds.",
                                  field="undo_delay")
        await self.users.merge_settings(user_id, {"undo_delay_seconds": seconds})

    async def submit(self, user_id: int, message_id: int, identity_id: int, *, envelope: Envelope | None = None,
                     send_at: datetime | None = None, origin: str = "web", answers: int | None = None,
                     answer_keyword: str | None = None, now: datetime | None = None,
                     marks_answered: bool = True) -> Submission:
        """Put the message in the outbox, to go at `send_at` (default now). Refusals say why in JMAP's words."""
        async with self.drafts.submitting(message_id):  # no other window's save of it comes between
            return await self._submit(user_id, message_id, identity_id, envelope=envelope, send_at=send_at,
                                      origin=origin, answers=answers, answer_keyword=answer_keyword, now=now,
                                      marks_answered=marks_answered)

    async def _submit(self, user_id: int, message_id: int, identity_id: int, *, envelope: Envelope | None,
                      send_at: datetime | None, origin: str, answers: int | None, answer_keyword: str | None,
                      now: datetime | None, marks_answered: bool) -> Submission:
        moment = now or datetime.now(UTC)
        message = await self.messages.owned(user_id, message_id)
        if message is None or message.raw_path is None:
            raise NotFoundError("No such message.")
        try:
            identity = await self.identities.sendable(user_id, identity_id)
            self.identities.check_verified(identity)
        except (ForbiddenError, NotFoundError) as exc:
            raise SubmissionRefused(str(exc), reason="forbiddenFrom") from None
        cannot_send = await self.identities.refusal_to_send(user_id, identity)
        if cannot_send is not None:  # refused now, never accepted to fail later where the client cannot see it
            raise SubmissionRefused(cannot_send, reason="forbiddenFrom")
        if identity.account_id != message.account_id:
            raise SubmissionRefused("The identity belongs to another account than the message: create or import "
                                    "the email in the identity's account (its Drafts).", reason="forbiddenFrom")
        raw = await self.blobs.get(message.raw_path)
        headers = envelope_of(raw)
        if headers.mail_from.lower() != identity.email.lower():
            raise SubmissionRefused(f"The message is from {headers.mail_from or 'nobody'}, not from the identity "
                                    f"{identity.email}.", reason="forbiddenFrom")
        wanted = envelope or headers
        if wanted.mail_from.lower() != identity.email.lower():
            raise SubmissionRefused("The envelope's sender must be the identity's address.",
                                    reason="forbiddenMailFrom")
        self._check_recipients(wanted.rcpt_to)
        if len(raw) > await self.drafts.size_limit(identity.account_id):
            raise SubmissionRefused("The message is larger than this account may send.", reason="tooLarge")
        when = send_at or moment
        if when > moment + MAX_DELAYED_SEND:
            raise ValidationError("A send can be scheduled at most 30 days ahead.", field="sendAt")
        when = max(when, moment)
        if await self.repo.created_since(user_id, moment - timedelta(hours=1)) >= self.sends_per_hour:
            raise SubmissionRefused(f"You have sent {self.sends_per_hour} messages in the last hour; wait a while "
                                    f"before sending more.", reason="forbiddenToSend")
        if answer_keyword is not None and answer_keyword not in _ANSWER_KEYWORDS:
            answer_keyword = None
        if answers is None and marks_answered:  # a reply written elsewhere (a JMAP client): what In-Reply-To names
            answers = await self.repo.answered_by(message.id)
            answer_keyword = "$answered" if answers is not None else None
        thread_key = await self.threads.provider_key(message.thread_id) if message.thread_id is not None else None
        async with self.db.transaction():
            submission_id = await self.repo.create(
                account_id=message.account_id, message_id=message.id, identity_id=identity.id, envelope=wanted,
                send_at=when, origin=origin, answers_message_id=answers, answer_keyword=answer_keyword,
                raw_path=message.raw_path, draft_ref=message.ref if message.ref.identity() else None,
                thread_key=thread_key or message.provider_thread_key)
            await self.drafts.submitted(message)
            await self._record(message.account_id, [submission_id], ChangeType.CREATED)
        await self._schedule(submission_id, when, moment)
        found = await self.repo.get(submission_id)
        assert found is not None
        return found

    async def cancel(self, user_id: int, submission_id: int) -> Submission:
        """Undo: a submission that has not started going is canceled, and its message stays a draft."""
        submission = await self.repo.owned(user_id, submission_id)
        if submission is None:
            raise NotFoundError("No such submission.")
        async with self.db.transaction():
            if not await self.repo.cancel(submission_id):
                raise SubmissionRefused("It is on its way or sent already; it cannot be taken back.",
                                        reason="cannotUnsend")
            await self._back_to_drafts(submission)
            await self._record(submission.account_id, [submission_id], ChangeType.UPDATED)
        canceled = await self.repo.get(submission_id)
        assert canceled is not None
        return canceled

    async def stop_disabled(self, user_id: int) -> int:
        """A disabled user's scheduled sends are called off at once (their messages are drafts again); the claim
        refuses them too, so one already queued cannot slip through. Returns how many were stopped."""
        return await self._call_off(await self.repo.pending_of_disabled(user_id=user_id))

    async def _call_off(self, submissions: Sequence[Submission]) -> int:
        stopped = 0
        for submission in submissions:
            async with self.db.transaction():
                if not await self.repo.cancel(submission.id):
                    continue
                await self._back_to_drafts(submission)
                await self._record(submission.account_id, [submission.id], ChangeType.UPDATED)
            stopped += 1
        return stopped

    async def forget(self, user_id: int, submission_id: int) -> None:
        """A finished submission removed from the list (JMAP's destroy); one still waiting must be canceled
        first, so that removing it never looks like stopping it."""
        submission = await self.owned(user_id, submission_id)
        async with self.db.transaction():
            if not await self.repo.delete(submission.id):
                raise ForbiddenError("It has not been sent yet: cancel it (undoStatus canceled) first.")
            await self._record(submission.account_id, [submission.id], ChangeType.DESTROYED)

    async def owned(self, user_id: int, submission_id: int) -> Submission:
        found = await self.repo.owned(user_id, submission_id)
        if found is None:
            raise NotFoundError("No such submission.")
        return found

    async def for_accounts(self, account_ids: Sequence[int], ids: Sequence[int] | None = None) -> list[Submission]:
        return await self.repo.for_accounts(account_ids, ids=ids)

    async def query(self, account_ids: Sequence[int], query: SubmissionQuery) -> list[int]:
        return await self.repo.query(account_ids, query)

    async def failure_of(self, user_id: int, message_id: int) -> str:
        """Why the last send of this draft did not go ("" when it did not fail): the draft shows it."""
        latest = await self.repo.latest_for_message(user_id, message_id)
        if latest is None or latest.state is not SubmissionState.FAILED:
            return ""
        return latest.last_error

    async def outbox(self, user_id: int | None) -> list[OutboxEntry]:
        """Pending, scheduled, sending, failed and maybe-sent submissions (a user's, or all for the operator)."""
        return await self.repo.outbox(user_id)

    # -- the worker's side (the send queue) ---------------------------------------------------------------

    async def deliver(self, submission_id: int) -> str:
        """Send one due submission; returns what became of it. Raises only to be tried again later."""
        submission = await self.repo.claim(submission_id)
        if submission is None:
            return await self._not_claimed(submission_id)
        try:
            account, outgoing = await self._outgoing(submission)
            transport = self.transports.get(account.provider_kind)
            if transport is None:
                raise SendError("This account cannot send mail.", failure=SendFailure.PERMANENT)
        except SendError as exc:
            return await self._failed(submission, exc)
        except PlmailError as exc:
            return await self._failed(submission, SendError(str(exc), failure=SendFailure.PERMANENT))
        except Exception:
            await self.repo.retry_later(submission.id, "The message could not be prepared; trying again.")
            raise
        try:
            receipt = await transport.send(account, outgoing, draft=submission.draft_ref)
        except SendError as exc:
            return await self._failed(submission, exc)
        except Exception as exc:  # a failure we cannot place: it may have gone, so it is never resent blindly
            log.exception("sending submission %s failed unexpectedly", submission.id)
            return await self._failed(submission, SendError(f"{type(exc).__name__}: {exc}",
                                                            failure=SendFailure.UNCERTAIN))
        await self._sent(submission, receipt)
        return SubmissionState.SENT.value

    async def file_sent_copy(self, submission_id: int, receipt: SendReceipt) -> None:
        """After a send, on ingest: the provider's Sent gets its copy (where it does not file one itself) and
        its Drafts loses the draft, under the account's sync lock so the next sync sees the result."""
        submission = await self.repo.get(submission_id)
        if submission is None or submission.raw_path is None:
            return
        record = await self.accounts.for_job(submission.account_id)
        store = self.stores.get(record.provider_kind) if record is not None else None
        if record is None or store is None:
            return
        raw = await self.blobs.get(submission.raw_path)
        async with self.accounts.session_lock(SYNC_LOCK, submission.account_id, wait=60.0) as lock:
            if not lock.taken:
                raise TimeoutError("the account is busy syncing; the Sent copy is filed later")
            # The draft itself is the draft service's to remove (its push job, from the version retired when it went).
            ref = await store.file_sent(record.account, raw, draft=None, receipt=receipt)
            if ref is not None and submission.message_id is not None:
                await self.messages.set_ref(submission.message_id, ref)

    async def send_due(self) -> int:
        """The safety net, every minute: submissions whose job was lost go again, claims nobody finished become
        "may have been sent"."""
        for submission_id in await self.repo.stuck_sending(int(STUCK_SENDING.total_seconds())):
            submission = await self.repo.get(submission_id)
            if submission is not None and submission.state is SubmissionState.SENDING:
                await self._finish(submission, SubmissionState.UNCERTAIN,
                                   error="plmail stopped while sending it; it may have been sent.")
        await self.repo.stop_awaiting_copies(int(COPY_WAIT.total_seconds()))
        await self.drafts.sweep()
        overdue = await self.repo.overdue(30)
        for submission_id in overdue:
            await self._schedule(submission_id, datetime.now(UTC), datetime.now(UTC))
        return len(overdue)

    # -- helpers --------------------------------------------------------------------------------------------

    def _check_recipients(self, recipients: Sequence[str]) -> None:
        if not recipients:
            raise SubmissionRefused("The message has no recipients.", reason="noRecipients")
        if len(recipients) > MAX_RECIPIENTS:
            raise SubmissionRefused(f"A message can go to at most {MAX_RECIPIENTS} recipients.",
                                    reason="tooManyRecipients")
        invalid: list[str] = []
        for address in recipients:
            try:
                check_address(Address("", address), "to")
            except ValidationError:
                invalid.append(address)
        if invalid:
            raise SubmissionRefused(f"Not email addresses: {', '.join(invalid)}.", reason="invalidRecipients",
                                    recipients=tuple(invalid))

    async def _schedule(self, submission_id: int, when: datetime, now: datetime) -> None:
        if self.queues is not None:
            await self.queues.enqueue(SEND_SUBMISSION, delay_seconds=max((when - now).total_seconds(), 0.0),
                                      unique_key=f"send:{submission_id}", submission_id=submission_id)

    async def _not_claimed(self, submission_id: int) -> str:
        submission = await self.repo.get(submission_id)
        if submission is None:
            return "gone"
        if submission.state is SubmissionState.PENDING:
            if await self._call_off(await self.repo.pending_of_disabled(submission_id=submission_id)):
                return SubmissionState.CANCELED.value  # its owner was disabled
            await self._schedule(submission_id, submission.send_at, datetime.now(UTC))  # woken a moment early
        return submission.state.value

    async def _outgoing(self, submission: Submission) -> tuple[Any, OutgoingMessage]:
        record = await self.accounts.for_job(submission.account_id)
        if submission.raw_path is None:
            raise SendError("The message was deleted before it went.", failure=SendFailure.PERMANENT)
        if record is None or not record.is_active:
            raise SendError("The account is switched off.", failure=SendFailure.PERMANENT)
        raw = await self.blobs.get(submission.raw_path)
        outgoing = OutgoingMessage(
            message_id=_message_id(raw), envelope=submission.envelope, wire=wire_bytes(raw), copy=raw,
            thread_key=submission.thread_key)
        return record.account, outgoing

    async def _failed(self, submission: Submission, exc: SendError) -> str:
        if exc.failure is SendFailure.TEMPORARY:
            if submission.attempts < SEND_SUBMISSION.retries:
                await self.repo.retry_later(submission.id, str(exc))
                async with self.db.transaction():
                    await self._record(submission.account_id, [submission.id], ChangeType.UPDATED)
                raise exc  # saq tries again, with backoff
            await self._finish(submission, SubmissionState.FAILED,
                               error=f"Gave up after {submission.attempts} tries: {exc}", to_drafts=True)
            return SubmissionState.FAILED.value
        if exc.failure is SendFailure.UNCERTAIN:
            await self._finish(submission, SubmissionState.UNCERTAIN, error=str(exc))
            return SubmissionState.UNCERTAIN.value
        delivery = {r: {"smtpReply": str(exc), "delivered": "no"} for r in exc.rejected}
        await self._finish(submission, SubmissionState.FAILED, error=str(exc), delivery=delivery, to_drafts=True)
        return SubmissionState.FAILED.value

    async def _finish(self, submission: Submission, state: SubmissionState, *, error: str = "",
                      delivery: dict[str, dict[str, str]] | None = None, to_drafts: bool = False) -> None:
        async with self.db.transaction():
            await self.repo.finish(submission.id, state, error=error, delivery=delivery)
            if to_drafts:
                await self._back_to_drafts(submission)
            await self._record(submission.account_id, [submission.id], ChangeType.UPDATED)

    async def _back_to_drafts(self, submission: Submission) -> None:
        """What did not go is a draft again: the message back in Drafts, or, when it was deleted after it was
        submitted, stored anew from what was submitted."""
        message = await self.messages.get(submission.message_id) if submission.message_id is not None else None
        if message is None:
            if submission.raw_path is not None:
                restored = await self.drafts.restore(submission.account_id, await self.blobs.get(submission.raw_path))
                await self.repo.attach_message(submission.id, restored)
            return
        roles = await self.labels.role_ids(message.user_id)
        drafts, sent = roles[LabelRole.DRAFTS], roles[LabelRole.SENT]
        await self.drafts.reopened(message.id)
        if drafts in message.labels and "$draft" in message.flags:
            return
        await self.messages.become_draft(message.id, drafts_label=drafts, sent_label=sent)
        await self._relabelled(message, {drafts, sent})

    async def show_as_sent(self, user_id: int, submission_id: int) -> None:
        """JMAP's usual onSuccessUpdateEmail (Drafts → Sent, no $draft), applied here only: the provider's Drafts
        and Sent follow when the message actually went, and an undo or a failure brings it back to Drafts."""
        submission = await self.owned(user_id, submission_id)
        message = await self.messages.get(submission.message_id) if submission.message_id is not None else None
        if message is None:
            return
        roles = await self.labels.role_ids(message.user_id)
        drafts, sent = roles[LabelRole.DRAFTS], roles[LabelRole.SENT]
        async with self.db.transaction():
            await self.messages.become_sent(message.id, drafts_label=drafts, sent_label=sent)
            await self._relabelled(message, {drafts, sent})

    async def forget_message(self, user_id: int, submission_id: int) -> None:
        """JMAP's onSuccessDestroyEmail: the submitted draft goes from plmail now; what was submitted still goes
        (the submission keeps it), the provider's draft is removed once it went, and its Sent copy arrives by
        sync. Should the send fail, the draft is stored again."""
        submission = await self.owned(user_id, submission_id)
        if submission.message_id is not None:
            await self.drafts.forget(user_id, submission.message_id)

    async def _sent(self, submission: Submission, receipt: SendReceipt) -> None:
        message = await self.messages.get(submission.message_id) if submission.message_id is not None else None
        delivery = {address: {"smtpReply": reply, "delivered": "queued"} for address, reply in receipt.replies}
        answers, keyword = await self.repo.answer_of(submission.id)
        async with self.db.transaction():
            await self.repo.finish(submission.id, SubmissionState.SENT, delivery=delivery,
                                   awaiting_copy=receipt.provider_files_copy and message is not None)
            if message is not None:
                roles = await self.labels.role_ids(message.user_id)
                drafts, sent = roles[LabelRole.DRAFTS], roles[LabelRole.SENT]
                await self.drafts.became_sent(message, drafts_label=drafts, sent_label=sent, sent_as=receipt.ref)
                if receipt.ref is not None:
                    await self.messages.set_ref(message.id, receipt.ref)
                await self._relabelled(message, {drafts, sent})
            await self._record(submission.account_id, [submission.id], ChangeType.UPDATED)
        owner = message.user_id if message is not None else await self._owner(submission.account_id)
        if answers is not None and keyword is not None and owner is not None:
            try:
                await self.operations.set_keyword(owner, [answers], keyword, True)
            except Exception:  # the reply went; a missing $answered must not make it look failed
                log.exception("could not mark message %s %s", answers, keyword)
        if message is not None:
            await self.drafts.settle(message.id)
        if self.queues is not None:
            await self.queues.enqueue(FILE_SENT_COPY, submission_id=submission.id, receipt=receipt_json(receipt))

    async def _owner(self, account_id: int) -> int | None:
        record = await self.accounts.for_job(account_id)
        return record.user_id if record is not None else None

    async def _relabelled(self, message: WrittenMessage, labels: set[int]) -> None:
        if message.thread_id is not None:
            await self.threads.sync_labels([message.thread_id])
            await self.threads.recompute([message.thread_id])
        await announce(self.db, message.account_id, {message.id: message.thread_id}, sorted(labels))

    async def _record(self, account_id: int, submission_ids: Sequence[int], change: ChangeType) -> None:
        state = StateManager(self.change_log)
        for submission_id in submission_ids:
            state.record(Change(account_id, JmapObjectType.EMAIL_SUBMISSION, str(submission_id), change))
        await state.write()
        await state.announce()
