"""Sending through the upstream (RFC 8621 §7): the message is imported into its Drafts, then submitted with
`EmailSubmission/set` as one of the identities `Identity/get` lists, and on success moved to Sent by the server
(`onSuccessUpdateEmail`), so the upstream files its own Sent copy and the next sync adopts it by Message-ID."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from plmail.domain.ingest import ProviderRef
from plmail.domain.messages import Address
from plmail.domain.models import Account
from plmail.domain.outgoing import OutgoingMessage, ProvidedIdentity, SendError, SendFailure, SendReceipt
from plmail.providers.jmap.client import CORE, MAIL, SUBMISSION
from plmail.providers.jmap.connection import JMAP, Upstream
from plmail.providers.jmap.errors import JmapConnectionError, JmapError
from plmail.providers.jmap.sync import JmapMail

_USING = (CORE, MAIL, SUBMISSION)
# EmailSubmission/set SetErrors (RFC 8621 §7.5) that sending again cannot cure.
_PERMANENT = {"invalidEmail", "tooManyRecipients", "noRecipients", "invalidRecipients", "forbiddenMailFrom",
              "forbiddenFrom", "forbiddenToSend", "tooLarge", "invalidProperties", "notFound"}
# ... unless the server hands on its relay's reply and that is a transient one (a 4xx, RFC 5321 §4.2.1, or a 4.X.X
# enhanced code, RFC 3463 §3.1): Cyrus reports its relay's "421 4.3.2 try again later" as forbiddenToSend.
_TRANSIENT_REPLY = re.compile(r"^\s*(?:4\d\d(?:[ -]|$)|4\.\d{1,3}\.\d{1,3}(?:\s|$))")


def _addresses(value: Any) -> tuple[Address, ...]:
    return tuple(Address(name=str(a.get("name") or ""), address=str(a.get("email") or ""))
                 for a in (value or []) if isinstance(a, dict) and a.get("email"))


class JmapIdentitySource:
    """The identities the upstream lets this account send as; it decides, so the user adds none here."""

    kind = JMAP
    user_aliases = False

    def __init__(self, mail: JmapMail) -> None:
        self.mail = mail

    async def identities(self, account: Account) -> Sequence[ProvidedIdentity]:
        upstream = await self._upstream(account)
        if not upstream.session.can_send():
            return []
        listed = await self._identities(upstream)
        return [ProvidedIdentity(email=str(i["email"]).lower(), name=str(i.get("name") or ""),
                                 reply_to=_addresses(i.get("replyTo")),
                                 text_signature=str(i.get("textSignature") or ""),
                                 html_signature=str(i.get("htmlSignature") or ""),
                                 is_primary=str(i["email"]).lower() == account.email.lower())
                for i in listed if i.get("email") and "*" not in str(i["email"])]

    async def _upstream(self, account: Account) -> Upstream:
        record = await self.mail.accounts.for_job(account.id)
        if record is None:
            raise JmapError("The account is gone.")
        return await self.mail.connector.open(record)

    async def _identities(self, upstream: Upstream) -> list[dict[str, Any]]:
        answer = await self.mail.client.one(upstream.session, upstream.credentials, "Identity/get",
                                            {"accountId": upstream.session.account_id, "ids": None}, using=_USING)
        return list(answer.get("list", []))


class JmapTransport:
    kind = JMAP

    def __init__(self, mail: JmapMail, identities: JmapIdentitySource) -> None:
        self.mail = mail
        self.identity_source = identities

    async def send(self, account: Account, message: OutgoingMessage, *, draft: ProviderRef | None) -> SendReceipt:
        try:
            upstream = await self.identity_source._upstream(account)
            if not upstream.session.can_send():
                raise SendError("The JMAP server does not let this account send (no submission capability).",
                                failure=SendFailure.PERMANENT)
            sender = message.envelope.mail_from.lower()
            identity = next((i for i in await self.identity_source._identities(upstream)
                             if str(i.get("email") or "").lower() == sender), None)
            if identity is None:
                raise SendError(f"The JMAP server has no identity for {sender}.", failure=SendFailure.PERMANENT,
                                reason="forbiddenFrom")
            boxes = {m.role: m.mailbox_id for m in await self.mail.store.mailboxes(account.id) if m.role}
            drafts, sent = boxes.get("drafts"), boxes.get("sent")
            if drafts is None and sent is None:
                raise SendError("The JMAP server's mailbox has neither Drafts nor Sent to send from.",
                                failure=SendFailure.PERMANENT)
            blob = await self.mail.client.upload(upstream.session, upstream.credentials, message.wire)
            imported = await self.mail.call(upstream, "Email/import", {"emails": {"out": {
                "blobId": blob, "mailboxIds": {str(drafts or sent): True},
                "keywords": {"$seen": True, "$draft": True}}}})
        except SendError:
            raise
        except JmapError as exc:  # nothing was submitted yet: trying again is safe
            failure = SendFailure.TEMPORARY if exc.retryable or isinstance(exc, JmapConnectionError) else \
                SendFailure.PERMANENT
            raise SendError(str(exc), failure=failure) from exc
        created = (imported.get("created") or {}).get("out")
        if not created:
            error = (imported.get("notCreated") or {}).get("out") or {}
            raise SendError(f"The JMAP server would not take the message: {error.get('type')}",
                            failure=SendFailure.PERMANENT, reason=error.get("type"))
        move: dict[str, Any] = {"keywords/$draft": None}
        if sent is not None:
            move[f"mailboxIds/{sent}"] = True
            if drafts is not None:
                move[f"mailboxIds/{drafts}"] = None
        submission = {"identityId": identity["id"], "emailId": created["id"],
                      "envelope": {"mailFrom": {"email": message.envelope.mail_from},
                                   "rcptTo": [{"email": r} for r in message.envelope.rcpt_to]}}
        try:
            answer = await self.mail.client.one(upstream.session, upstream.credentials, "EmailSubmission/set", {
                "accountId": upstream.session.account_id, "create": {"send": submission},
                "onSuccessUpdateEmail": {"#send": move}}, using=_USING)
        except JmapConnectionError as exc:  # the request may have reached the server: it may have gone
            raise SendError(str(exc), failure=SendFailure.UNCERTAIN) from exc
        except JmapError as exc:
            raise SendError(str(exc), failure=SendFailure.PERMANENT) from exc
        if not (answer.get("created") or {}).get("send"):
            error = (answer.get("notCreated") or {}).get("send") or {}
            kind = str(error.get("type") or "serverFail")
            description = str(error.get("description") or "")
            permanent = kind in _PERMANENT and not _TRANSIENT_REPLY.match(description)
            await self.mail.call(upstream, "Email/set", {"destroy": [created["id"]]})  # not left in Drafts
            raise SendError(f"The JMAP server refused to send it: {kind} {description}".strip(),
                            failure=SendFailure.PERMANENT if permanent else SendFailure.TEMPORARY,
                            reason=kind, rejected=tuple(error.get("invalidRecipients") or ()))
        return SendReceipt(provider_files_copy=sent is not None)
