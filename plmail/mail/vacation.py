"""The automatic reply (JMAP VacationResponse, RFC 8621 §8), sent by the sending engine like any reply.

While it is on (and between its dates) each message arriving in the Inbox is answered once per sender per
seven days: never mail from a list or sent in bulk, never an automatic message or a bounce, never a no-reply
address and never the user's own addresses (RFC 3834's rules for responders, which also say to mark the
reply Auto-Submitted). The reply is composed by the reply service (to the sender, threaded, unquoted) and
goes through the outbox, so it is filed in Sent like anything the user sends.
"""

from __future__ import annotations

import dataclasses
import logging
import re
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta

from plmail.db.database import Database
from plmail.db.repos.changes import ChangeLogRepository
from plmail.db.repos.vacation import VacationRepository
from plmail.domain.enums import ChangeType, JmapObjectType
from plmail.domain.errors import NotFoundError, PlmailError, ValidationError
from plmail.domain.ingest import PostIngestResult
from plmail.domain.jobs import SEND_VACATION_REPLY
from plmail.domain.mailstore import unified_key
from plmail.domain.messages import HeaderValue
from plmail.domain.outgoing import VacationSettings
from plmail.domain.ports import Enqueuer
from plmail.mail.changes import Change, StateManager
from plmail.mail.compose import check_header
from plmail.mail.drafts import DRAFT_FLAG, DraftService
from plmail.mail.headers import header, header_values
from plmail.mail.identities import IdentityService
from plmail.mail.mime import html_to_text
from plmail.mail.outbox import OutboxService
from plmail.mail.replies import AnswerKind, ReplyService

log = logging.getLogger(__name__)

REPLY_INTERVAL = timedelta(days=7)  # RFC 3834 §2: at most one reply per sender in a period (a week is usual)
MAX_SUBJECT = 998
MAX_BODY = 100_000
# Local parts that read no mail: noreply, no-reply, donotreply, do-not-reply, mailer-daemon, postmaster, bounces.
_NO_REPLY = re.compile(r"^(no[-_.]?reply|do[-_.]?not[-_.]?reply|mailer[-_.]?daemon|postmaster|bounces?)"
                       r"([-+_.].*)?$|noreply", re.IGNORECASE)
_LIST_HEADERS = ("list-id", "list-unsubscribe", "list-post", "list-help", "mailing-list", "x-mailing-list")
_BULK_PRECEDENCE = frozenset({"bulk", "list", "junk", "auto_reply"})


def not_answered_because(sender: str | None, headers: Mapping[str, HeaderValue], own: set[str]) -> str | None:
    """Why a message gets no automatic reply; None when it gets one."""
    if not sender or "@" not in sender:
        return "no sender"
    if sender.lower() in own:
        return "one of the user's own addresses"
    if _NO_REPLY.search(sender.rpartition("@")[0]):
        return "a no-reply address"
    if any(header_values(headers, name) for name in _LIST_HEADERS):
        return "mail from a list"
    if (header(headers, "precedence") or "").strip().lower() in _BULK_PRECEDENCE:
        return "bulk mail"
    auto = (header(headers, "auto-submitted") or "no").strip().lower()
    if auto != "no":
        return "an automatic message"
    if header_values(headers, "x-auto-response-suppress"):
        return "the sender asked for no automatic replies"
    if (header(headers, "return-path") or "").strip() == "<>":
        return "a bounce"
    return None


class VacationService:
    def __init__(self, db: Database, identities: IdentityService, replies: ReplyService, drafts: DraftService,
                 outbox: OutboxService) -> None:
        self.db = db
        self.repo = VacationRepository(db)
        self.change_log = ChangeLogRepository(db)
        self.identities = identities
        self.replies = replies
        self.drafts = drafts
        self.outbox = outbox

    async def get(self, user_id: int) -> VacationSettings:
        return await self.repo.get(user_id) or VacationSettings()

    async def set(self, user_id: int, settings: VacationSettings) -> VacationSettings:
        if settings.from_date is not None and settings.to_date is not None and settings.to_date <= settings.from_date:
            raise ValidationError("The reply must end after it starts.", field="toDate")
        if settings.subject is not None and len(settings.subject) > MAX_SUBJECT:
            raise ValidationError("The subject is too long.", field="subject")
        if settings.subject is not None:
            check_header(settings.subject, "subject")  # else every automatic reply would fail to compose
        for name, value in (("textBody", settings.text_body), ("htmlBody", settings.html_body)):
            if value is not None and len(value) > MAX_BODY:
                raise ValidationError("The reply is too long.", field=name)
        async with self.db.transaction():
            await self.repo.put(user_id, settings)
            state = StateManager(self.change_log)
            state.record(Change(unified_key(user_id), JmapObjectType.VACATION_RESPONSE, "singleton",
                                ChangeType.UPDATED))
            await state.write()
            await state.announce()
        return settings

    async def prune(self, now: datetime | None = None) -> int:
        """Replies older than the interval no longer decide anything."""
        return await self.repo.prune_replies((now or datetime.now(UTC)) - REPLY_INTERVAL)

    async def answer(self, message_id: int, now: datetime | None = None) -> str:
        """Send the automatic reply to one arrived message, if it gets one; says what became of it."""
        moment = now or datetime.now(UTC)
        found = await self.repo.incoming(message_id)
        if found is None:
            return "gone"
        user_id, sender, headers, in_inbox = found
        settings = await self.get(user_id)
        if not settings.active(moment):
            return "off"
        if not in_inbox:
            return "not in the Inbox"
        own = {i.email.lower() for i in await self.identities.for_user(user_id)}
        reason = not_answered_because(sender, headers, own)
        if reason is not None:
            return reason
        assert sender is not None
        if await self.repo.replied_since(user_id, sender, moment - REPLY_INTERVAL):
            return "answered this week already"
        try:
            content = await self.replies.start(user_id, message_id, AnswerKind.REPLY, quote=False)
        except NotFoundError:
            return "gone"
        text = settings.text_body if settings.text_body is not None else (
            html_to_text(settings.html_body) if settings.html_body else "")
        content = dataclasses.replace(
            content, to=tuple(a for a in content.to if a.address.lower() == sender.lower()) or content.to[:1], cc=(),
            subject=settings.subject or content.subject, text_body=text, html_body=settings.html_body,
            extra_headers=(("Auto-Submitted", "auto-replied"),), answers=None, answer_keyword=None)
        try:
            saved = await self.drafts.save(user_id, content, keywords=frozenset({DRAFT_FLAG, "$seen"}), now=moment)
            # An automatic reply does not make the mail "answered": the user has not answered it yet.
            await self.outbox.submit(user_id, saved.message_id, content.identity_id, origin="vacation", now=moment,
                                     marks_answered=False)
        except PlmailError as exc:
            log.warning("the automatic reply to message %s was not sent: %s", message_id, exc)
            return f"not sent: {exc}"
        await self.repo.record_reply(user_id, sender, moment)
        return "sent"


class VacationStep:
    """After new mail is stored: each live message of an account whose user is away is answered by a job."""

    name = "vacation"

    def __init__(self, db: Database, queues: Enqueuer | None) -> None:
        self.repo = VacationRepository(db)
        self.queues = queues

    async def after_commit(self, result: PostIngestResult) -> None:
        if self.queues is None or not result.live:
            return  # a first import is old mail: nobody is waiting for an answer to it
        candidates = [m for m in result.messages if not m.is_draft and m.parsed.from_address
                      and m.parsed.from_address not in result.accounts[m.account_id].addresses]
        if not candidates:
            return
        answering = await self.repo.answering(sorted({m.account_id for m in candidates}), datetime.now(UTC))
        for message in candidates:
            if message.account_id in answering:
                await self.queues.enqueue(SEND_VACATION_REPLY, message_id=message.id)
