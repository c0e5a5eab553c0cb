"""The calendar as JMAP for Calendars sees it: calendars and JSCalendar events (RFC 8984), their states and
changes, a range query, the participation reply a client sends through CalendarEvent/set, and the way back: a
JSCalendar event a client wrote as the editor's EventForm (`event_form`), a Calendar as its columns.

The objects are rendered here, in the calendar's own vocabulary, so JMAP only translates the protocol.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Any

from plmail.calendar.editor import KEEP_CUSTOM, MAX_DESCRIPTION, NO_REPEAT, CalendarEditor, EventForm
from plmail.calendar.extraction import Participant
from plmail.calendar.extraction.claims import participants_object
from plmail.calendar.jscalendar import (
    JsonObject,
    format_duration,
    local_datetime,
    parse_duration,
    parse_local_datetime,
)
from plmail.calendar.recurrence import jscalendar_to_rrule, rrule_to_jscalendar
from plmail.calendar.repos.changes import CalendarChangeRepository
from plmail.calendar.repos.events import CalendarEventRepository
from plmail.calendar.repos.objects import CalendarRepository, CalendarRow
from plmail.calendar.resolver import DEFAULT_NAME
from plmail.calendar.timezones import zone
from plmail.calendar.writer import EXCLUDED, MAX_LOCATION, MAX_TITLE, OVERRIDES, RULES, frame_times
from plmail.db.repos.accounts import AccountRepository
from plmail.domain.calendar import EventStatus, StoredEvent
from plmail.domain.errors import ConflictError, ForbiddenError, NotFoundError, UnanswerableError, ValidationError
from plmail.domain.messages import Address
from plmail.mail.public import ChangeSet, collect_changes, parse_state

CALENDAR = "Calendar"
CALENDAR_EVENT = "CalendarEvent"
MAX_QUERY = 5_000
MAX_CALENDARS = 100
_CSS_COLOR = re.compile(r"#[0-9a-fA-F]{6}|#[0-9a-fA-F]{3}|[a-zA-Z]{3,15}")
_COLORS = {"blue": "#3465a4", "teal": "#2aa198", "green": "#4e9a06", "red": "#cc0000", "orange": "#f57900"}


def calendar_color(name: str) -> str:
    """A calendar's colour as #rrggbb: the named ones the pages use, or the value stored."""
    return _COLORS.get(name, name)


def utc_text(value: datetime) -> str:
    return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def calendar_object(row: CalendarRow) -> dict[str, Any]:
    """A Calendar: the user's own. The default one and an account's (where its mail's events go) stay."""
    removable = not row.is_default and row.account_id is None
    return {
        "id": str(row.id), "name": row.name or DEFAULT_NAME, "description": row.description,
        "color": calendar_color(row.color),
        "sortOrder": row.sort_order if row.sort_order is not None else (0 if row.is_default else 1),
        "isSubscribed": row.is_subscribed, "isVisible": row.is_visible, "isDefault": row.is_default,
        "includeInAvailability": "all", "timeZone": row.time_zone, "shareWith": None,
        "myRights": {"mayReadFreeBusy": True, "mayReadItems": True, "mayWriteAll": True, "mayWriteOwn": True,
                     "mayUpdatePrivate": True, "mayRSVP": True, "mayAdmin": False, "mayDelete": removable},
    }


def calendar_changes(obj: Mapping[str, Any], *, creating: bool) -> dict[str, object]:
    """The columns a Calendar object a client wrote sets (CalendarRepository.EDITABLE); raises
    InvalidEventProperties naming each property it cannot keep."""
    bad: list[str] = []
    changes: dict[str, object] = {}
    for key, value in obj.items():
        if key == "name" and isinstance(value, str) and value.strip() and len(value) <= 255:
            changes["name"] = value.strip()
        elif key == "description" and (value is None or (isinstance(value, str) and len(value) <= 10_000)):
            changes["description"] = value or None
        elif key == "color" and (value is None or (isinstance(value, str) and _CSS_COLOR.fullmatch(value))):
            # A palette colour is kept by its name, so the web shows it; any other CSS colour as written.
            names = {hex_value: name for name, hex_value in _COLORS.items()}
            changes["color"] = names.get(value.lower(), value.lower()) if value else "blue"
        elif key == "sortOrder" and isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 2**31:
            changes["sort_order"] = value
        elif key in ("isVisible", "isSubscribed") and isinstance(value, bool):
            changes["is_visible" if key == "isVisible" else "is_subscribed"] = value
        elif key == "timeZone" and (value is None or (isinstance(value, str) and zone(value) is not None)):
            changes["time_zone"] = value
        elif (key, value) in (("includeInAvailability", "all"), ("shareWith", None)):
            pass  # all events count as busy, and calendars are not shared
        else:
            bad.append(key)
    if creating and "name" not in changes:
        bad.append("name")
    if bad:
        raise InvalidEventProperties("These properties cannot be kept as they are: " + ", ".join(
            dict.fromkeys(bad)) + ".", list(dict.fromkeys(bad)))
    return changes


def _person(value: object) -> Participant | None:
    if not isinstance(value, dict):
        return None
    text = {key: value.get(key) if isinstance(value.get(key), str) else None
            for key in ("email", "name", "partstat", "role")}
    return Participant(text["email"], text["name"], text["partstat"], text["role"])


def event_object(event: StoredEvent, *, user_zone: str) -> dict[str, Any]:
    """A CalendarEvent: the stored event as a JSCalendar Event, with its JMAP id and calendar."""
    values = event.values
    start, _ = frame_times(values, user_zone)
    obj: dict[str, Any] = {
        "@type": "Event", "id": str(event.id), "calendarIds": {str(values.calendar_id): True}, "isDraft": False,
        "uid": values.uid, "sequence": values.sequence, "title": values.title or "",
        "description": values.description or "", "status": values.status, "freeBusyStatus": "busy",
        "privacy": "public", "created": utc_text(event.created_at), "updated": utc_text(event.updated_at),
        "utcStart": utc_text(values.starts_at), "utcEnd": utc_text(values.ends_at),
        "showWithoutTime": values.is_all_day,
    }
    if values.is_all_day or values.is_floating:
        obj["start"], obj["timeZone"] = local_datetime(start), None
    else:
        where = zone(values.time_zone) if values.time_zone else None
        obj["start"] = local_datetime(values.starts_at.astimezone(where or UTC))
        obj["timeZone"] = values.time_zone if where is not None else "Etc/UTC"
    obj["duration"] = format_duration(values.ends_at - values.starts_at)
    if values.location:
        obj["locations"] = {"1": {"@type": "Location", "name": values.location}}
    recurrence = values.recurrence if isinstance(values.recurrence, dict) else {}
    rules = recurrence.get(RULES)
    if isinstance(rules, list) and rules:
        obj["recurrenceRules"] = rules
    overrides = dict(recurrence.get(OVERRIDES) or {}) if isinstance(recurrence.get(OVERRIDES), dict) else {}
    for key in recurrence.get(EXCLUDED, []) or []:
        if isinstance(key, str):
            overrides[key] = {"excluded": True}
    if overrides:
        obj["recurrenceOverrides"] = overrides
    attendees = [p for p in map(_person, values.attendees) if p is not None]
    people = participants_object(_person(values.organizer), attendees)
    if people:
        obj["participants"] = people
    return obj


@dataclass(frozen=True, slots=True)
class ParticipationReply:
    """A change a client asks for under ``participants``: whose status, and the new one."""

    event_id: int
    participant_id: str
    participation_status: str | None


class CalendarObjects:
    def __init__(self, calendars: CalendarRepository, events: CalendarEventRepository,
                 changes: CalendarChangeRepository, accounts: AccountRepository, editor: CalendarEditor) -> None:
        self.calendars = calendars
        self.events = events
        self.changes = changes
        self.accounts = accounts
        self.editor = editor

    async def calendars_of(self, user_id: int) -> list[CalendarRow]:
        await self.calendars.ensure_default(user_id, DEFAULT_NAME)
        for account in await self.accounts.for_user(user_id):
            await self.calendars.ensure_for_account(user_id, account.id, account.name or account.email)
        return await self.calendars.for_user(user_id)

    async def create_calendar(self, user_id: int, obj: Mapping[str, Any]) -> CalendarRow:
        changes = calendar_changes(obj, creating=True)
        if len(await self.calendars.for_user(user_id)) >= MAX_CALENDARS:
            raise ConflictError(f"At most {MAX_CALENDARS} calendars.", reason="overQuota")
        return await self.calendars.create(user_id, str(changes.pop("name")), changes)

    async def change_calendar(self, user_id: int, calendar_id: int, patch: Mapping[str, Any]) -> CalendarRow:
        if await self.calendars.owned(user_id, calendar_id) is None:
            raise NotFoundError("No such calendar.")
        changed = await self.calendars.change(user_id, calendar_id, calendar_changes(patch, creating=False))
        if changed is None:
            raise NotFoundError("No such calendar.")
        return changed

    async def destroy_calendar(self, user_id: int, calendar_id: int, *, remove_events: bool, user_zone: str,
                               send: bool) -> None:
        """Without ``remove_events`` a calendar with events stays (calendarHasEvent, as the draft says); with it,
        each event goes as a deleted one does: guests told, and mail never brings it back."""
        calendar = await self.calendars.owned(user_id, calendar_id)
        if calendar is None:
            raise NotFoundError("No such calendar.")
        if calendar.is_default:
            raise ForbiddenError("The default calendar cannot be removed: new events go there.")
        if calendar.account_id is not None:
            raise ForbiddenError("An account's calendar goes with its account; events from its mail go there.")
        events = await self.calendars.event_ids(user_id, calendar_id)
        if events and not remove_events:
            raise ConflictError("The calendar still has events.", reason="calendarHasEvent")
        for event_id in events:
            await self.editor.delete(user_id, event_id, user_zone=user_zone, send=send)
        if not await self.calendars.delete(user_id, calendar_id):
            raise NotFoundError("No such calendar.")

    async def state(self, user_id: int, kind: str) -> str:
        return str(await self.changes.state(user_id, kind))

    async def events_of(self, user_id: int, ids: Sequence[int] | None, *, limit: int) -> list[StoredEvent]:
        if ids is None:
            return await self.events.for_user(user_id, limit=limit)
        found = await self.events.by_ids(user_id, ids)
        return [found[i] for i in ids if i in found]

    async def query(self, user_id: int, *, after: datetime | None, before: datetime | None,
                    calendar_ids: Sequence[int] | None) -> list[int]:
        """Events with an occurrence ending after ``after`` and starting before ``before``, first start first."""
        return await self.events.overlapping(user_id, after, before, calendar_ids, limit=MAX_QUERY)

    async def changes_since(self, user_id: int, kind: str, since_state: object, max_changes: int) -> ChangeSet:
        since = parse_state(since_state)
        current = await self.changes.state(user_id, kind)
        if since > current:
            raise UnanswerableError("This state is newer than the server's.", reason="cannotCalculateChanges")

        async def rows(after: int, upto: int, limit: int) -> list[tuple[int, str, str]]:
            return await self.changes.rows(user_id, kind, after, upto, limit)

        return await collect_changes(rows, since, current, max_changes)


# What a client may write (RFC 8984 and the JMAP Calendars draft). Server-set ones may be restated, never changed;
# any other property is accepted only empty, as a client's default (no alerts, no keywords): storing nothing of a
# non-empty one would lose what the person said.
WRITABLE = frozenset({"@type", "calendarIds", "uid", "title", "description", "start", "duration", "timeZone",
                      "showWithoutTime", "status", "locations", "participants", "recurrenceRules",
                      "recurrenceOverrides", "excludedRecurrenceRules", "sequence", "prodId", "replyTo", "isDraft",
                      "freeBusyStatus", "privacy"})
SERVER_SET = frozenset({"id", "created", "updated", "utcStart", "utcEnd"})
_DEFAULTS: dict[str, object] = {"isDraft": False, "freeBusyStatus": "busy", "privacy": "public"}
# The editor's form fields, as the JSCalendar properties a client wrote them in.
FORM_PROPERTIES = {"title": "title", "end": "duration", "start": "start", "calendar_id": "calendarIds",
                   "guests": "participants", "repeat": "recurrenceRules", "uid": "uid"}


class InvalidEventProperties(ValidationError):
    """A JSCalendar event (or a Calendar) the calendar cannot keep as it is; ``properties`` names each property
    at fault."""

    def __init__(self, message: str, properties: Sequence[str]) -> None:
        super().__init__(message, field=properties[0] if properties else None)
        self.properties = tuple(properties)


def _address(person: Mapping[str, object]) -> str | None:
    """A participant's address: its iMIP ``sendTo`` (a mailto: URI), else its ``email``."""
    send_to = person.get("sendTo")
    imip = send_to.get("imip") if isinstance(send_to, dict) else None
    if isinstance(imip, str) and imip.lower().startswith("mailto:"):
        return imip[7:].strip() or None
    email = person.get("email")
    return email.strip() if isinstance(email, str) and email.strip() else None


def _guests(participants: object, bad: list[str]) -> tuple[Address, ...]:
    """The attendees a client lists, never the owner (who organises)."""
    if participants is None:
        return ()
    if not isinstance(participants, dict):
        bad.append("participants")
        return ()
    guests: list[Address] = []
    for key, person in participants.items():
        roles = person.get("roles") if isinstance(person, dict) else None
        address = _address(person) if isinstance(person, dict) else None
        if not isinstance(person, dict) or not isinstance(roles, dict) or address is None or "@" not in address:
            bad.append(f"participants/{key}")
            continue
        name = person.get("name")
        if roles.get("attendee") and not roles.get("owner"):
            guests.append(Address(name if isinstance(name, str) else "", address))
    return tuple(guests)


def _recurrence(obj: Mapping[str, object], start: datetime | date, time_zone: str | None, all_day: bool,
                bad: list[str]) -> JsonObject:
    """recurrenceRules, recurrenceOverrides (an ``excluded`` one becomes an exclusion), as the writer keeps them.
    Each rule goes through the RRULE converter, so only a rule the expansion can follow is stored."""
    recurrence: JsonObject = {}
    rules = obj.get("recurrenceRules")
    if rules is not None:
        kept: list[JsonObject] = []
        for rule in rules if isinstance(rules, list) else [None]:
            text = jscalendar_to_rrule(rule, time_zone=time_zone, all_day=all_day,
                                       floating=False) if isinstance(rule, dict) else None
            converted = rrule_to_jscalendar(text, start=start, time_zone=time_zone) if text else None
            if converted is None:
                bad.append("recurrenceRules")
                break
            kept.append(converted)
        if kept:
            recurrence[RULES] = list(kept)
    if obj.get("excludedRecurrenceRules"):
        bad.append("excludedRecurrenceRules")  # not kept by the calendar: refused, not dropped
    overrides = obj.get("recurrenceOverrides")
    if overrides is not None:
        if not isinstance(overrides, dict):
            bad.append("recurrenceOverrides")
            return recurrence
        changed: JsonObject = {}
        excluded: list[JsonObject | str] = []
        for key, patch in overrides.items():
            if parse_local_datetime(key) is None or not isinstance(patch, dict):
                bad.append(f"recurrenceOverrides/{key}")
            elif patch.get("excluded") is True:
                excluded.append(key)
            else:
                changed[key] = dict(patch)
        if changed:
            recurrence[OVERRIDES] = changed
        if excluded:
            recurrence[EXCLUDED] = list(excluded)
    return recurrence


def event_form(obj: Mapping[str, Any], *, user_zone: str, current: Mapping[str, Any] | None = None) -> EventForm:
    """The editor's form for a JSCalendar Event a client wrote (a whole one, or ``current`` with its patch applied).

    ``participants`` become guests only when the client changed them (the people of an invitation someone else
    sent are theirs). Raises InvalidEventProperties naming every property that cannot be kept."""
    bad: list[str] = []
    for key, value in obj.items():
        if key in SERVER_SET:
            if current is None or current.get(key) != value:
                bad.append(key)
        elif key in _DEFAULTS:
            if value not in (None, _DEFAULTS[key]):
                bad.append(key)
        elif key not in WRITABLE and value not in (None, False, "", [], {}):
            bad.append(key)
    if obj.get("@type", "Event") != "Event":
        bad.append("@type")
    if current is not None and obj.get("uid") != current.get("uid"):
        bad.append("uid")
    uid = obj.get("uid")
    if uid is not None and (not isinstance(uid, str) or not uid.strip() or len(uid) > 255):
        bad.append("uid")
    all_day = obj.get("showWithoutTime", False)
    if not isinstance(all_day, bool):
        bad.append("showWithoutTime")
        all_day = False
    wall = parse_local_datetime(obj.get("start"))
    if wall is None:
        bad.append("start")
    length = parse_duration(obj.get("duration", "P1D" if all_day else "PT0S"))
    if length is None or (all_day and length % timedelta(days=1)):
        bad.append("duration")
    time_zone = obj.get("timeZone")
    where = zone(time_zone) if isinstance(time_zone, str) else None
    if time_zone is not None and where is None:
        bad.append("timeZone")
    if all_day and wall is not None and wall.time() != datetime.min.time():
        bad.append("start")
    if wall is not None and not 1900 <= wall.year < 2200:
        bad.append("start")  # the account's minDateTime and maxDateTime
    status = obj.get("status", EventStatus.CONFIRMED.value)
    if status not in {s.value for s in EventStatus}:
        bad.append("status")
    for key, longest in (("title", MAX_TITLE), ("description", MAX_DESCRIPTION)):
        if not isinstance(obj.get(key, ""), str) or len(obj.get(key) or "") > longest:
            bad.append(key)  # the editor would cut it short: refused instead, so nothing is lost
    calendar_ids = obj.get("calendarIds")
    calendar_id: int | None = None
    if calendar_ids is not None:
        chosen = [k for k, v in calendar_ids.items() if v is True] if isinstance(calendar_ids, dict) else []
        if len(chosen) != 1 or not chosen[0].isdigit() or len(chosen[0]) > 18:
            bad.append("calendarIds")  # maxCalendarsPerEvent is 1
        else:
            calendar_id = int(chosen[0])
    locations = obj.get("locations")
    names = [v.get("name") for v in locations.values() if isinstance(v, dict)] if isinstance(locations, dict) else []
    if locations is not None and (not isinstance(locations, dict) or len(locations) > 1
                                  or not all(isinstance(n, str) and len(n) <= MAX_LOCATION for n in names)):
        bad.append("locations")  # one place per event, as the calendar keeps it
    changed_people = current is None or obj.get("participants") != current.get("participants")
    guests = _guests(obj.get("participants"), bad) if changed_people else ()
    start: datetime | date = datetime.min
    end: datetime | date = datetime.min
    recurrence: JsonObject = {}
    if wall is not None and length is not None:
        if all_day:
            start, end = wall.date(), wall.date() + length
        else:
            start = wall.replace(tzinfo=where or zone(user_zone) or UTC)
            end = start + length
        recurrence = _recurrence(obj, start, None if all_day else (time_zone if where else user_zone), all_day, bad)
    if bad:
        raise InvalidEventProperties("These properties cannot be kept as they are: " + ", ".join(
            dict.fromkeys(bad)) + ".", list(dict.fromkeys(bad)))
    title, description = obj.get("title") or "", obj.get("description") or ""
    guests_now: tuple[Address, ...] | None = None  # unchanged: the people stay as they are
    if changed_people and (obj.get("participants") is not None or current is not None):
        guests_now = guests
    same_recurrence = current is not None and all(
        obj.get(key) == current.get(key) for key in ("recurrenceRules", "recurrenceOverrides"))
    same_status = current is not None and status == current.get("status")
    return EventForm(
        title=title, start=start, end=end, all_day=all_day, calendar_id=calendar_id,
        location=str(names[0]) if names else "", description=description, guests=guests_now,
        # An unchanged recurrence is kept (and moved with the start) by the editor, with any rule it keeps verbatim.
        repeat=KEEP_CUSTOM if same_recurrence else NO_REPEAT, recurrence=None if same_recurrence else recurrence,
        time_zone=(time_zone if where else None) if not all_day else None,
        status=None if same_status else EventStatus(status),
        uid=uid if current is None and isinstance(uid, str) else None,
    )


def owner_address(obj: Mapping[str, Any]) -> str | None:
    """The address of the participant a client made the owner (who organises), or None."""
    participants = obj.get("participants")
    for person in participants.values() if isinstance(participants, dict) else []:
        roles = person.get("roles") if isinstance(person, dict) else None
        if isinstance(roles, dict) and roles.get("owner"):
            return _address(person)
    return None
