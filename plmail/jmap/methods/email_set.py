"""Email/changes, Email/set (RFC 8621 §4.3, §4.6) and Email/import (§4.8)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from plmail.domain.enums import JmapObjectType, ProviderKind
from plmail.domain.errors import NotFoundError, PlmailError
from plmail.domain.ids import parse_id
from plmail.domain.messages import Address
from plmail.domain.models import AccountRow
from plmail.domain.outgoing import DraftContent, OutgoingAttachment
from plmail.jmap.capabilities import LIMITS, MAIL
from plmail.jmap.common import SET_ARGUMENTS, changes_response, check_state, ensure_bound, set_request, set_response
from plmail.jmap.email_create import parse_create
from plmail.jmap.email_patch import parse_patch
from plmail.jmap.errors import MethodError, SetError, invalid_properties, refusal
from plmail.jmap.registry import Call, MethodTable
from plmail.mail.email_writes import EmailChange

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


async def _labels(call: Call, account_id: int, keys: dict[str, str]) -> dict[str, int]:
    """Client mailbox id -> label id, for the ids that name a mailbox of this account."""
    numeric = {key: parse_id(target) for key, target in keys.items()}
    labels = await call.ctx.services.email_writer.resolve_mailboxes(
        call.ctx.principal.user_id, account_id, sorted({n for n in numeric.values() if n is not None}))
    return {key: labels[n] for key, n in numeric.items() if n is not None and n in labels}


@table.method("Email/set", MAIL)
async def set_(call: Call) -> dict[str, Any]:
    args = call.args(*SET_ARGUMENTS)
    account = call.account(args)
    request = set_request(args)
    await ensure_bound(call, account.id)
    old_state = await check_state(call, args, account.id, EMAIL)
    user_id = call.ctx.principal.user_id
    writer = call.ctx.services.email_writer
    created: dict[str, Any] = {}
    not_created: dict[str, Any] = {}
    for creation_id, values in request.create.items():
        try:
            created[creation_id] = await _create(call, account, values)
            call.ctx.created_ids[creation_id] = created[creation_id]["id"]
        except (SetError, PlmailError) as exc:
            not_created[creation_id] = refusal(exc)
    ids = {raw: call.ctx.creation_id(raw) for raw in [*request.update, *request.destroy]}
    numeric = {raw: int(v) for raw, v in ids.items() if v is not None and v.isdigit() and len(v) <= 18}
    owned = await writer.messages(user_id, account.id, sorted(set(numeric.values())))
    flags = await call.ctx.services.emails.flags(account.id, sorted(owned))
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
            labels = await _labels(call, account.id, keys)
            planned.append(writer.plan(message, flags.get(message.id, ()), parsed, labels))
            updated[raw] = None
        except (SetError, PlmailError) as exc:
            not_updated[raw] = refusal(exc)
    await writer.apply(user_id, planned)
    destroyed = [raw for raw in request.destroy if numeric.get(raw) in owned]
    # A draft destroyed is gone, here and at the provider; any other email goes to Trash.
    drafts = [raw for raw in destroyed if "$draft" in flags.get(numeric[raw], ())]
    for raw in drafts:
        await call.ctx.services.drafts.discard(user_id, numeric[raw])
    await writer.trash(user_id, [numeric[raw] for raw in destroyed if raw not in drafts])
    not_destroyed = {raw: SetError("notFound", f"No email {raw!r} in this account.").as_json()
                     for raw in request.destroy if raw not in destroyed}
    call.ctx.states.invalidate()
    new_state = await call.ctx.states.state(account.id, EMAIL)
    return set_response(account.id, old_state, new_state, created=created, updated=updated, destroyed=destroyed,
                        not_created=not_created, not_updated=not_updated, not_destroyed=not_destroyed)


async def _create(call: Call, account: AccountRow, values: dict[str, Any]) -> dict[str, Any]:
    """One Email/set create: a draft (or, in a local archive, any email) composed from the fields given."""
    parsed = parse_create(values)
    services, user_id = call.ctx.services, call.ctx.principal.user_id
    keys = _mailbox_keys(call, parsed.mailbox_keys)
    labels = await _labels(call, account.id, keys)
    if len(labels) != len(keys):
        raise invalid_properties("No such mailbox.", "mailboxIds")
    attachments: list[OutgoingAttachment] = []
    missing: list[str] = []
    for part in parsed.files:
        try:
            blob = await services.downloads.download(user_id, account.id, part.blob_id)
        except NotFoundError:
            missing.append(part.blob_id)
            continue
        attachments.append(OutgoingAttachment(part.name or (blob.name if blob.name != "upload" else ""),
                                              part.content_type, blob.data,
                                              content_id=part.content_id if part.inline else None))
    if missing:
        raise SetError("blobNotFound", "These blobs are not in this account.", not_found=missing)
    sender = parsed.sender
    if sender is None:
        primary = await services.identities.primary(user_id, account.id)
        if primary is None:
            raise invalid_properties("Give the From address: this account has no identity.", "from")
        sender = Address(primary.name, primary.email)
    content = DraftContent(
        identity_id=0, to=parsed.to, cc=parsed.cc, bcc=parsed.bcc, subject=parsed.subject,
        text_body=parsed.text, html_body=parsed.html, attachments=tuple(attachments),
        in_reply_to=parsed.in_reply_to, references=parsed.references, reply_to=parsed.reply_to,
        extra_headers=parsed.headers)
    saved = await services.drafts.write(
        user_id, account.id, sender, content, keywords=parsed.keywords, label_ids=tuple(sorted(set(labels.values()))),
        message_id=parsed.message_id, sent_at=parsed.sent_at, local_account=account.provider_kind is ProviderKind.LOCAL)
    return {"id": str(saved.message_id), "blobId": f"m-{saved.message_id}",
            "threadId": str(saved.thread_id) if saved.thread_id is not None else None, "size": saved.size}


@table.method("Email/import", MAIL)
async def import_(call: Call) -> dict[str, Any]:
    args = call.args("accountId", "ifInState", "emails")
    account = call.account(args)
    emails = args.objects("emails")
    if emails is None:
        raise MethodError("invalidArguments", "'emails' is required.")
    if len(emails) > LIMITS.max_objects_in_set:
        raise MethodError("requestTooLarge", f"At most {LIMITS.max_objects_in_set} emails per import.")
    await ensure_bound(call, account.id)
    old_state = await check_state(call, args, account.id, EMAIL)
    services, user_id = call.ctx.services, call.ctx.principal.user_id
    created: dict[str, Any] = {}
    not_created: dict[str, Any] = {}
    for creation_id, values in emails.items():
        try:
            unknown = sorted(set(values) - {"blobId", "mailboxIds", "keywords", "receivedAt"})
            if unknown:
                raise invalid_properties("These properties cannot be imported.", *unknown)
            blob_id = values.get("blobId")
            raw = await services.downloads.uploaded(user_id, account.id, blob_id) if isinstance(blob_id, str) else None
            if raw is None:
                raise invalid_properties("No such blob in this account.", "blobId")
            mailbox_ids = values.get("mailboxIds")
            if not isinstance(mailbox_ids, dict) or not mailbox_ids or not all(v is True for v in
                                                                              mailbox_ids.values()):
                raise invalid_properties("An imported email needs at least one mailbox.", "mailboxIds")
            keys = _mailbox_keys(call, mailbox_ids)
            resolved = await _labels(call, account.id, keys)
            if len(resolved) != len(keys):
                raise invalid_properties("No such mailbox.", "mailboxIds")
            keywords = values.get("keywords") or {}
            if not isinstance(keywords, dict) or not all(v is True for v in keywords.values()):
                raise invalid_properties("'keywords' maps keywords to true.", "keywords")
            received = _instant(values.get("receivedAt"))
            imported = await services.email_writer.import_email(
                account.id, account.provider_kind, raw, sorted(set(resolved.values())),
                {str(k).lower() for k in keywords}, received)
            call.ctx.created_ids[creation_id] = str(imported.id)
            created[creation_id] = {"id": str(imported.id), "blobId": f"m-{imported.id}",
                                    "threadId": str(imported.thread_id) if imported.thread_id else None,
                                    "size": imported.size}
        except (SetError, PlmailError) as exc:
            not_created[creation_id] = refusal(exc)
    call.ctx.states.invalidate()
    new_state = await call.ctx.states.state(account.id, EMAIL)
    return {"accountId": str(account.id), "oldState": old_state, "newState": new_state,
            "created": created or None, "notCreated": not_created or None}


def _instant(value: Any) -> datetime | None:
    if value is None:
        return None
    if isinstance(value, str):
        try:
            moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            moment = None
        if moment is not None and moment.tzinfo is not None:
            return moment
    raise invalid_properties("'receivedAt' is a UTC date such as 2026-03-01T09:00:00Z.", "receivedAt")
