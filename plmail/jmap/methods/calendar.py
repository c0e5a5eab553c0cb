"""Calendar/get, Calendar/changes, CalendarEvent/get, /query, /changes and /set (JMAP for Calendars, with
JSCalendar events, RFC 8984), on the user's primary account: a person has one diary, not one per mailbox.

CalendarEvent/set answers invitations: `participants/<id>/participationStatus` for the user's own participant
records the answer and, with sendSchedulingMessages, sends the organiser an iTIP REPLY (calendar/rsvp.py);
every other change is refused, as the calendars are read-only here.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from plmail.calendar.calendar_objects import CALENDAR, CALENDAR_EVENT, ParticipationReply, calendar_object, event_object
from plmail.domain.errors import PlmailError
from plmail.jmap.args import Args
from plmail.jmap.capabilities import CALENDARS, LIMITS
from plmail.jmap.common import (
    CHANGES_ARGUMENTS,
    GET_ARGUMENTS,
    SET_ARGUMENTS,
    get_ids,
    max_changes,
    page_of,
    properties,
    set_request,
    set_response,
    split_ids,
)
from plmail.jmap.errors import MethodError, SetError, invalid_arguments, refusal
from plmail.jmap.registry import Call, MethodTable

table = MethodTable()
CALENDAR_PROPERTIES = ("id", "name", "description", "color", "sortOrder", "isSubscribed", "isVisible", "isDefault",
                       "includeInAvailability", "timeZone", "shareWith", "myRights")
EVENT_PROPERTIES = ("id", "@type", "calendarIds", "isDraft", "uid", "sequence", "title", "description", "status",
                    "freeBusyStatus", "privacy", "created", "updated", "utcStart", "utcEnd", "showWithoutTime",
                    "start", "timeZone", "duration", "locations", "recurrenceRules", "recurrenceOverrides",
                    "participants")
QUERY_ARGUMENTS = ("accountId", "filter", "sort", "position", "anchor", "anchorOffset", "limit", "calculateTotal",
                   "expandRecurrences", "timeZone")
_READ_ONLY = "Calendars are read-only over JMAP for now; change events in the web app."


def _calendar_account(call: Call, args: Args) -> str:
    """The JMAP id of the primary account (the user's unified one), the only one with the calendars capability."""
    scope = call.scope(args)
    if not scope.unified:
        raise MethodError("accountNotSupportedByMethod", "Calendars live in your primary account.")
    return call.jmap_id(scope)


@table.method("Calendar/get", CALENDARS)
async def calendar_get(call: Call) -> dict[str, Any]:
    args = call.args(*GET_ARGUMENTS)
    account = _calendar_account(call, args)
    props = properties(args, CALENDAR_PROPERTIES, CALENDAR_PROPERTIES)
    objects = call.ctx.services.calendar.objects
    user_id = call.ctx.principal.user_id
    state = await objects.state(user_id, CALENDAR)
    calendars = {str(c.id): calendar_object(c) for c in await objects.calendars_of(user_id)}
    ids = get_ids(args)
    wanted = ids if ids is not None else list(calendars)
    return {"accountId": account, "state": state,
            "list": [{p: calendars[i][p] for p in props} for i in wanted if i in calendars],
            "notFound": [i for i in wanted if i not in calendars]}


async def _changes(call: Call, kind: str) -> dict[str, Any]:
    args = call.args(*CHANGES_ARGUMENTS)
    account = _calendar_account(call, args)
    since = args.raw("sinceState")
    if since is None:
        raise invalid_arguments("'sinceState' is required.")
    found = await call.ctx.services.calendar.objects.changes_since(call.ctx.principal.user_id, kind, since,
                                                                   max_changes(args))
    return {"accountId": account, "oldState": found.old_state, "newState": found.new_state,
            "hasMoreChanges": found.has_more_changes, "created": found.created, "updated": found.updated,
            "destroyed": found.destroyed}


@table.method("Calendar/changes", CALENDARS)
async def calendar_changes(call: Call) -> dict[str, Any]:
    return {**await _changes(call, CALENDAR), "updatedProperties": None}


@table.method("CalendarEvent/get", CALENDARS)
async def event_get(call: Call) -> dict[str, Any]:
    args = call.args(*GET_ARGUMENTS)
    account = _calendar_account(call, args)
    props = properties(args, EVENT_PROPERTIES, EVENT_PROPERTIES)
    objects = call.ctx.services.calendar.objects
    user_id = call.ctx.principal.user_id
    state = await objects.state(user_id, CALENDAR_EVENT)
    ids = get_ids(args)
    zone_name = await _user_zone(call)
    if ids is None:
        events = await objects.events_of(user_id, None, limit=LIMITS.max_objects_in_get + 1)
        if len(events) > LIMITS.max_objects_in_get:
            raise MethodError("requestTooLarge", "Too many events to return them all; ask for ids.")
        ids = [str(e.id) for e in events]
    else:
        numeric, _ = split_ids(ids)
        events = await objects.events_of(user_id, numeric, limit=len(numeric))
    found = {str(e.id): event_object(e, user_zone=zone_name) for e in events}
    return {"accountId": account, "state": state,
            "list": [{p: found[i][p] for p in props if p in found[i]} for i in ids if i in found],
            "notFound": [i for i in ids if i not in found]}


async def _user_zone(call: Call) -> str:
    """The owner's zone: floating and all-day events are read on their wall clock."""
    return (await call.ctx.services.users.by_id(call.ctx.principal.user_id)).time_zone


def _utc(value: object, name: str) -> datetime | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise MethodError("invalidArguments", f"'{name}' must be a UTCDateTime.")
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise MethodError("invalidArguments", f"'{name}' must be a UTCDateTime.") from None
    if moment.tzinfo is None:
        raise MethodError("invalidArguments", f"'{name}' must be a UTCDateTime (with Z).")
    return moment.astimezone(UTC)


@table.method("CalendarEvent/query", CALENDARS)
async def event_query(call: Call) -> dict[str, Any]:
    """Filter by ``after``/``before`` (an event, or any of its occurrences, overlapping the range) and
    ``inCalendars``; sorted by start. Instances are not expanded into ids of their own."""
    args = call.args(*QUERY_ARGUMENTS)
    account = _calendar_account(call, args)
    if args.boolean("expandRecurrences"):
        raise MethodError("unsupportedFilter", "Expanding recurrences into instances is not supported.")
    condition = args.raw("filter") or {}
    if not isinstance(condition, dict):
        raise MethodError("unsupportedFilter", "Only a FilterCondition is supported.")
    unknown = set(condition) - {"after", "before", "inCalendars"}
    if unknown:
        raise MethodError("unsupportedFilter", f"Events cannot be filtered by {', '.join(sorted(unknown))}.")
    calendars = condition.get("inCalendars")
    if calendars is not None and (not isinstance(calendars, list) or not all(isinstance(c, str) for c in calendars)):
        raise MethodError("invalidArguments", "'inCalendars' must be a list of ids.")
    numeric = split_ids(calendars)[0] if calendars is not None else None
    sort = args.raw("sort")
    if sort not in (None, []) and sort != [{"property": "start"}] and sort != [{"property": "start",
                                                                                 "isAscending": True}]:
        raise MethodError("unsupportedSort", "Events are sorted by their start.")
    user_id = call.ctx.principal.user_id
    objects = call.ctx.services.calendar.objects
    found = await objects.query(user_id, after=_utc(condition.get("after"), "after"),
                                before=_utc(condition.get("before"), "before"), calendar_ids=numeric)
    page = page_of([str(i) for i in found], args)
    response: dict[str, Any] = {"accountId": account, "queryState": await objects.state(user_id,
                                                                                                  CALENDAR_EVENT),
                                "canCalculateChanges": False, "position": page.position, "ids": page.ids}
    if args.boolean("calculateTotal"):
        response["total"] = page.total
    if page.limit is not None:
        response["limit"] = page.limit
    return response


@table.method("CalendarEvent/changes", CALENDARS)
async def event_changes(call: Call) -> dict[str, Any]:
    return await _changes(call, CALENDAR_EVENT)


def participation_replies(event_id: int, patch: dict[str, Any]) -> list[ParticipationReply] | None:
    """The participation changes an update asks for (``participants/<id>/participationStatus``), or None when
    the update touches anything else."""
    replies: list[ParticipationReply] = []
    for path, value in patch.items():
        parts = path.split("/")
        if len(parts) == 3 and parts[0] == "participants" and parts[2] == "participationStatus":
            replies.append(ParticipationReply(event_id, parts[1], value if isinstance(value, str) else None))
        elif len(parts) == 2 and parts[0] == "participants" and isinstance(value, dict) \
                and set(value) <= {"participationStatus", "@type"}:
            status = value.get("participationStatus")
            replies.append(ParticipationReply(event_id, parts[1], status if isinstance(status, str) else None))
        else:
            return None
    return replies or None


@table.method("CalendarEvent/set", CALENDARS)
async def event_set(call: Call) -> dict[str, Any]:
    args = call.args(*SET_ARGUMENTS, "sendSchedulingMessages")
    account = _calendar_account(call, args)
    user_id = call.ctx.principal.user_id
    objects = call.ctx.services.calendar.objects
    state = await objects.state(user_id, CALENDAR_EVENT)
    expected = args.string("ifInState")
    if expected is not None and expected != state:
        raise MethodError("stateMismatch", "The state has changed since you last read it.")
    request = set_request(args)
    updated: dict[str, Any] = {}
    not_updated: dict[str, Any] = {}
    for event_id, patch in request.update.items():
        numeric = split_ids([event_id])[0]
        replies = participation_replies(numeric[0], patch) if numeric else None
        if replies is None:
            not_updated[event_id] = SetError("forbidden", _READ_ONLY).as_json()
            continue
        try:
            for reply in replies:
                await call.ctx.services.rsvp.answer_participant(
                    user_id, reply.event_id, reply.participant_id, reply.participation_status,
                    send=args.boolean("sendSchedulingMessages"))
            updated[event_id] = None
        except PlmailError as error:
            not_updated[event_id] = refusal(error)
    read_only = SetError("forbidden", _READ_ONLY).as_json()
    return set_response(account, state, await objects.state(user_id, CALENDAR_EVENT), created={}, updated=updated,
                        destroyed=[], not_created={key: read_only for key in request.create},
                        not_updated=not_updated, not_destroyed={key: read_only for key in request.destroy})


__all__ = ["participation_replies", "table"]
