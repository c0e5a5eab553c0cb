"""Email/parse (RFC 8621 §4.9), Blob/copy (RFC 8620 §6.3) and Email/copy (RFC 8621 §4.7): reading an attached
message as an Email, and taking blobs and emails from one of the user's accounts to another."""

from __future__ import annotations

from typing import Any

from plmail.domain.enums import JmapObjectType, ProviderKind
from plmail.domain.errors import InvalidMessageError, NotFoundError, PlmailError
from plmail.domain.ids import parse_id
from plmail.domain.mailstore import MailScope
from plmail.jmap.args import Args
from plmail.jmap.capabilities import CORE, LIMITS, MAIL
from plmail.jmap.common import check_state, ensure_bound
from plmail.jmap.email_mapper import email_json
from plmail.jmap.errors import MethodError, SetError, invalid_arguments, invalid_properties, refusal
from plmail.jmap.methods import email_set
from plmail.jmap.methods.email_get import email_spec
from plmail.jmap.registry import Call, MethodTable

table = MethodTable()
EMAIL = JmapObjectType.EMAIL
# RFC 8621 §4.9: what Email/parse answers by default, and what a parsed message never has.
PARSE_DEFAULT = ("messageId", "inReplyTo", "references", "sender", "from", "to", "cc", "bcc", "replyTo", "subject",
                 "sentAt", "hasAttachment", "preview", "bodyValues", "textBody", "htmlBody", "attachments")
_NOT_STORED = {"id": None, "threadId": None, "mailboxIds": None, "keywords": None, "receivedAt": None}
_PARSE_READ_ARGUMENTS = ("accountId", "properties", "bodyProperties", "fetchTextBodyValues", "fetchHTMLBodyValues",
                         "fetchAllBodyValues", "maxBodyValueBytes")


@table.method("Email/parse", MAIL)
async def parse(call: Call) -> dict[str, Any]:
    args = call.args("accountId", "blobIds", "properties", "bodyProperties", "fetchTextBodyValues",
                     "fetchHTMLBodyValues", "fetchAllBodyValues", "maxBodyValueBytes")
    scope = call.scope(args)
    blob_ids = args.strings("blobIds", required=True) or []
    if len(blob_ids) > LIMITS.max_objects_in_get:
        raise MethodError("requestTooLarge", f"At most {LIMITS.max_objects_in_get} blobs per call.")
    arguments = {k: v for k, v in call.arguments.items() if k != "blobIds"}
    if args.raw("properties") is None:
        arguments["properties"] = list(PARSE_DEFAULT)
    spec = email_spec(call, Args(arguments, _PARSE_READ_ARGUMENTS))
    parsed: dict[str, Any] = {}
    not_parsable: list[str] = []
    not_found: list[str] = []
    for blob_id in blob_ids:
        try:
            record = await call.ctx.services.emails.parse(call.ctx.principal.user_id, scope, blob_id, spec.read)
        except NotFoundError:
            not_found.append(blob_id)
            continue
        except InvalidMessageError:
            not_parsable.append(blob_id)
            continue
        shown = email_json(record, spec)
        for name, value in _NOT_STORED.items():
            if name in shown:
                shown[name] = value
        if "blobId" in shown:
            shown["blobId"] = blob_id
        parsed[blob_id] = shown
    return {"accountId": call.jmap_id(scope), "parsed": parsed or None, "notParsable": not_parsable or None,
            "notFound": not_found or None}


def _two_accounts(call: Call, args: Any) -> tuple[MailScope, MailScope]:
    source = call.scope(args, "fromAccountId")
    target = call.scope(args)
    if source == target:
        raise invalid_arguments("'fromAccountId' and 'accountId' name the same account.")
    return source, target


@table.method("Blob/copy", CORE)
async def blob_copy(call: Call) -> dict[str, Any]:
    args = call.args("fromAccountId", "accountId", "blobIds")
    source, target = _two_accounts(call, args)
    blob_ids = args.strings("blobIds", required=True) or []
    downloads, user_id = call.ctx.services.downloads, call.ctx.principal.user_id
    copied: dict[str, str] = {}
    not_copied: dict[str, Any] = {}
    for blob_id in blob_ids:
        try:
            blob = await downloads.download(user_id, source, blob_id)
        except NotFoundError:
            not_copied[blob_id] = SetError("notFound", "No such blob in the account it is copied from.").as_json()
            continue
        stored = await downloads.upload(user_id, target, blob.data, blob.content_type.split(";")[0].strip())
        copied[blob_id] = f"u-{stored.sha256}"
    return {"fromAccountId": call.jmap_id(source), "accountId": call.jmap_id(target), "copied": copied or None,
            "notCopied": not_copied or None}


@table.method("Email/copy", MAIL)
async def email_copy(call: Call) -> dict[str, Any]:
    """Copies go into a local archive account (where plmail keeps mail of its own); the unified account holds
    every account's mail already, so an email copied there exists (alreadyExists)."""
    args = call.args("fromAccountId", "ifFromInState", "accountId", "ifInState", "create",
                     "onSuccessDestroyOriginal", "destroyFromIfInState")
    source, target = _two_accounts(call, args)
    creates = args.objects("create") or {}
    if len(creates) > LIMITS.max_objects_in_set:
        raise MethodError("requestTooLarge", f"At most {LIMITS.max_objects_in_set} emails per call.")
    expected_from = args.string("ifFromInState")
    if expected_from is not None and expected_from != await call.ctx.states.state(source, EMAIL):
        raise MethodError("stateMismatch", "The state of the account copied from has changed.")
    await ensure_bound(call, target)
    old_state = await check_state(call, args, target, EMAIL)
    services, user_id = call.ctx.services, call.ctx.principal.user_id
    owned = await services.email_writer.messages(user_id, source, sorted(
        {n for n in (parse_id(v.get("id")) for v in creates.values()) if n is not None}))
    created: dict[str, Any] = {}
    not_created: dict[str, Any] = {}
    originals: list[str] = []
    for creation_id, values in creates.items():
        try:
            unknown = sorted(set(values) - {"id", "mailboxIds", "keywords", "receivedAt"})
            if unknown:
                raise invalid_properties("Only mailboxIds, keywords and receivedAt can be given on a copy.", *unknown)
            email_id = parse_id(values.get("id"))
            if email_id is None or email_id not in owned:
                raise SetError("notFound", f"No email {values.get('id')!r} in the account copied from.")
            if target.unified or email_id in await services.email_writer.messages(user_id, target, [email_id]):
                raise SetError("alreadyExists", "The email is in that account already.", existing_id=str(email_id))
            account = call.ctx.principal.account(str(target.account_id))  # a single account: unified returned above
            if account is None or account.provider_kind is not ProviderKind.LOCAL:
                raise SetError("forbidden", "Emails are copied into a local archive account; a provider account "
                                            "receives mail from its own server only.")
            mailbox_ids = values.get("mailboxIds")
            if not isinstance(mailbox_ids, dict) or not mailbox_ids or not all(v is True for v in mailbox_ids.values()):
                raise invalid_properties("A copy needs at least one mailbox.", "mailboxIds")
            keys = email_set._mailbox_keys(call, mailbox_ids)
            labels = await email_set._labels(call, target, keys)
            if len(labels) != len(keys):
                raise invalid_properties("No such mailbox.", "mailboxIds")
            keywords = values.get("keywords") or {}
            if not isinstance(keywords, dict) or not all(v is True for v in keywords.values()):
                raise invalid_properties("'keywords' maps keywords to true.", "keywords")
            raw, _ = await services.downloads.raw_message(source.account_ids, email_id)
            imported = await services.email_writer.import_email(
                account.id, account.provider_kind, raw, sorted(set(labels.values())),
                {str(k).lower() for k in keywords}, email_set._instant(values.get("receivedAt")))
            call.ctx.created_ids[creation_id] = str(imported.id)
            created[creation_id] = {"id": str(imported.id), "blobId": f"m-{imported.id}",
                                    "threadId": str(imported.thread_id) if imported.thread_id else None,
                                    "size": imported.size}
            originals.append(str(email_id))
        except (SetError, PlmailError) as exc:
            not_created[creation_id] = refusal(exc)
    call.ctx.states.invalidate()
    response = {"fromAccountId": call.jmap_id(source), "accountId": call.jmap_id(target), "oldState": old_state,
                "newState": await call.ctx.states.state(target, EMAIL), "created": created or None,
                "notCreated": not_created or None}
    if args.boolean("onSuccessDestroyOriginal") and originals:
        inner = Call(call.ctx, "Email/set", {"accountId": call.jmap_id(source), "destroy": originals,
                                             "ifInState": args.string("destroyFromIfInState")})
        try:
            call.implicit.append(("Email/set", await email_set.set_(inner)))
        except MethodError as exc:
            call.implicit.append(("error", exc.arguments()))
    return response
