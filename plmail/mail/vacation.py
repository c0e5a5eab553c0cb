"""The automatic reply (JMAP VacationResponse, RFC 8621 §8), sent by the sending engine like any reply.

While it is on, mail that arrives live (an account past its first import) in the Inbox between fromDate and toDate
is answered once per sender per interval (a week by default, PLMAIL_VACATION_REPLY_DAYS), remembered in the
database across restarts. RFC 3834 §2 says when a responder must stay silent: mail not addressed to one of the
user's own addresses (To/Cc), from the user, from a list, bulk or junk, automatic mail, bounces and no-reply
senders; plmail also leaves old mail (dated more than four days ago) and Spam alone. The reply (§3.1) is composed by
the reply service (to the sender, threaded with In-Reply-To/References, unquoted), marked Auto-Submitted:
auto-replied, sent from the identity the mail was addressed to, and goes through the outbox, so it is filed in Sent
and counts against the send limit like anything the user sends.
"""

from __future__ import annotations

import dataclasses
import logging
import re
from collections.abc import Collection
from datetime import UTC, datetime, timedelta

from plmail.db.database import Database
from plmail.db.repos.changes import ChangeLogRepository
from plmail.domain.enums import ChangeType, JmapObjectType
from plmail.domain.errors import NotFoundError, PlmailError, ValidationError
from plmail.domain.mailstore import unified_key
from plmail.domain.outgoing import IncomingMail, VacationSettings
from plmail.mail.changes import Change, StateManager
from plmail.mail.compose import check_header
from plmail.mail.drafts import DRAFT_FLAG, DraftService
from plmail.mail.headers import header, header_values
from plmail.mail.identities import IdentityService
from plmail.mail.mime import html_to_text
from plmail.mail.outbox import OutboxService
from plmail.mail.replies import AnswerKind, ReplyService
from plmail.mail.repos.vacation import VacationRepository

log = logging.getLogger(__name__)

REPLY_INTERVAL_DAYS = 7  # RFC 3834 §2: at most one reply per sender in a period (a week is usual)
RECENT = timedelta(days=4)  # older mail is nobody waiting for an answer (issue 30)
MAX_SUBJECT = 998
MAX_BODY = 100_000
# Local parts that read no mail: noreply, no-reply, donotreply, do-not-reply, mailer-daemon, postmaster, bounces.
_NO_REPLY = re.compile(r"^(no[-_.]?reply|do[-_.]?not[-_.]?reply|mailer[-_.]?daemon|postmaster|bounces?)"
                       r"([-+_.].*)?$|noreply", re.IGNORECASE)
_LIST_HEADERS = ("mailing-list", "x-mailing-list")  # besides every List-* header (RFC 2369, RFC 2919)
_BULK_PRECEDENCE = frozenset({"bulk", "list", "junk", "auto_reply"})


def _minute(moment: datetime) -> datetime:
    return moment.replace(second=0, microsecond=0)


def in_window(settings: VacationSettings, arrived: datetime) -> bool:
    """On, and the arrival falls between fromDate and toDate, to the minute: a message of 09:59:59 is before a
    reply that starts at 10:00, one of 11:59:59 inside a reply that ends at 12:00."""
    minute = _minute(arrived)
    return (settings.is_enabled and (settings.from_date is None or _minute(settings.from_date) <= minute)
            and (settings.to_date is None or minute < _minute(settings.to_date)))


def not_answered_because(mail: IncomingMail, own: Collection[str], now: datetime) -> str | None:
    """Why a received message gets no automatic reply; None when it gets one. `own` is the user's addresses."""
    sender = mail.sender
    if not sender or "@" not in sender:
        return "no sender"
    if mail.is_draft:
        return "a draft"
    if not mail.in_inbox:
        return "not in the Inbox"
    if mail.in_spam:
        return "spam"
    if sender.lower() in own:
        return "one of the user's own addresses"
    if not any(address in own for address in mail.recipients):
        return "not addressed to the user"
    dated = mail.sent_at or mail.received_at
    if dated is None or dated < now - RECENT:
        return "old mail"
    if _NO_REPLY.search(sender.rpartition("@")[0]):
        return "a no-reply address"
    if (any(name.lower().startswith("list-") for name in mail.headers)
            or any(header_values(mail.headers, name) for name in _LIST_HEADERS)):
        return "mail from a list"
    if (header(mail.headers, "precedence") or "").strip().lower() in _BULK_PRECEDENCE:
        return "bulk mail"
    auto = (header(mail.headers, "auto-submitted") or "no").split(";")[0].strip().lower()
    if auto != "no":
        return "an automatic message"
    if header_values(mail.headers, "x-auto-response-suppress"):
        return "the sender asked for no automatic replies"
    if (header(mail.headers, "return-path") or "").strip() == "<>":
        return "a bounce"
    return None


class VacationService:
    def __init__(self, db: Database, identities: IdentityService, replies: ReplyService, drafts: DraftService,
                 outbox: OutboxService, *, reply_interval_days: int = REPLY_INTERVAL_DAYS) -> None:
        self.db = db
        self.reply_interval = timedelta(days=reply_interval_days)
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
        return await self.repo.prune_replies((now or datetime.now(UTC)) - self.reply_interval)

    async def answer(self, message_id: int, now: datetime | None = None) -> str:
        """Send the automatic reply to one arrived message, if it gets one; says what became of it."""
        moment = now or datetime.now(UTC)
        mail = await self.repo.incoming(message_id)
        if mail is None:
            return "gone"
        settings = await self.get(mail.user_id)
        # The dates are judged at the mail's arrival, not when this job got to run.
        arrived = min(mail.received_at or moment, moment)
        if not settings.is_enabled or not in_window(settings, arrived):
            return "off"
        identities = await self.identities.for_user(mail.user_id)
        own = {i.email.lower() for i in identities}
        reason = not_answered_because(mail, own, moment)
        if reason is not None:
            return reason
        assert mail.sender is not None
        if await self.repo.replied_since(mail.user_id, mail.sender, moment - self.reply_interval):
            return "answered in this interval already"
        # From the address the mail was written to (To before Cc), of the account it arrived in.
        mine = {i.email.lower(): i for i in identities if i.account_id == mail.account_id}
        addressed = next((mine[address] for address in mail.recipients if address in mine), None)
        if addressed is None:
            return "not addressed to this account"
        try:
            content = await self.replies.start(mail.user_id, message_id, AnswerKind.REPLY, quote=False,
                                               identity_id=addressed.id)
        except NotFoundError:
            return "gone"
        text = settings.text_body if settings.text_body is not None else (
            html_to_text(settings.html_body) if settings.html_body else "")
        sender = mail.sender.lower()
        content = dataclasses.replace(
            content, to=tuple(a for a in content.to if a.address.lower() == sender) or content.to[:1], cc=(),
            subject=settings.subject or content.subject, text_body=text, html_body=settings.html_body,
            extra_headers=(("Auto-Submitted", "auto-replied"),), answers=None, answer_keyword=None)
        try:
            saved = await self.drafts.save(mail.user_id, content, keywords=frozenset({DRAFT_FLAG, "$seen"}),
                                           now=moment)
            # An automatic reply does not make the mail "answered": the user has not answered it yet.
            await self.outbox.submit(mail.user_id, saved.message_id, content.identity_id, origin="vacation",
                                     now=moment, marks_answered=False)
        except PlmailError as exc:
            log.warning("the automatic reply to message %s was not sent: %s", message_id, exc)
            return f"not sent: {exc}"
        await self.repo.record_reply(mail.user_id, mail.sender, moment)
        return "sent"

