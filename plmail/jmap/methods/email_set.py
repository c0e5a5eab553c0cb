"""Email/changes, Email/set (RFC 8621 §4.3, §4.6) and Email/import (§4.8)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from plmail.domain.enums import JmapObjectType, LabelRole, ProviderKind
from plmail.domain.errors import ForbiddenError, NotFoundError, PlmailError
from plmail.domain.ids import parse_id
from plmail.domain.mailstore import MailScope
from plmail.domain.messages import Address
from plmail.domain.models import AccountRow
from plmail.domain.outgoing import DraftContent, OutgoingAttachment
from plmail.jmap.capabilities import LIMITS, MAIL
from plmail.jmap.common import (
    SET_ARGUMENTS,
    changes_response,
    check_state,
    ensure_bound,
    set_request,
    set_response,
    utc_date,
)
from plmail.jmap.email_create import BlobText, parse_create
from plmail.jmap.email_patch import parse_patch
from plmail.jmap.errors import MethodError, SetError, invalid_arguments, invalid_properties, refusal
from plmail.jmap.registry import Call, MethodTable
from plmail.mail.compose import envelope_of
from plmail.mail.email_writes import EmailChange, Imported
from plmail.mail.keywords import DRAFT, keywords_of

table = MethodTable()
EMAIL = JmapObjectType.EMAIL


@table.method("Email/changes", MAIL)
async def changes(call: Call) -> dict[str, Any]:
    return await changes_response(call, EMAIL)


def _mailbox_keys(call: Call, values: dict[str, Any] | list[str]) -> dict[str, str]:
    """Client mailbox id -> id to resolve, with "#creationId"s (Mailbox/set earlier in the request) replaced."""
    resolved = {}
    for key in values:
        found = call.ctx.creation_id(key)
        if found is None:
            raise invalid_properties(f"Nothing was created as {key!r} in this request.", "mailboxIds")
        resolved[key] = found
    return resolved


async def _labels(call: Call, scope: MailScope, keys: dict[str, str]) -> dict[str, int]:
    """Client mailbox id -> label id, for the ids that name a mailbox of this account."""
    numeric = {key: parse_id(target) for key, target in keys.items()}
    labels = await call.ctx.services.email_writer.resolve_mailboxes(
        call.ctx.principal.user_id, scope, sorted({n for n in numeric.values() if n is not None}))
    return {key: labels[n] for key, n in numeric.items() if n is not None and n in labels}


@table.method("Email/set", MAIL)
async def set_(call: Call) -> dict[str, Any]:
    args = call.args(*SET_ARGUMENTS)
    scope = call.scope(args)
    request = set_request(args)
    await ensure_bound(call, scope)
    old_state = await check_state(call, args, scope, EMAIL)
    user_id = call.ctx.principal.user_id
    services = call.ctx.services
    writer = services.email_writer
    created: dict[str, Any] = {}
    not_created: dict[str, Any] = {}
    for creation_id, values in request.create.items():
        try:
            created[creation_id] = await _create(call, scope, values)
            call.ctx.created_ids[creation_id] = created[creation_id]["id"]
        except (SetError, PlmailError) as exc:
            not_created[creation_id] = refusal(exc)
    ids = {raw: call.ctx.creation_id(raw) for raw in [*request.update, *request.destroy]}
    numeric = {raw: int(v) for raw, v in ids.items() if v is not None and v.isdigit() and len(v) <= 18}
    owned = await writer.messages(user_id, scope, sorted(set(numeric.values())))
    flags = await services.emails.flags(scope, sorted(owned))
    updated: dict[str, Any] = {}
    not_updated: dict[str, Any] = {}
    planned: list[EmailChange] = []
    for raw, patch in request.update.items():
        try:
            message = owned.get(numeric.get(raw, 0))
            if message is None:
                raise SetError("notFound", f"No email {raw!r} in this account.")
            parsed = parse_patch(patch)
            keys = _mailbox_keys(call, parsed.mailboxes if parsed.mailboxes is not None else parsed.mailbox_edits)
            labels = await _labels(call, scope, keys)
            planned.append(writer.plan(message, flags.get(message.id, ()), parsed, labels))
            updated[raw] = None
        except (SetError, PlmailError) as exc:
            not_updated[raw] = refusal(exc)
    await writer.apply(user_id, planned)
    destroyed, not_destroyed = await _destroy(call, request.destroy, numeric, owned, flags)
    call.ctx.states.invalidate()
    new_state = await call.ctx.states.state(scope, EMAIL)
    return set_response(call.jmap_id(scope), old_state, new_state, created=created, updated=updated,
                        destroyed=destroyed, not_created=not_created, not_updated=not_updated,
                        not_destroyed=not_destroyed)


async def _destroy(call: Call, raws: list[str], numeric: dict[str, int], owned: dict[int, Any],
                   flags: dict[int, tuple[str, ...]]) -> tuple[list[str], dict[str, Any]]:
    """Destroy is destroy (RFC 8621 §4.6): gone here and at the provider. A draft goes the drafts' way (a
    send of it still waiting is canceled with it); a provider that cannot delete for good says why."""
    services, user_id = call.ctx.services, call.ctx.principal.user_id
    not_destroyed: dict[str, Any] = {}
    wanted: dict[int, str] = {}
    for raw in raws:
        if numeric.get(raw) in owned:
            wanted[numeric[raw]] = raw
        else:
            not_destroyed[raw] = SetError("notFound", f"No email {raw!r} in this account.").as_json()
    rest: list[int] = []
    gone: set[int] = set()
    for message_id in wanted:
        if DRAFT in keywords_of(flags.get(message_id, ()), seen=False, starred=False):
            try:
                await services.drafts.discard(user_id, message_id)
                gone.add(message_id)
                continue
            except ForbiddenError:
                pass  # $draft, but not in Drafts: an email like any other
        rest.append(message_id)
    outcome = await services.destroyer.destroy(user_id, rest)
    gone |= set(outcome.destroyed)
    for message_id, reason in outcome.refused.items():
        not_destroyed[wanted[message_id]] = SetError("forbidden", reason).as_json()
    for message_id in rest:
        if message_id not in gone and wanted[message_id] not in not_destroyed:
            not_destroyed[wanted[message_id]] = SetError("notFound", "The email is gone already.").as_json()
    return [raw for message_id, raw in wanted.items() if message_id in gone], not_destroyed


async def _home(call: Call, scope: MailScope, sender: str | None, labels: dict[str, int],
                keywords: frozenset[str]) -> AccountRow:
    """The account a new or imported email goes to: the account itself; in the unified account the first of these
    that can keep it: the account that sends as its From (so a client can import or write, then submit), the
    accounts whose provider keeps a mailbox it names (a label with a folder or label id there), the local archive,
    the other accounts. A provider's account keeps drafts ($draft, in Drafts) and copies of mail sent elsewhere (in
    Sent alone, where its provider files them: IMAP); a local archive keeps anything.
    A From that is no identity is no reason to refuse: RFC 8621 keeps forbiddenFrom for EmailSubmission/set ("The
    server does not permit the user to send a message with the From header field of the message to be sent" is
    its SetError, §7.5)."""
    principal = call.ctx.principal
    if not scope.unified:
        account = principal.account(str(scope.account_id))
        assert account is not None
        return account
    if not principal.accounts:
        raise SetError("forbidden", "Connect a mail account first: there is nowhere to keep this email.")
    services = call.ctx.services
    candidates: list[AccountRow] = []
    if sender:
        identity = await services.identities.for_address(principal.user_id, sender)
        found = principal.account(str(identity.account_id)) if identity is not None else None
        if found is not None:
            candidates.append(found)
    for owner in await services.email_writer.mailbox_accounts(principal.user_id, sorted(set(labels.values()))):
        found = principal.account(str(owner))
        if found is not None:
            candidates.append(found)
    candidates += [a for a in principal.accounts if a.provider_kind is ProviderKind.LOCAL]
    candidates += list(principal.accounts)
    roles = await services.labels.role_ids(principal.user_id)
    is_draft = DRAFT in keywords and roles[LabelRole.DRAFTS] in labels.values()
    sent_copy = DRAFT not in keywords and set(labels.values()) == {roles[LabelRole.SENT]}
    return next((a for a in candidates if a.provider_kind is ProviderKind.LOCAL or is_draft
                 or (sent_copy and services.drafts.keeps_sent_copies(a.provider_kind))), candidates[0])


async def _text(call: Call, scope: MailScope, given: str | None, blob: BlobText | None, where: str) -> str | None:
    """A text part's content: given in bodyValues, or an uploaded blob decoded with the part's charset."""
    if blob is None:
        return given
    try:
        content = await call.ctx.services.downloads.download(call.ctx.principal.user_id, scope, blob.blob_id)
    except NotFoundError:
        raise SetError("blobNotFound", "These blobs are not in this account.", not_found=[blob.blob_id]) from None
    try:
        return content.data.decode(blob.charset or "utf-8")
    except (LookupError, UnicodeDecodeError):
        raise invalid_properties(f"The blob of {where} is not text in {blob.charset or 'utf-8'}.", where) from None


async def _create(call: Call, scope: MailScope, values: dict[str, Any]) -> dict[str, Any]:
    """One Email/set create: a draft (or, in a local archive, any email) composed from the fields given."""
    parsed = parse_create(values)
    services, user_id = call.ctx.services, call.ctx.principal.user_id
    keys = _mailbox_keys(call, parsed.mailbox_keys)
    labels = await _labels(call, scope, keys)
    if len(labels) != len(keys):
        raise invalid_properties("No such mailbox.", "mailboxIds")
    account = await _home(call, scope, parsed.sender.address if parsed.sender else None, labels, parsed.keywords)
    attachments: list[OutgoingAttachment] = []
    missing: list[str] = []
    for part in parsed.files:
        if part.blob_id is None:
            attachments.append(OutgoingAttachment(part.name, part.content_type, part.data or b"",
                                                  content_id=part.content_id, inline=part.inline,
                                                  headers=part.headers))
            continue
        try:
            blob = await services.downloads.download(user_id, scope, part.blob_id)
        except NotFoundError:
            missing.append(part.blob_id)
            continue
        attachments.append(OutgoingAttachment(part.name or (blob.name if blob.name != "upload" else ""),
                                              part.content_type, blob.data, content_id=part.content_id,
                                              inline=part.inline, headers=part.headers))
    if missing:
        raise SetError("blobNotFound", "These blobs are not in this account.", not_found=missing)
    text = await _text(call, scope, parsed.text, parsed.text_blob, "textBody")
    html = await _text(call, scope, parsed.html, parsed.html_blob, "htmlBody")
    sender = parsed.sender
    if sender is None:
        primary = await services.identities.primary(user_id, account.id)
        if primary is None:
            raise invalid_properties("Give the From address: this account has no identity.", "from")
        sender = Address(primary.name, primary.email)
    content = DraftContent(
        identity_id=0, to=parsed.to, cc=parsed.cc, bcc=parsed.bcc, subject=parsed.subject,
        text_body=text, html_body=html, attachments=tuple(attachments),
        in_reply_to=parsed.in_reply_to, references=parsed.references, reply_to=parsed.reply_to,
        extra_headers=parsed.headers, text_headers=parsed.text_headers, html_headers=parsed.html_headers)
    saved = await services.drafts.write(
        user_id, account.id, sender, content, keywords=parsed.keywords, label_ids=tuple(sorted(set(labels.values()))),
        message_id=parsed.message_id, sent_at=parsed.sent_at, local_account=account.provider_kind is ProviderKind.LOCAL,
        received_at=parsed.received_at)
    return {"id": str(saved.message_id), "blobId": f"m-{saved.message_id}",
            "threadId": str(saved.thread_id) if saved.thread_id is not None else None, "size": saved.size}


@table.method("Email/import", MAIL)
async def import_(call: Call) -> dict[str, Any]:
    args = call.args("accountId", "ifInState", "emails")
    scope = call.scope(args)
    emails = args.objects("emails")
    if emails is None:
        # RFC 8621 §4.8: emails is "Id[EmailImport]", not optional; RFC 8620 §3.6.2 invalidArguments
        raise invalid_arguments("'emails' is required.")
    if len(emails) > LIMITS.max_objects_in_set:
        raise MethodError("requestTooLarge", f"At most {LIMITS.max_objects_in_set} emails per call.")
    await ensure_bound(call, scope)
    old_state = await check_state(call, args, scope, EMAIL)
    services, user_id = call.ctx.services, call.ctx.principal.user_id
    created: dict[str, Any] = {}
    not_created: dict[str, Any] = {}
    for creation_id, values in emails.items():
        try:
            unknown = sorted(set(values) - {"blobId", "mailboxIds", "keywords", "receivedAt"})
            if unknown:
                raise invalid_properties("These properties cannot be imported.", *unknown)
            blob_id = values.get("blobId")
            raw = await services.downloads.uploaded(user_id, scope, blob_id) if isinstance(blob_id, str) else None
            if raw is None:
                # RFC 8621 §4.8: an import whose blobId names nothing is invalidProperties
                raise invalid_properties("No such blob in this account.", "blobId")
            mailbox_ids = values.get("mailboxIds")
            if not isinstance(mailbox_ids, dict) or not mailbox_ids or not all(v is True for v in
                                                                              mailbox_ids.values()):
                raise invalid_properties("An imported email needs at least one mailbox.", "mailboxIds")
            keys = _mailbox_keys(call, mailbox_ids)
            resolved = await _labels(call, scope, keys)
            if len(resolved) != len(keys):
                raise invalid_properties("No such mailbox.", "mailboxIds")
            keywords = values.get("keywords") or {}
            if not isinstance(keywords, dict) or not all(v is True for v in keywords.values()):
                raise invalid_properties("'keywords' maps keywords to true.", "keywords")
            received = _instant(values.get("receivedAt"))
            wanted = {str(k).lower() for k in keywords}
            account = await _home(call, scope, envelope_of(raw).mail_from, resolved, frozenset(wanted))
            if account.provider_kind is ProviderKind.LOCAL:
                imported = await services.email_writer.import_email(
                    account.id, account.provider_kind, raw, sorted(set(resolved.values())), wanted, received)
            else:  # a provider's account keeps what it can hand to its server: a draft, or a copy for its Sent
                saved = await services.drafts.import_draft(
                    user_id, account.id, raw, label_ids=tuple(sorted(set(resolved.values()))),
                    keywords=frozenset(wanted), received_at=received)
                imported = Imported(saved.message_id, saved.thread_id, saved.size)
            call.ctx.created_ids[creation_id] = str(imported.id)
            created[creation_id] = {"id": str(imported.id), "blobId": f"m-{imported.id}",
                                    "threadId": str(imported.thread_id) if imported.thread_id else None,
                                    "size": imported.size}
        except (SetError, PlmailError) as exc:
            not_created[creation_id] = refusal(exc)
    call.ctx.states.invalidate()
    new_state = await call.ctx.states.state(scope, EMAIL)
    return {"accountId": call.jmap_id(scope), "oldState": old_state, "newState": new_state,
            "created": created or None, "notCreated": not_created or None}


def _instant(value: Any) -> datetime | None:
    return None if value is None else utc_date(value, "receivedAt")
