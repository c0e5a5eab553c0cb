"""EmailSubmission/get, /changes, /query, /queryChanges and /set (RFC 8621 §7): sending an email.

A submission without a release time goes at once; FUTURERELEASE's HOLDUNTIL / HOLDFOR on the envelope's
mailFrom (RFC 4865), or `sendAt` in the create, hold it up to 30 days, and `undoStatus: canceled` takes
it back while it waits. onSuccessUpdateEmail / onSuccessDestroyEmail run as an implicit Email/set whose
answer follows this one (§7.5). The usual "Drafts → Sent, no $draft" is shown at once, but the provider's
Drafts and Sent follow only when the message actually went: an undo or a failure brings it back to Drafts.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from plmail.domain.enums import JmapObjectType
from plmail.domain.errors import NotFoundError, PlmailError
from plmail.domain.ids import parse_id
from plmail.domain.mailstore import MailScope
from plmail.domain.outgoing import Envelope, Submission, SubmissionQuery, SubmissionState
from plmail.jmap.capabilities import LIMITS, SUBMISSION
from plmail.jmap.common import (
    GET_ARGUMENTS,
    SET_ARGUMENTS,
    changes_response,
    check_state,
    each_object,
    get_ids,
    page_of,
    properties,
    query_response,
    set_request,
    set_response,
    split_ids,
    utc_date,
)
from plmail.jmap.email_patch import parse_patch
from plmail.jmap.errors import MethodError, SetError, invalid_arguments, invalid_properties, refusal
from plmail.jmap.methods import email_set
from plmail.jmap.registry import Call, MethodTable
from plmail.mail.outbox import MAX_DELAYED_SEND
from plmail.mail.states import parse_state

table = MethodTable()
SUBMISSIONS = JmapObjectType.EMAIL_SUBMISSION
PROPERTIES = ("id", "identityId", "emailId", "threadId", "envelope", "sendAt", "undoStatus", "deliveryStatus",
              "dsnBlobIds", "mdnBlobIds")
_CREATABLE = frozenset({"identityId", "emailId", "envelope", "sendAt"})
_FILTERS = frozenset({"identityIds", "emailIds", "threadIds", "undoStatus", "before", "after"})
_SORTS = frozenset({"emailId", "threadId", "sentAt"})
# What the recipients' state is while the outbox has it, after the server took it, and when it failed.
_DELIVERED = {SubmissionState.PENDING: "queued", SubmissionState.SENDING: "queued", SubmissionState.SENT: "queued",
              SubmissionState.FAILED: "no", SubmissionState.CANCELED: "no", SubmissionState.UNCERTAIN: "unknown"}


def _utc(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def envelope_json(envelope: Envelope) -> dict[str, Any]:
    return {"mailFrom": {"email": envelope.mail_from, "parameters": None},
            "rcptTo": [{"email": r, "parameters": None} for r in envelope.rcpt_to]}


def submission_json(submission: Submission) -> dict[str, Any]:
    delivered = _DELIVERED[submission.state]
    status = {}
    for recipient in submission.envelope.rcpt_to:
        known = submission.delivery.get(recipient) or {}
        status[recipient] = {"smtpReply": known.get("smtpReply") or (submission.last_error if delivered == "no"
                                                                      else "") or "",
                             "delivered": known.get("delivered") or delivered, "displayed": "unknown"}
    return {
        "id": str(submission.id),
        "identityId": str(submission.identity_id) if submission.identity_id is not None else None,
        "emailId": str(submission.email_id or submission.message_id or ""),
        "threadId": str(submission.thread_id) if submission.thread_id is not None else None,
        "envelope": envelope_json(submission.envelope),
        "sendAt": _utc(submission.sent_at or submission.send_at),
        "undoStatus": submission.undo_status,
        "deliveryStatus": status,
        "dsnBlobIds": [],
        "mdnBlobIds": [],
    }


def _envelope(value: Any, now: datetime) -> tuple[Envelope | None, datetime | None]:
    """The envelope a client gave, and the release time its mailFrom's FUTURERELEASE parameters ask for."""
    if value is None:
        return None, None
    if not isinstance(value, dict) or not isinstance(value.get("mailFrom"), dict):
        raise invalid_properties("'envelope' has a mailFrom and a rcptTo.", "envelope")
    mail_from = value["mailFrom"]
    rcpt = value.get("rcptTo")
    if not isinstance(mail_from.get("email"), str) or not isinstance(rcpt, list) or not all(
            isinstance(r, dict) and isinstance(r.get("email"), str) for r in rcpt):
        raise invalid_properties("'envelope' has a mailFrom and a rcptTo of {email, parameters}.", "envelope")
    parameters = mail_from.get("parameters") or {}
    if not isinstance(parameters, dict):
        raise invalid_properties("'parameters' maps SMTP parameter names to values.", "envelope")
    release: datetime | None = None
    upper = {str(k).upper(): v for k, v in parameters.items()}
    if "HOLDUNTIL" in upper and "HOLDFOR" in upper:
        raise invalid_properties("Give HOLDUNTIL or HOLDFOR, not both.", "envelope")
    if "HOLDUNTIL" in upper:
        release = utc_date(upper["HOLDUNTIL"], "envelope")
    elif "HOLDFOR" in upper:
        try:
            seconds = int(str(upper["HOLDFOR"]))
        except ValueError:
            raise invalid_properties("HOLDFOR is a number of seconds.", "envelope") from None
        if seconds < 0:
            raise invalid_properties("HOLDFOR is a number of seconds.", "envelope")
        release = now + timedelta(seconds=seconds)
    return Envelope(mail_from["email"], tuple(r["email"] for r in rcpt)), release


@table.method("EmailSubmission/get", SUBMISSION)
async def get(call: Call) -> dict[str, Any]:
    args = call.args(*GET_ARGUMENTS)
    scope = call.scope(args)
    props = properties(args, PROPERTIES, PROPERTIES)
    ids = get_ids(args)
    state = await call.ctx.states.state(scope, SUBMISSIONS)
    outbox = call.ctx.services.outbox
    if ids is None:
        found = await outbox.for_accounts(scope.account_ids)
        ids = [str(s.id) for s in found]
    else:
        numeric, _ = split_ids(ids)
        found = await outbox.for_accounts(scope.account_ids, numeric)
    by_id = {str(s.id): submission_json(s) for s in found}
    return {"accountId": call.jmap_id(scope), "state": state,
            "list": [{p: by_id[i][p] for p in props} for i in ids if i in by_id],
            "notFound": [i for i in ids if i not in by_id]}


@table.method("EmailSubmission/changes", SUBMISSION)
async def changes(call: Call) -> dict[str, Any]:
    return await changes_response(call, SUBMISSIONS)


def _query(filter_: Any, sort: Any) -> SubmissionQuery:
    if filter_ is None:
        filter_ = {}
    if not isinstance(filter_, dict) or "operator" in filter_:
        raise MethodError("unsupportedFilter", "EmailSubmission/query takes one FilterCondition.")
    unknown = sorted(set(filter_) - _FILTERS)
    if unknown:
        raise MethodError("unsupportedFilter", f"Unknown filter properties: {', '.join(unknown)}.")

    def ids(name: str) -> tuple[int, ...] | None:
        value = filter_.get(name)
        if value is None:
            return None
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise invalid_arguments(f"'{name}' is a list of ids.")
        return tuple(n for n in (parse_id(v) for v in value) if n is not None)

    undo = filter_.get("undoStatus")
    if undo is not None and undo not in ("pending", "final", "canceled"):
        raise invalid_arguments("'undoStatus' is pending, final or canceled.")

    def moment(name: str) -> datetime | None:
        value = filter_.get(name)
        if value is None:
            return None
        try:
            return utc_date(value, name)
        except SetError:
            raise invalid_arguments(f"'{name}' is a date such as 2026-03-01T09:00:00Z.") from None

    order: list[tuple[str, bool]] = []
    for comparator in sort or []:
        if not isinstance(comparator, dict) or comparator.get("property") not in _SORTS:
            raise MethodError("unsupportedSort", "Sort by emailId, threadId or sentAt.")
        order.append((comparator["property"], comparator.get("isAscending", True) is not False))
    return SubmissionQuery(identity_ids=ids("identityIds"), email_ids=ids("emailIds"), thread_ids=ids("threadIds"),
                           undo_status=undo, before=moment("before"), after=moment("after"), sort=tuple(order))


@table.method("EmailSubmission/query", SUBMISSION)
async def query(call: Call) -> dict[str, Any]:
    args = call.args("accountId", "filter", "sort", "position", "anchor", "anchorOffset", "limit", "calculateTotal")
    scope = call.scope(args)
    wanted = _query(args.raw("filter"), args.raw("sort"))
    state = await call.ctx.states.state(scope, SUBMISSIONS)
    ids = [str(i) for i in await call.ctx.services.outbox.query(scope.account_ids, wanted)]
    return query_response(call.jmap_id(scope), state, page_of(ids, args), changes=True,
                          total=args.boolean("calculateTotal"))


@table.method("EmailSubmission/queryChanges", SUBMISSION)
async def query_changes(call: Call) -> dict[str, Any]:
    """Every submission changed since then is reported removed, and added again where it now matches: RFC 8620
    §5.6 allows this over-report, and it keeps the client's list right whatever changed."""
    args = call.args("accountId", "filter", "sort", "sinceQueryState", "maxChanges", "upToId", "calculateTotal")
    scope = call.scope(args)
    since = args.string("sinceQueryState", required=True)
    wanted = _query(args.raw("filter"), args.raw("sort"))
    assert since is not None
    try:
        parse_state(since)
        changed = await call.ctx.states.changes(scope, SUBMISSIONS, since, LIMITS.max_changes)
    except PlmailError:
        raise MethodError("cannotCalculateChanges",
                          "This query state cannot be brought up to date; query again.") from None
    if changed.has_more_changes:
        raise MethodError("cannotCalculateChanges", "Too much changed; query again.")
    touched = [*changed.created, *changed.updated, *changed.destroyed]
    max_changes = args.integer("maxChanges", minimum=1)
    if max_changes is not None and len(touched) > max_changes:
        raise MethodError("tooManyChanges", "More changes than maxChanges; query again.")
    ids = [str(i) for i in await call.ctx.services.outbox.query(scope.account_ids, wanted)]
    position = {i: n for n, i in enumerate(ids)}
    response: dict[str, Any] = {
        "accountId": call.jmap_id(scope), "oldQueryState": since, "newQueryState": changed.new_state,
        "removed": touched,
        "added": sorted(({"id": i, "index": position[i]} for i in touched if i in position),
                        key=lambda a: a["index"])}
    if args.boolean("calculateTotal"):
        response["total"] = len(ids)
    return response


@table.method("EmailSubmission/set", SUBMISSION)
async def set_(call: Call) -> dict[str, Any]:
    args = call.args(*SET_ARGUMENTS, "onSuccessUpdateEmail", "onSuccessDestroyEmail")
    scope = call.scope(args)
    request = set_request(args)
    old_state = await check_state(call, args, scope, SUBMISSIONS)
    outbox, user_id = call.ctx.services.outbox, call.ctx.principal.user_id
    now = datetime.now(UTC)
    created: dict[str, Any] = {}
    not_created: dict[str, Any] = {}
    succeeded: dict[str, Submission] = {}  # "#creationId" or id -> the submission, for onSuccess…
    for creation_id, values in request.create.items():
        try:
            submission = await _create(call, scope, values, now)
            call.ctx.created_ids[creation_id] = str(submission.id)
            succeeded["#" + creation_id] = submission
            shown = submission_json(submission)
            created[creation_id] = {k: shown[k] for k in ("id", "threadId", "sendAt", "undoStatus")} | (
                {"envelope": shown["envelope"]} if values.get("envelope") is None else {})
        except (SetError, PlmailError) as exc:
            not_created[creation_id] = refusal(exc)
    owned = {str(s.id): s for s in await outbox.for_accounts(
        scope.account_ids, split_ids([i for i in [*request.update, *request.destroy] if i.isdigit()])[0])}

    def found(raw: str) -> Submission:
        current = owned.get(call.ctx.creation_id(raw) or "")
        if current is None:
            raise SetError("notFound", f"No submission {raw!r} in this account.")
        return current

    async def update(raw: str) -> None:
        patch, current = request.update[raw], found(raw)
        if set(patch) - {"undoStatus"}:
            raise invalid_properties("Only undoStatus can be changed.", *sorted(set(patch) - {"undoStatus"}))
        if "undoStatus" in patch and patch["undoStatus"] != current.undo_status:
            if patch["undoStatus"] != "canceled":
                raise invalid_properties("undoStatus can only be set to canceled.", "undoStatus")
            current = await outbox.cancel(user_id, current.id)
        succeeded[raw] = current

    async def destroy(raw: str) -> None:
        await outbox.forget(user_id, found(raw).id)

    updated, not_updated = await each_object(request.update, update)
    destroyed, not_destroyed = await each_object(request.destroy, destroy)
    call.ctx.states.invalidate()
    new_state = await call.ctx.states.state(scope, SUBMISSIONS)
    response = set_response(call.jmap_id(scope), old_state, new_state, created=created, updated=updated,
                            destroyed=list(destroyed), not_created=not_created, not_updated=not_updated,
                            not_destroyed=not_destroyed)
    await _on_success(call, scope, args.raw("onSuccessUpdateEmail"), args.raw("onSuccessDestroyEmail"),
                      succeeded)
    return response


async def _create(call: Call, scope: MailScope, values: dict[str, Any], now: datetime) -> Submission:
    unknown = sorted(set(values) - _CREATABLE)
    if unknown:
        raise invalid_properties("These properties cannot be set.", *unknown)
    identity = values.get("identityId")
    email = values.get("emailId")
    if not isinstance(identity, str) or not isinstance(email, str):
        raise invalid_properties("'identityId' and 'emailId' are required.", "identityId", "emailId")
    identity_id = parse_id(call.ctx.creation_id(identity) or "")
    email_id = parse_id(call.ctx.creation_id(email) or "")
    if email_id is None:
        raise invalid_properties(f"No email {email!r}.", "emailId")
    if identity_id is None:
        raise SetError("forbiddenFrom", f"No identity {identity!r}: you cannot send from it.")
    envelope, release = _envelope(values.get("envelope"), now)
    if values.get("sendAt") is not None:
        if release is not None:
            raise invalid_properties("Give sendAt or HOLDUNTIL/HOLDFOR, not both.", "sendAt")
        release = utc_date(values["sendAt"], "sendAt")
    if release is not None and release > now + MAX_DELAYED_SEND:
        raise invalid_properties("A send can be held at most 30 days.", "sendAt")
    messages = await call.ctx.services.email_writer.messages(call.ctx.principal.user_id, scope, [email_id])
    if email_id not in messages:
        raise invalid_properties(f"No email {email!r} in this account.", "emailId")
    return await call.ctx.services.outbox.submit(call.ctx.principal.user_id, email_id, identity_id,
                                                 envelope=envelope, send_at=release, origin="jmap", now=now)


async def _on_success(call: Call, scope: MailScope, updates: Any, destroys: Any,
                      succeeded: dict[str, Submission]) -> None:
    """The implicit Email/set of RFC 8621 §7.5, for the submissions that were created or updated."""
    if updates is None and destroys is None:
        return
    if updates is not None and not isinstance(updates, dict):
        raise invalid_arguments("'onSuccessUpdateEmail' maps submission ids to Email patches.")
    if destroys is not None and not (isinstance(destroys, list) and all(isinstance(d, str) for d in destroys)):
        raise invalid_arguments("'onSuccessDestroyEmail' is a list of submission ids.")
    outbox, user_id = call.ctx.services.outbox, call.ctx.principal.user_id
    email_updates: dict[str, Any] = {}
    for key, patch in (updates or {}).items():
        submission = succeeded.get(key)
        if submission is None or not isinstance(patch, dict):
            continue
        if submission.undo_status != "canceled" and _files_as_sent(patch):
            await outbox.show_as_sent(user_id, submission.id)
        email_updates[str(submission.email_id or submission.message_id)] = patch
    forgotten: list[str] = []
    for key in destroys or []:
        submission = succeeded.get(key)
        if submission is None or submission.undo_status == "canceled":
            continue
        try:
            await outbox.forget_message(user_id, submission.id)
            forgotten.append(str(submission.email_id))
        except NotFoundError:
            continue
    inner = Call(call.ctx, "Email/set", {"accountId": call.jmap_id(scope), "update": email_updates or None})
    answer = await email_set.set_(inner)
    if forgotten:
        answer["destroyed"] = [*(answer.get("destroyed") or []), *forgotten]
        call.ctx.states.invalidate()
        answer["newState"] = await call.ctx.states.state(scope, JmapObjectType.EMAIL)
    call.implicit.append(("Email/set", answer))


def _files_as_sent(patch: dict[str, Any]) -> bool:
    """Whether a patch is the usual one after sending: it takes $draft off."""
    try:
        parsed = parse_patch(patch)
    except SetError:
        return False
    if parsed.keywords is not None and "$draft" not in parsed.keywords:
        return True
    return parsed.keyword_edits.get("$draft") is False
