"""Calendar/get, Calendar/changes, CalendarEvent/get, /query, /changes and /set (JMAP for Calendars, with
JSCalendar events, RFC 8984), on the user's primary account: a person has one diary, not one per mailbox.

CalendarEvent/set creates, updates (a PatchObject applied to the event as /get shows it) and destroys events
through the calendar's editor, so an event changed here is the person's (mail no longer rewrites it) and its
guests hear of it (iTIP REQUEST/CANCEL) when sendSchedulingMessages is true. A patch of nothing but
`participants/<id>/participationStatus` answers an invitation (calendar/rsvp.py). Calendar/set creates, renames,
recolours, orders, shows/hides and destroys calendars (onDestroyRemoveEvents); the default one stays.

Not kept, so refused with invalidProperties rather than dropped: excludedRecurrenceRules, more than one location
or calendar, alerts, links, virtualLocations, keywords and the other RFC 8984 properties the calendar does not
store; expanded recurrences in /query; shareWith; a floating event made over JMAP is kept in the user's zone.
"""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from plmail.calendar.calendar_objects import (
    CALENDAR,
    CALENDAR_EVENT,
    FORM_PROPERTIES,
    InvalidEventProperties,
    ParticipationReply,
    calendar_object,
    event_form,
    event_object,
    owner_address,
)
from plmail.calendar.editor import EventForm
from plmail.domain.errors import ForbiddenError, NotFoundError, PlmailError, TooLargeError, ValidationError
from plmail.jmap.args import Args
from plmail.jmap.capabilities import CALENDARS, LIMITS
from plmail.jmap.common import (
    CHANGES_ARGUMENTS,
    GET_ARGUMENTS,
    SET_ARGUMENTS,
    apply_patch,
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


MAX_EVENT_JSON = 100_000  # octets of one event as a client wrote it: a diary entry, not a file store


def _invalid(error: InvalidEventProperties) -> dict[str, Any]:
    return SetError("invalidProperties", str(error), properties=list(error.properties)).as_json()


def _refused(error: PlmailError) -> dict[str, Any]:
    """A SetError for one object; the editor's form fields are named as the JSCalendar properties they came from."""
    if isinstance(error, InvalidEventProperties):
        return _invalid(error)
    if type(error) is ValidationError:
        field = FORM_PROPERTIES.get(error.field or "", error.field)
        return SetError("invalidProperties", str(error), properties=[field] if field else []).as_json()
    return refusal(error)


class _EventWrites:
    """One CalendarEvent/set: each create, update and destroy through the calendar's editor, one at a time, so
    one refused object never costs the others."""

    def __init__(self, call: Call, user_zone: str, send: bool, calendar_ids: set[int]) -> None:
        self.call = call
        self.user_id = call.ctx.principal.user_id
        self.user_zone = user_zone
        self.send = send
        self.calendar_ids = calendar_ids
        self.editor = call.ctx.services.calendar.editor
        self.objects = call.ctx.services.calendar.objects

    def _sized(self, obj: dict[str, Any]) -> None:
        if len(json.dumps(obj)) > MAX_EVENT_JSON:
            raise TooLargeError("The event is too large.", max_size=MAX_EVENT_JSON)

    def _check_calendar(self, form: EventForm) -> None:
        if form.calendar_id is not None and form.calendar_id not in self.calendar_ids:
            raise ForbiddenError("That calendar is not one of yours.")

    async def _organiser(self, obj: dict[str, Any], form: EventForm) -> EventForm:
        """The identity the client's owner participant names, when it is one of the user's (they organise)."""
        owner = owner_address(obj)
        if owner is None or not form.guests:
            return form
        identities = await self.call.ctx.services.identities.for_user(self.user_id)
        chosen = next((i for i in identities if i.email.lower() == owner.lower()), None)
        if chosen is None:
            raise InvalidEventProperties("Guests are invited from one of your own addresses.", ["participants"])
        return replace(form, organiser_identity_id=chosen.id)

    async def create(self, obj: dict[str, Any]) -> dict[str, Any]:
        self._sized(obj)
        form = await self._organiser(obj, event_form(obj, user_zone=self.user_zone))
        self._check_calendar(form)
        saved = await self.editor.create_event(self.user_id, form, user_zone=self.user_zone, send=self.send)
        stored = await self.objects.events_of(self.user_id, [saved.event_id], limit=1)
        made = event_object(stored[0], user_zone=self.user_zone)
        # the server-set properties, and what the client left to the server (RFC 8620 §5.3)
        return {key: made[key] for key in ("id", "uid", "sequence", "created", "updated", "utcStart", "utcEnd")
                if key not in obj or key in ("id", "created", "updated", "utcStart", "utcEnd")}

    async def update(self, event_id: int, patch: dict[str, Any]) -> None:
        self._sized(patch)
        found = await self.objects.events_of(self.user_id, [event_id], limit=1)
        if not found:
            raise NotFoundError("No such event.")
        current = event_object(found[0], user_zone=self.user_zone)
        replies = participation_replies(event_id, patch)
        if replies is not None:  # an answer to an invitation: rsvp records only the user's own
            for reply in replies:
                await self.call.ctx.services.rsvp.answer_participant(
                    self.user_id, reply.event_id, reply.participant_id, reply.participation_status, send=self.send)
            return
        patched = apply_patch(current, patch)
        form = await self._organiser(patched, event_form(patched, user_zone=self.user_zone, current=current))
        self._check_calendar(form)
        await self.editor.update_event(self.user_id, event_id, form, user_zone=self.user_zone, send=self.send)

    async def destroy(self, event_id: int) -> None:
        await self.editor.delete(self.user_id, event_id, user_zone=self.user_zone, send=self.send)


@table.method("CalendarEvent/set", CALENDARS)
async def event_set(call: Call) -> dict[str, Any]:
    """Create, update and destroy events through the calendar's editor: an edited event becomes the person's
    (mail no longer rewrites it); with guests and sendSchedulingMessages, they are sent iTIP REQUESTs and
    CANCELs. A patch of one's own participationStatus alone answers an invitation (calendar/rsvp.py)."""
    args = call.args(*SET_ARGUMENTS, "sendSchedulingMessages")
    account = _calendar_account(call, args)
    user_id = call.ctx.principal.user_id
    objects = call.ctx.services.calendar.objects
    state = await objects.state(user_id, CALENDAR_EVENT)
    expected = args.string("ifInState")
    if expected is not None and expected != state:
        raise MethodError("stateMismatch", "The state has changed since you last read it.")
    request = set_request(args)
    calendars = {c.id for c in await objects.calendars_of(user_id)}
    writes = _EventWrites(call, await _user_zone(call), args.boolean("sendSchedulingMessages"), calendars)
    created: dict[str, Any] = {}
    not_created: dict[str, Any] = {}
    for key, obj in request.create.items():
        try:
            created[key] = await writes.create(obj)
            call.ctx.created_ids[key] = created[key]["id"]
        except SetError as error:
            not_created[key] = error.as_json()
        except PlmailError as error:
            not_created[key] = _refused(error)
    updated: dict[str, Any] = {}
    not_updated: dict[str, Any] = {}
    for event_id, patch in request.update.items():
        numeric = split_ids([event_id])[0]
        try:
            if not numeric:
                raise NotFoundError("No such event.")
            await writes.update(numeric[0], patch)
            updated[event_id] = None
        except SetError as error:
            not_updated[event_id] = error.as_json()
        except PlmailError as error:
            not_updated[event_id] = _refused(error)
    destroyed: list[str] = []
    not_destroyed: dict[str, Any] = {}
    for event_id in request.destroy:
        numeric = split_ids([event_id])[0]
        try:
            if not numeric:
                raise NotFoundError("No such event.")
            await writes.destroy(numeric[0])
            destroyed.append(event_id)
        except PlmailError as error:
            not_destroyed[event_id] = _refused(error)
    return set_response(account, state, await objects.state(user_id, CALENDAR_EVENT), created=created,
                        updated=updated, destroyed=destroyed, not_created=not_created, not_updated=not_updated,
                        not_destroyed=not_destroyed)


@table.method("Calendar/set", CALENDARS)
async def calendar_set(call: Call) -> dict[str, Any]:
    """Create, rename, recolour, order, show/hide and destroy the user's calendars. Destroying one with events
    needs onDestroyRemoveEvents (else calendarHasEvent); the default calendar, and an account's, stay."""
    args = call.args(*SET_ARGUMENTS, "onDestroyRemoveEvents", "onSuccessSetIsDefault")
    account = _calendar_account(call, args)
    if args.raw("onSuccessSetIsDefault") is not None:
        raise invalid_arguments("The default calendar cannot be changed.")
    user_id = call.ctx.principal.user_id
    objects = call.ctx.services.calendar.objects
    await objects.calendars_of(user_id)
    state = await objects.state(user_id, CALENDAR)
    expected = args.string("ifInState")
    if expected is not None and expected != state:
        raise MethodError("stateMismatch", "The state has changed since you last read it.")
    request = set_request(args)
    created: dict[str, Any] = {}
    not_created: dict[str, Any] = {}
    for key, obj in request.create.items():
        try:
            row = await objects.create_calendar(user_id, obj)
            made = calendar_object(row)
            created[key] = {name: made[name] for name in made if name not in obj}
            call.ctx.created_ids[key] = made["id"]
        except PlmailError as error:
            not_created[key] = _refused(error)
    updated: dict[str, Any] = {}
    not_updated: dict[str, Any] = {}
    for calendar_id, patch in request.update.items():
        numeric = split_ids([calendar_id])[0]
        try:
            if not numeric:
                raise NotFoundError("No such calendar.")
            await objects.change_calendar(user_id, numeric[0], patch)
            updated[calendar_id] = None
        except PlmailError as error:
            not_updated[calendar_id] = _refused(error)
    destroyed: list[str] = []
    not_destroyed: dict[str, Any] = {}
    user_zone = await _user_zone(call)
    for calendar_id in request.destroy:
        numeric = split_ids([calendar_id])[0]
        try:
            if not numeric:
                raise NotFoundError("No such calendar.")
            await objects.destroy_calendar(user_id, numeric[0], remove_events=args.boolean("onDestroyRemoveEvents"),
                                           user_zone=user_zone, send=True)
            destroyed.append(calendar_id)
        except PlmailError as error:
            not_destroyed[calendar_id] = _refused(error)
    return set_response(account, state, await objects.state(user_id, CALENDAR), created=created, updated=updated,
                        destroyed=destroyed, not_created=not_created, not_updated=not_updated,
                        not_destroyed=not_destroyed)


__all__ = ["participation_replies", "table"]
