"""Unsubscribe from a mailing list, as Gmail offers it above a list's message.

RFC 2369 `List-Unsubscribe` names the ways (`<mailto:…>`, `<https://…>`); with RFC 8058's
`List-Unsubscribe-Post: List-Unsubscribe=One-Click` the https URI takes one POST and nothing else. plmail uses, in
this order: the one-click POST, a mail to the mailto address (composed here and sent through the user's own
transport, the outbox, like any message), or the sender's web page, which the browser opens. The user confirms
once; the unsubscription is recorded per list (List-Id, else the sender) so the button then says "Unsubscribed".
"""

from __future__ import annotations

import ipaddress
import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import parse_qs, unquote, urlsplit

from plmail.db.database import Database
from plmail.domain.errors import NotFoundError, PlmailError, ValidationError
from plmail.domain.messages import Address, RawHeaders
from plmail.domain.outgoing import DraftContent, Identity
from plmail.domain.ports import OneClickUnsubscriber
from plmail.mail.drafts import DraftService
from plmail.mail.headers import header, header_values
from plmail.mail.identities import IdentityService
from plmail.mail.outbox import OutboxService
from plmail.mail.repos.unsubscriptions import UnsubscriptionRepository
from plmail.mail.repos.views import MailViewRepository, MessageView

log = logging.getLogger(__name__)
Network = ipaddress.IPv4Network | ipaddress.IPv6Network

ONE_CLICK = "List-Unsubscribe=One-Click"  # RFC 8058 §3.1: the header's value and the POST's body
_URIS = re.compile(r"<\s*([^>]+?)\s*>")
_LIST_ID = re.compile(r"<\s*([^>]+?)\s*>")


@dataclass(frozen=True, slots=True)
class UnsubscribeOffer:
    method: str  # "one_click", "mailto" or "link"
    target: str  # the URI
    list_key: str  # List-Id, else the sender's address: what the record is kept under
    done: bool = False  # the user already unsubscribed from this list


@dataclass(frozen=True, slots=True)
class UnsubscribeOutcome:
    method: str
    target: str
    submission_id: int | None = None  # the mailto's message in the outbox
    first: bool = True  # False: it was already recorded, nothing was sent again


def unsubscribe_offer(headers: RawHeaders | None, sender: str, *,
                      test_http: Sequence[Network] = ()) -> UnsubscribeOffer | None:
    """The best way to leave the list this message came from, or None when it names none. `test_http`: networks
    (tests' loopback servers only) whose plain-http URIs count as https."""
    uris = [u.replace("\r", "").replace("\n", "").replace(" ", "") for value in
            header_values(headers, "list-unsubscribe") for u in _URIS.findall(value)]
    if not uris:
        return None
    list_id = _LIST_ID.findall(header(headers, "list-id") or "")
    key = (list_id[0] if list_id else (header(headers, "list-id") or "").strip() or sender).lower()
    if not key:
        return None
    https = [u for u in uris if urlsplit(u).scheme.lower() == "https" or _test_server(u, test_http)]
    one_click = any(v.strip().lower() == ONE_CLICK.lower() for v in header_values(headers, "list-unsubscribe-post"))
    if one_click and https:
        return UnsubscribeOffer("one_click", https[0], key)
    mailto = [u for u in uris if urlsplit(u).scheme.lower() == "mailto" and "@" in u]
    if mailto:
        return UnsubscribeOffer("mailto", mailto[0], key)
    web = https or [u for u in uris if urlsplit(u).scheme.lower() == "http"]
    if web:
        return UnsubscribeOffer("link", web[0], key)
    return None


def _test_server(uri: str, networks: Sequence[Network]) -> bool:
    parts = urlsplit(uri)
    if parts.scheme.lower() != "http" or not networks:
        return False
    try:
        address = ipaddress.ip_address(parts.hostname or "")
    except ValueError:
        return False
    return any(address in network for network in networks)


def mailto_parts(uri: str) -> tuple[str, str, str]:
    """RFC 6068: (address, subject, body) of a mailto URI; the subject defaults to "unsubscribe"."""
    parts = urlsplit(uri)
    address = unquote(parts.path).split(",")[0].strip()
    query = {k.lower(): v for k, v in parse_qs(parts.query).items()}
    if not address and query.get("to"):
        address = query["to"][0].split(",")[0].strip()
    if "@" not in address:
        raise ValidationError("The list's unsubscribe address is not an email address.")
    subject = (query.get("subject") or ["unsubscribe"])[0][:200]
    body = (query.get("body") or ["unsubscribe"])[0][:2000]
    return address, subject, body


class UnsubscribeService:
    def __init__(self, db: Database, identities: IdentityService, drafts: DraftService, outbox: OutboxService,
                 one_click: OneClickUnsubscriber, *, test_http: Sequence[Network] = ()) -> None:
        self.test_http = tuple(test_http)
        self.views = MailViewRepository(db)
        self.records = UnsubscriptionRepository(db)
        self.identities = identities
        self.drafts = drafts
        self.outbox = outbox
        self.one_click = one_click

    async def offer(self, user_id: int, message: MessageView) -> UnsubscribeOffer | None:
        offer = unsubscribe_offer(message.headers, message.from_address, test_http=self.test_http)
        if offer is None:
            return None
        done = await self.records.done(user_id, offer.list_key)
        return UnsubscribeOffer(offer.method, offer.target, offer.list_key, done=done is not None)

    async def unsubscribe(self, user_id: int, message_id: int) -> UnsubscribeOutcome:
        message = await self.views.message(user_id, message_id)
        if message is None:
            raise NotFoundError("No such message.")
        offer = await self.offer(user_id, message)
        if offer is None:
            raise ValidationError("This message names no way to unsubscribe.")
        if offer.done:  # asked once: a second click (another tab, a reload) sends nothing again
            return UnsubscribeOutcome(offer.method, offer.target, first=False)
        # Recorded first, so that two clicks at once send once; a failure below takes the record back.
        if not await self.records.record(user_id, offer.list_key, offer.method, offer.target):
            return UnsubscribeOutcome(offer.method, offer.target, first=False)
        try:
            if offer.method == "one_click":
                status = await self.one_click.post_one_click(offer.target)
                if not 200 <= status < 300:
                    raise ValidationError(f"The sender's server answered the unsubscribe request with {status}.")
                return UnsubscribeOutcome(offer.method, offer.target)
            if offer.method == "mailto":
                submission = await self._send_mailto(user_id, message, offer.target)
                return UnsubscribeOutcome(offer.method, offer.target, submission_id=submission)
            return UnsubscribeOutcome(offer.method, offer.target)  # the browser opens the page
        except BaseException:
            await self.records.forget(user_id, offer.list_key)
            raise

    async def _send_mailto(self, user_id: int, message: MessageView, uri: str) -> int:
        address, subject, body = mailto_parts(uri)
        identity = await self._identity(user_id, message)
        content = DraftContent(identity_id=identity.id, to=(Address("", address),), subject=subject,
                               text_body=body + "\n")
        saved = await self.drafts.save(user_id, content, push=False)  # sent at once: never in the Drafts
        try:
            submission = await self.outbox.submit(user_id, saved.message_id, identity.id, origin="web",
                                                  marks_answered=False)
        except PlmailError:
            await self.drafts.discard(user_id, saved.message_id)
            raise
        return submission.id

    async def _identity(self, user_id: int, message: MessageView) -> Identity:
        """The identity the list wrote to, else the primary one of the account the mail arrived on."""
        mine = await self.identities.for_account(user_id, message.account_id)
        if not mine:
            raise ValidationError("The account this message arrived on cannot send mail.")
        addressed = {str(r.get("address", "")).lower() for r in (*message.to, *message.cc)}
        for identity in mine:
            if identity.email.lower() in addressed:
                return identity
        return next((i for i in mine if i.is_primary), mine[0])
