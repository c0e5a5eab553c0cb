"""The calendar as CalDAV clients see it (RFC 4791): each calendar a collection of iCalendar objects named by
href, with ETags, a change log position for CTag and sync-collection (RFC 6578), range queries through the
materialised occurrences, and writes that go through the same writer and editor as the web's.

The seed's rules hold across the protocol: an event a phone changed is the person's (marked user-edited, so mail
no longer rewrites it); an untrusted (model) event is never pushed outward, so it is not in any collection, and a
proposal is not an event until it is accepted; extracted events carry ``X-PLMAIL-SOURCE`` and a URL back to the
message they came from. What a client writes about the source is not believed: a PUT never names one.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, date, datetime

from icalendar import Calendar, Event

from plmail.calendar.calendar_objects import CalendarObjects, calendar_color
from plmail.calendar.drafts import draft_from_claim
from plmail.calendar.editor import CalendarEditor, significant_change
from plmail.calendar.extraction import ExtractedEvent, ItipMethod, parse_ics
from plmail.calendar.ics_files import PRODID, STATUS, event_components
from plmail.calendar.occurrences import off_the_loop
from plmail.calendar.organiser import Method, address_of, organised_by
from plmail.calendar.repos.dav import CalendarDavRepository
from plmail.calendar.repos.events import CalendarEventRepository
from plmail.calendar.repos.links import EventSourceLinkRepository
from plmail.calendar.resolver import DEFAULT_NAME
from plmail.calendar.sources import EventSource, is_trusted_source
from plmail.calendar.writer import OVERRIDES, RULES, SHORTENED, CalendarEventWriter, event_values, stored_instant
from plmail.db.database import Database
from plmail.db.repos.users import UserRepository
from plmail.domain.calendar import EventValues, StoredEvent
from plmail.domain.dav import (
    DavChanges,
    DavCollection,
    DavEntry,
    DavObject,
    DavRefusalError,
    DavWrite,
    InvalidSyncTokenError,
    PreconditionFailedError,
)
from plmail.domain.errors import NotFoundError, ValidationError

CALDAV = "urn:ietf:params:xml:ns:caldav"
SOURCE_PROPERTY = "X-PLMAIL-SOURCE"
MAX_OBJECT_BYTES = 1024 * 1024  # one event with its overrides; a whole calendar goes through the import page
MAX_COLLECTION = 20_000
MAX_CALENDAR_NAME = 100
_COLOR = re.compile(r"^#[0-9A-Fa-f]{6}([0-9A-Fa-f]{2})?$")
_DEFAULT_HREF = re.compile(r"^(\d{1,18})\.ics$")
_HREF = re.compile(r"^[A-Za-z0-9@._~+=:,;!$&'()*-]{1,255}$")
# Only what mail brought is "extracted": its provenance and the message it came from are written out.
_EXTRACTED = frozenset({EventSource.ICS.value, EventSource.STRUCTURED_DATA.value})


def etag_of(event: StoredEvent) -> str:
    """Changes with every write: each one sets updated_at to its transaction's time."""
    return f'"{event.id}-{int(event.updated_at.timestamp() * 1_000_000)}"'


def visible(event: StoredEvent) -> bool:
    """The seed: an untrusted source's event is never pushed outward, and a phone's calendar is outward. An
    invitation the user declined is not on the calendar pages either (CalendarEventRepository.between)."""
    return is_trusted_source(event.values.source) and event.values.my_participation != "declined"


def valid_href(href: str) -> bool:
    return bool(_HREF.match(href)) and href not in (".", "..")


class CalendarDavStore:
    def __init__(
        self, db: Database, objects: CalendarObjects, events: CalendarEventRepository,
        links: EventSourceLinkRepository, dav: CalendarDavRepository, writer: CalendarEventWriter,
        editor: CalendarEditor, users: UserRepository,
    ) -> None:
        self.db = db
        self.objects = objects
        self.events = events
        self.links = links
        self.dav = dav
        self.writer = writer
        self.editor = editor
        self.users = users

    async def calendars(self, user_id: int) -> list[DavCollection]:
        rows = await self.objects.calendars_of(user_id)
        marks = await self.dav.watermarks(user_id, [row.id for row in rows])
        return [
            DavCollection(key=str(row.id), name=row.name or DEFAULT_NAME, sync_sequence=marks.get(row.id, 0),
                          color=calendar_color(row.color), order=order)
            for order, row in enumerate(rows)
        ]

    async def calendar(self, user_id: int, key: str) -> DavCollection | None:
        return next((c for c in await self.calendars(user_id) if c.key == key), None)

    async def describe(self, user_id: int, calendar_id: int, *, name: str | None, color: str | None) -> None:
        """A phone renamed or recoloured the calendar (PROPPATCH): the web shows the same name and colour."""
        if name is not None:
            name = name.strip()[:MAX_CALENDAR_NAME]
            if not name:
                raise ValidationError("A calendar needs a name.", field="displayname")
        if color is not None:
            if not _COLOR.match(color.strip()):
                raise ValidationError("A colour is #RRGGBB or #RRGGBBAA.", field="calendar-color")
            color = color.strip()[:7].lower()  # the alpha iOS appends is always opaque
        if not await self.objects.calendars.describe(user_id, calendar_id, name, color):
            raise NotFoundError("No such calendar.")

    async def listing(self, user_id: int, calendar_id: int) -> list[DavEntry]:
        events = [e for e in await self.events.in_calendar(user_id, calendar_id, limit=MAX_COLLECTION) if visible(e)]
        return await self._entries(user_id, calendar_id, events)

    async def query(self, user_id: int, calendar_id: int, start: datetime | None, end: datetime | None
                    ) -> list[DavEntry]:
        """Events with an instance overlapping [start, end) (RFC 4791 §9.9), read from the occurrences the
        writer materialised, so a recurring event matches by any of its instances."""
        if start is None and end is None:
            return await self.listing(user_id, calendar_id)
        ids = await self.events.overlapping(user_id, start, end, [calendar_id], limit=MAX_COLLECTION)
        found = await self.events.by_ids(user_id, ids)
        return await self._entries(user_id, calendar_id, [found[i] for i in ids if i in found and visible(found[i])])

    async def fetch(self, user_id: int, calendar_id: int, hrefs: Sequence[str], *, base_url: str
                    ) -> list[DavObject]:
        """The objects at these hrefs, in the order asked; an href that names nothing is left out."""
        events = await self._resolve(user_id, calendar_id, hrefs)
        zone_name = await self._zone(user_id)
        sources = await self.links.first_sources(user_id, [e.id for e in events.values()
                                                           if e.values.source in _EXTRACTED])
        bodies = await self.dav.bodies(user_id, [e.id for e in events.values()])
        found: list[DavObject] = []
        for href in hrefs:
            event = events.get(href)
            if event is None:
                continue
            sent = bodies.get(event.id)
            if sent is not None and sent[1] == event.updated_at:  # unchanged since the client sent these bytes
                found.append(DavObject(href, etag_of(event), sent[0]))
                continue
            thread = sources.get(event.id, (0, None))[1]
            url = f"{base_url.rstrip('/')}/thread/{thread}" if thread is not None else None
            found.append(DavObject(href, etag_of(event), render(event, user_zone=zone_name, url=url)))
        return found

    async def expanded(self, user_id: int, calendar_id: int, href: str, start: datetime, end: datetime
                       ) -> bytes | None:
        """The object with its recurrence expanded into the instances overlapping [start, end), in UTC
        (RFC 4791 §9.6.5: CALDAV:expand)."""
        event = (await self._resolve(user_id, calendar_id, [href])).get(href)
        if event is None:
            return None
        zone_name = await self._zone(user_id)
        if not _recurs(event.values):
            return render(event, user_zone=zone_name, url=None)
        calendar = _calendar()
        for row in await self.events.occurrences(user_id, event.id):
            if row.cancelled or not (row.starts_at < end and row.ends_at > start):
                continue
            instance = Event()
            instance.add("uid", event.uid)
            instance.add("dtstamp", event.updated_at.astimezone(UTC))
            instance.add("recurrence-id", _instant(event.values, row.recurrence_id))
            instance.add("dtstart", _instant(event.values, row.starts_at))
            instance.add("dtend", _instant(event.values, row.ends_at))
            instance.add("summary", row.title or event.values.title or "")
            if row.location or event.values.location:
                instance.add("location", row.location or event.values.location)
            instance.add("status", STATUS.get(event.values.status, "CONFIRMED"))
            calendar.add_component(instance)
        return bytes(calendar.to_ical())

    async def changes(self, user_id: int, calendar_id: int, since: int | None) -> DavChanges:
        """What changed after the token's position (RFC 6578 §3.8); without a token, everything there is."""
        current = (await self.dav.watermarks(user_id, [calendar_id])).get(calendar_id)
        if current is None:
            raise NotFoundError("No such calendar.")
        if since is None:
            return DavChanges(current, tuple(await self.listing(user_id, calendar_id)), ())
        if since < 0 or since > current:
            raise InvalidSyncTokenError("This sync token was not handed out by this calendar.")
        changed = await self.dav.changed_since(user_id, calendar_id, since, current)
        ids = [c.event_id for c in changed]
        found = await self.events.by_ids(user_id, ids)
        present = [found[i] for i in ids if i in found and found[i].calendar_id == calendar_id and visible(found[i])]
        entries = await self._entries(user_id, calendar_id, present)
        kept = {e.id for e in present}
        named = await self.dav.hrefs(user_id, [i for i in ids if i not in kept])
        removed = tuple(named[i][1] if i in named and named[i][0] == calendar_id else f"{i}.ics"
                        for i in ids if i not in kept)
        return DavChanges(current, tuple(entries), removed)

    async def put(self, user_id: int, calendar_id: int, href: str, data: bytes, *, if_match: str | None,
                  if_none_match: bool) -> DavWrite:
        """Creates or replaces the object at ``href``. ``if_none_match``: the client sent ``If-None-Match: *``
        and wants only to create. A replaced event a mail brought becomes the person's (user-edited)."""
        if not valid_href(href):
            raise DavRefusalError("Name the object with letters, digits and .-_@ only.",
                                  condition="valid-calendar-object-resource", namespace=CALDAV)
        if len(data) > MAX_OBJECT_BYTES:
            raise DavRefusalError("The calendar object is larger than 1 MB.", condition="max-resource-size",
                                  namespace=CALDAV)
        claim = await _one_event(data)
        zone_name = await self._zone(user_id)
        async with self.db.transaction():
            if await self.objects.calendars.owned(user_id, calendar_id) is None:
                raise NotFoundError("No such calendar.")
            existing = (await self._resolve(user_id, calendar_id, [href])).get(href)
            _check_preconditions(existing, if_match=if_match, if_none_match=if_none_match)
            same_uid = [e for e in await self.events.by_uid(user_id, claim.uid) if e.calendar_id == calendar_id]
            if any(existing is None or e.id != existing.id for e in same_uid):
                raise DavRefusalError("Another object in this calendar has this UID.", condition="no-uid-conflict",
                                      namespace=CALDAV)
            draft = replace(draft_from_claim(claim, EventSource.MANUAL, ()), confidence=100, my_participation=None)
            assert claim.start is not None  # _one_event refuses an event without one
            reference = stored_instant(claim.start, zone_name)
            if existing is None:
                created = await self.writer.create(calendar_id, user_id, draft, user_zone=zone_name,
                                                   reference=reference)
                if created is None:
                    raise DavRefusalError("Another object in this calendar has this UID.",
                                          condition="no-uid-conflict", namespace=CALDAV)
                event_id, was_created = created, True
            else:
                # The event keeps its source and what it allows (a file over a mail's event is still that
                # event); what the person changed makes it theirs.
                kept = EventSource._value2member_map_.get(existing.values.source)
                as_source = kept if isinstance(kept, EventSource) else EventSource.MANUAL
                fresh = replace(event_values(calendar_id, user_id, replace(draft, source=as_source), zone_name),
                                source=existing.values.source, my_participation=existing.values.my_participation)
                if not _same(fresh, existing.values):
                    await self.writer.store(existing.id, fresh, user_zone=zone_name, reference=reference)
                    await self.writer.mark_user_edited(user_id, existing.id)
                event_id, was_created = existing.id, False
            stored = await self.events.owned(user_id, event_id)
            if stored is None:
                raise NotFoundError("The event went away while it was written.")
            await self.dav.name(user_id, calendar_id, href, event_id, data, stored.updated_at)
            written, after = DavWrite(was_created, etag_of(stored)), stored
        await self._schedule(user_id, existing, after, zone_name)
        return written

    async def _schedule(self, user_id: int, before: StoredEvent | None, after: StoredEvent, zone_name: str) -> None:
        """An event the phone wrote with the user as ORGANIZER goes to its ATTENDEEs as a CalDAV scheduling server
        sends it (RFC 6638 §3.2): a REQUEST when made or changed in time, place or title, a CANCEL to a guest taken
        off. The phone keeps the SEQUENCE (RFC 5546 §2.1.4 is the organiser's, and the phone is the organiser's
        client), so it is sent as written. A refused send is the sender's to report; the event stays saved."""
        invitations = self.editor.invitations
        if invitations is None or not (after.values.attendees or (before and before.values.attendees)):
            return
        if not organised_by(after.values.organizer, await invitations.own_addresses(user_id)):
            return
        guests = [a for a in after.values.attendees if isinstance(a, dict) and address_of(a)
                  and address_of(a) != address_of(after.values.organizer)]
        earlier = {address_of(a): a for a in (before.values.attendees if before else []) if isinstance(a, dict)}
        invited = {address_of(a) for a in guests}
        removed = [a for key, a in earlier.items() if key and key not in invited
                   and key != address_of(after.values.organizer)]
        if removed:
            await invitations.send(user_id, after, Method.CANCEL, removed, kind="cancelled", user_zone=zone_name)
        if before is None or significant_change(before.values, after.values):
            await invitations.send(user_id, after, Method.REQUEST, guests, kind="new" if before is None else "changed",
                                   user_zone=zone_name)
        else:
            added = [a for a in guests if address_of(a) not in earlier]
            await invitations.send(user_id, after, Method.REQUEST, added, kind="new", user_zone=zone_name)

    async def delete(self, user_id: int, calendar_id: int, href: str, *, if_match: str | None) -> None:
        """Deleting is "not an event", as on the web: what mail brought does not come back with the next mail."""
        existing = (await self._resolve(user_id, calendar_id, [href])).get(href)
        if existing is None:
            raise NotFoundError("No such calendar object.")
        _check_preconditions(existing, if_match=if_match, if_none_match=False)
        await self.editor.delete(user_id, existing.id, user_zone=await self._zone(user_id))

    async def _entries(self, user_id: int, calendar_id: int, events: Sequence[StoredEvent]) -> list[DavEntry]:
        named = await self.dav.hrefs(user_id, [e.id for e in events])
        return [DavEntry(_href_of(e, named, calendar_id), etag_of(e)) for e in events]

    async def _resolve(self, user_id: int, calendar_id: int, hrefs: Sequence[str]) -> dict[str, StoredEvent]:
        """The visible events at these hrefs: a name a client gave, else ``<id>.ics`` for an event never named."""
        named = await self.dav.events_at(user_id, calendar_id, hrefs)
        guessed = {href: int(m.group(1)) for href in hrefs if href not in named and (m := _DEFAULT_HREF.match(href))}
        wanted = {**guessed, **named}
        found = await self.events.by_ids(user_id, list(wanted.values()))
        names = await self.dav.hrefs(user_id, [e.id for e in found.values()])
        resolved: dict[str, StoredEvent] = {}
        for href, event_id in wanted.items():
            event = found.get(event_id)
            if event is None or event.calendar_id != calendar_id or not visible(event):
                continue
            if _href_of(event, names, calendar_id) == href:
                resolved[href] = event
        return resolved

    async def _zone(self, user_id: int) -> str:
        user = await self.users.by_id(user_id)
        return user.time_zone if user is not None and user.time_zone else "UTC"


def render(event: StoredEvent, *, user_zone: str, url: str | None) -> bytes:
    """One calendar object resource: the event's VEVENT and its changed instances (RFC 4791 §4.1)."""
    calendar = _calendar()
    for component in event_components(event, user_zone=user_zone):
        component.add(SOURCE_PROPERTY.lower(), event.values.source)
        if url is not None:
            component.add("url", url)
        calendar.add_component(component)
    calendar.add_missing_timezones()
    return bytes(calendar.to_ical())


def _calendar() -> Calendar:
    calendar = Calendar()
    calendar.add("prodid", PRODID)
    calendar.add("version", "2.0")
    return calendar


def _href_of(event: StoredEvent, named: dict[int, tuple[int, str]], calendar_id: int) -> str:
    given = named.get(event.id)
    return given[1] if given is not None and given[0] == calendar_id else f"{event.id}.ics"


def _instant(values: EventValues, moment: datetime) -> datetime | date:
    return moment.astimezone(UTC).date() if values.is_all_day else moment.astimezone(UTC)


def _recurs(values: EventValues) -> bool:
    recurrence = values.recurrence
    return bool(recurrence.get(RULES) or recurrence.get(OVERRIDES)) if isinstance(recurrence, dict) else False


def _check_preconditions(existing: StoredEvent | None, *, if_match: str | None, if_none_match: bool) -> None:
    if if_none_match and existing is not None:
        raise PreconditionFailedError("An object with this name exists already.")
    if if_match is not None:
        tags = {tag.strip() for tag in if_match.split(",")}
        if existing is None or ("*" not in tags and etag_of(existing) not in tags):
            raise PreconditionFailedError("The object changed since the client read it.")


async def _one_event(data: bytes) -> ExtractedEvent:
    """The single event a calendar object resource holds (RFC 4791 §4.1: one UID, no METHOD)."""
    parsed = await off_the_loop(parse_ics, data)
    claims = [claim for claim in parsed.events if claim.method is not ItipMethod.REPLY]
    if not claims:
        upper = data.upper()
        if b"BEGIN:VTODO" in upper or b"BEGIN:VJOURNAL" in upper:
            raise DavRefusalError("This calendar holds events only.", condition="supported-calendar-component",
                                  namespace=CALDAV)
        raise DavRefusalError("This is not an iCalendar object with an event.", condition="valid-calendar-data",
                              namespace=CALDAV)
    if len({claim.uid for claim in claims}) > 1:
        raise DavRefusalError("One calendar object holds one event (one UID).",
                              condition="valid-calendar-object-resource", namespace=CALDAV)
    series = [claim for claim in claims if not claim.instance_only]
    if not series or series[0].start is None:
        raise DavRefusalError("The object needs the event itself, with its start.",
                              condition="valid-calendar-object-resource", namespace=CALDAV)
    return series[0]


def _same(fresh: EventValues, stored: EventValues) -> bool:
    keep = ("confidence", "dedup_key_version", "kind")
    recurrence = {key: value for key, value in stored.recurrence.items() if key != SHORTENED}
    return replace(fresh, **{name: getattr(stored, name) for name in keep}) == replace(stored, recurrence=recurrence)
