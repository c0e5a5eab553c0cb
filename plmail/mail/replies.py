"""Replies and forwards, built once for the web composer and JMAP: who it goes to, its subject, the headers
that thread it, the quoted original, and what a forward carries along.

RFC 5322 §3.6.4: a reply's In-Reply-To is the parent's Message-ID; its References are the parent's
References (or, lacking them, its single In-Reply-To) followed by the parent's Message-ID. Subjects get one
"Re:" or "Fwd:", never a stack of them.
"""

from __future__ import annotations

import email
import email.policy
import html
import re
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from plmail.db.database import Database
from plmail.db.repos.drafts import DraftRepository
from plmail.db.repos.users import UserRepository
from plmail.domain.enums import Locale
from plmail.domain.errors import NotFoundError
from plmail.domain.messages import Address, ParsedMessage
from plmail.domain.outgoing import DraftContent, Identity, OutgoingAttachment
from plmail.mail.downloads import BlobService
from plmail.mail.identities import IdentityService
from plmail.mail.mime import parse_mime
from plmail.mail.sanitizer import sanitize_outgoing

# A subject already answered (or forwarded) in any of the languages mail arrives in.
_REPLY_PREFIXES = re.compile(r"^\s*((re|aw|antw|sv|vs|res|rif|ref)\s*(\[\d+\])?\s*:\s*)+", re.IGNORECASE)
_FORWARD_PREFIXES = re.compile(r"^\s*((fwd|fw|wg|tr|doorst|enc|rv)\s*(\[\d+\])?\s*:\s*)+", re.IGNORECASE)
QUOTE_STYLE = "margin:0 0 0 .8ex;border-left:1px solid #ccc;padding-left:1ex"

_TEXTS: dict[Locale, dict[str, str]] = {
    Locale.EN: {
        "wrote": "On {date}, {name} wrote:",
        "forwarded": "---------- Forwarded message ---------",
        "from": "From", "date": "Date", "subject": "Subject", "to": "To", "cc": "Cc",
        "date_format": "%a, %d %b %Y at %H:%M",
    },
    Locale.DE: {
        "wrote": "Am {date} schrieb {name}:",
        "forwarded": "---------- Weitergeleitete Nachricht ---------",
        "from": "Von", "date": "Datum", "subject": "Betreff", "to": "An", "cc": "Cc",
        "date_format": "%d.%m.%Y um %H:%M",
    },
}


class AnswerKind(StrEnum):
    REPLY = "reply"
    REPLY_ALL = "reply_all"
    FORWARD = "forward"  # the original quoted in the body, its attachments carried along
    FORWARD_ATTACHED = "forward_attached"  # the original attached whole, as message/rfc822

    @property
    def keyword(self) -> str:
        """The keyword the original gets once the answer went."""
        return "$answered" if self in (AnswerKind.REPLY, AnswerKind.REPLY_ALL) else "$forwarded"


def reply_subject(subject: str) -> str:
    return "Re: " + _REPLY_PREFIXES.sub("", subject).strip()


def forward_subject(subject: str) -> str:
    return "Fwd: " + _FORWARD_PREFIXES.sub("", subject).strip()


def thread_headers(parent: ParsedMessage) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(In-Reply-To, References) of an answer to `parent`, per RFC 5322 §3.6.4."""
    if not parent.message_id:
        return (), ()
    earlier = parent.references or (parent.in_reply_to if len(parent.in_reply_to) == 1 else ())
    references = tuple(dict.fromkeys((*earlier, parent.message_id)))
    return (parent.message_id,), references


def _sender(parent: ParsedMessage) -> Address | None:
    return Address(parent.from_name or "", parent.from_address) if parent.from_address else None


def recipients(parent: ParsedMessage, kind: AnswerKind, own: set[str]
               ) -> tuple[tuple[Address, ...], tuple[Address, ...]]:
    """(To, Cc) of a reply: Reply-To, else From; to one's own message, its recipients again. Reply all adds the
    other recipients. Never one of the user's own addresses (unless the user wrote only to themselves), each
    address once."""
    if kind not in (AnswerKind.REPLY, AnswerKind.REPLY_ALL):
        return (), ()
    sender = _sender(parent)
    from_self = sender is not None and sender.address.lower() in own
    if from_self:
        to: tuple[Address, ...] = parent.to
    else:
        to = parent.reply_to or ((sender,) if sender else ())
    cc: tuple[Address, ...] = ()
    if kind is AnswerKind.REPLY_ALL:
        to = (*to, *(() if from_self else parent.to))
        cc = parent.cc
    seen: set[str] = set()

    def others(addresses: tuple[Address, ...]) -> tuple[Address, ...]:
        kept = []
        for address in addresses:
            key = address.address.lower()
            if key not in seen and key not in own:
                seen.add(key)
                kept.append(address)
        return tuple(kept)

    kept_to, kept_cc = others(to), others(cc)
    if not kept_to and not kept_cc and sender is not None:
        return (sender,), ()  # a note to oneself is answered to oneself
    return kept_to, kept_cc


def _display(address: Address) -> str:
    return f"{address.name} <{address.address}>" if address.name else address.address


def _local(moment: datetime | None, time_zone: str) -> datetime | None:
    if moment is None:
        return None
    try:
        return moment.astimezone(ZoneInfo(time_zone))
    except (ZoneInfoNotFoundError, ValueError):
        return moment


def _quoted_text(text: str) -> str:
    return "\n".join(("> " + line) if line and not line.startswith(">") else (">" + line) for line in
                     text.splitlines())


def quote_original(parsed: ParsedMessage, attribution: str) -> tuple[str, str | None]:
    """(text, HTML) of a reply's quote: the attribution line, then the original with its lines kept. The text
    quotes the original's text part (an HTML-only message's text keeps its blocks as lines, `mail/html_text.py`);
    the HTML carries the original's HTML inside `<blockquote type="cite">`, as Thunderbird, Apple Mail and Gmail
    do, so the text part derived from it later quotes it line by line too."""
    text = f"\n\n{attribution}\n{_quoted_text(parsed.body_text or '')}\n"
    if parsed.body_html is None:
        return text, None
    quoted = sanitize_outgoing(parsed.body_html)
    markup = (f"<div><br></div><div>{html.escape(attribution)}</div>"
              f'<blockquote type="cite" style="{QUOTE_STYLE}">{quoted}</blockquote>')
    return text, markup


def forward_original(parsed: ParsedMessage, locale: Locale, time_zone: str) -> tuple[str, str | None]:
    """(text, HTML) of a forward: the "Forwarded message" block naming the original's sender, date, subject and
    recipients, then its body with its lines kept."""
    texts = _TEXTS.get(locale, _TEXTS[Locale.EN])
    sender = _sender(parsed)
    moment = _local(parsed.sent_at, time_zone)
    rows = [(texts["from"], _display(sender) if sender else ""),
            (texts["date"], moment.strftime(texts["date_format"]) if moment else ""),
            (texts["subject"], parsed.subject),
            (texts["to"], ", ".join(_display(a) for a in parsed.to))]
    if parsed.cc:
        rows.append((texts["cc"], ", ".join(_display(a) for a in parsed.cc)))
    header_text = "\n".join(f"{label}: {value}" for label, value in rows)
    text = f"\n\n{texts['forwarded']}\n{header_text}\n\n{parsed.body_text or ''}\n"
    if parsed.body_html is None:
        return text, None
    header_html = "<br>".join(f"{html.escape(label)}: {html.escape(value)}" for label, value in rows)
    markup = (f"<div><br></div><div>{html.escape(texts['forwarded'])}<br>{header_html}</div><br>"
              f"{sanitize_outgoing(parsed.body_html)}")
    return text, markup


@dataclass(frozen=True, slots=True)
class _Original:
    message_id: int
    account_id: int
    parsed: ParsedMessage
    raw: bytes


class ReplyService:
    def __init__(self, db: Database, downloads: BlobService, identities: IdentityService) -> None:
        self.downloads = downloads
        self.identities = identities
        self.messages = DraftRepository(db)
        self.users = UserRepository(db)

    async def start(self, user_id: int, message_id: int, kind: AnswerKind, *, identity_id: int | None = None,
                    quote: bool = True) -> DraftContent:
        """The draft an answer starts as: addressed, threaded, the original quoted (unless `quote` is off) with
        room above it for the answer; `answers` and `answer_keyword` mark the original once it went."""
        original = await self._original(user_id, message_id)
        user = await self.users.by_id(user_id)
        locale = user.locale if user is not None else Locale.EN
        time_zone = user.time_zone if user is not None else "UTC"
        identity = await self._identity(user_id, original, identity_id)
        own = {i.email.lower() for i in await self.identities.for_user(user_id)}
        parsed = original.parsed
        to, cc = recipients(parsed, kind, own)
        texts = _TEXTS.get(locale, _TEXTS[Locale.EN])
        forwarding = kind in (AnswerKind.FORWARD, AnswerKind.FORWARD_ATTACHED)
        if forwarding:
            in_reply_to: tuple[str, ...] = ()
            references = thread_headers(parsed)[1]  # a forward stays findable from its conversation
            subject = forward_subject(parsed.subject)
        else:
            in_reply_to, references = thread_headers(parsed)
            subject = reply_subject(parsed.subject)
        text_body: str = ""
        html_body: str | None = None
        attachments: tuple[OutgoingAttachment, ...] = ()
        if kind is AnswerKind.FORWARD_ATTACHED:
            name = re.sub(r"[^\w\- ]+", "", parsed.subject).strip()[:60] or "message"
            attachments = (OutgoingAttachment(f"{name}.eml", "message/rfc822", original.raw),)
        elif kind is AnswerKind.FORWARD:
            text_body, html_body = forward_original(parsed, locale, time_zone)
            # Files go along; images the HTML shows inline go along only with the HTML that shows them.
            attachments = tuple(
                OutgoingAttachment(p.filename or "", p.content_type, p.data,
                                   content_id=p.content_id if p.is_inline and html_body is not None else None)
                for p in parsed.parts
                if not p.is_calendar and (not p.is_inline or (html_body is not None and p.content_id)))
        elif quote:
            text_body, html_body = self._quoted(parsed, texts, time_zone)
        return DraftContent(
            identity_id=identity.id, to=to, cc=cc, subject=subject, text_body=text_body, html_body=html_body,
            attachments=attachments, in_reply_to=in_reply_to, references=references, answers=original.message_id,
            answer_keyword=kind.keyword,
        )

    # -- helpers ----------------------------------------------------------------------------------------------

    async def _original(self, user_id: int, message_id: int) -> _Original:
        message = await self.messages.owned(user_id, message_id)
        if message is None:
            raise NotFoundError("No such message.")
        raw, _ = await self.downloads.raw_message(message.account_id, message.id)
        return _Original(message.id, message.account_id, parse_mime(raw), raw)

    async def _identity(self, user_id: int, original: _Original, identity_id: int | None) -> Identity:
        """The identity asked for; else the one the original was addressed to; else the account's primary."""
        if identity_id is not None:
            return await self.identities.sendable(user_id, identity_id)
        account = await self.identities.for_account(user_id, original.account_id)
        by_address = {i.email.lower(): i for i in account}
        headers = email.message_from_bytes(original.raw.split(b"\r\n\r\n", 1)[0] + b"\r\n\r\n",
                                           policy=email.policy.compat32)
        delivered = [a for _, a in email.utils.getaddresses([*(headers.get_all("Delivered-To") or []),
                                                             *(headers.get_all("X-Original-To") or [])])]
        parsed = original.parsed
        for address in [*(a.address for a in (*parsed.to, *parsed.cc)), *delivered, parsed.from_address or ""]:
            found = by_address.get(address.lower())
            if found is not None:
                return found
        primary = next((i for i in account if i.is_primary), account[0] if account else None)
        if primary is None:
            raise NotFoundError("This account has no address to send from.")
        return primary

    def _attribution(self, parsed: ParsedMessage, texts: dict[str, str], time_zone: str) -> str:
        sender = _sender(parsed)
        moment = _local(parsed.sent_at, time_zone)
        when = moment.strftime(texts["date_format"]) if moment is not None else "?"
        return texts["wrote"].format(date=when, name=_display(sender) if sender else "?")

    def _quoted(self, parsed: ParsedMessage, texts: dict[str, str], time_zone: str) -> tuple[str, str | None]:
        return quote_original(parsed, self._attribution(parsed, texts, time_zone))
