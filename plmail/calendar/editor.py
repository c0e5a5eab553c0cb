"""Events a person makes and changes: create, edit the series or one occurrence, delete either.

Everything goes through the writer, like every other event. Editing an event mail put there marks it
user-edited (reconciler rule 5): a later mail may know more about the booking, not more than the person.
Deleting a whole event is "not an event" for anything mail brought, so no backfill brings it back.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime
from enum import StrEnum
from typing import Any

from plmail.calendar.jscalendar import JsonObject, format_duration, local_datetime
from plmail.calendar.organiser import (
    GuestInvitations,
    Method,
    SentInvitation,
    address_of,
    check_guests,
    guest,
    organised_by,
)
from plmail.calendar.recurrence import jscalendar_to_rrule, rrule_to_jscalendar
from plmail.calendar.repos.events import CalendarEventRepository
from plmail.calendar.repos.objects import CalendarRepository
from plmail.calendar.sources import EventSource
from plmail.calendar.suppression import EventSuppressor
from plmail.calendar.timezones import zone
from plmail.calendar.writer import (
    EXCLUDED,
    MAX_LOCATION,
    MAX_TITLE,
    OVERRIDES,
    RULES,
    CalendarEventWriter,
    EventDraft,
    frame_times,
    shift_recurrence,
    stored_instant,
)
from plmail.db.database import Database
from plmail.domain.calendar import EventStatus, EventValues, StoredEvent
from plmail.domain.errors import NotFoundError, ValidationError
from plmail.domain.messages import Address

MAX_DESCRIPTION = 10_000
KEEP_CUSTOM = "custom"
NO_REPEAT = "none"
# The repeat choices the editor offers, as the RRULE each stands for; anything else is a custom rule.
REPEAT_PRESETS: dict[str, str | None] = {
    NO_REPEAT: None,
    "daily": "FREQ=DAILY",
    "weekdays": "FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR",
    "weekly": "FREQ=WEEKLY",
    "monthly": "FREQ=MONTHLY",
    "yearly": "FREQ=YEARLY",
}


class Scope(StrEnum):
    SERIES = "series"
    OCCURRENCE = "occurrence"


@dataclass(frozen=True, slots=True)
class EventForm:
    """What the editor sends: aware times in the person's zone, or dates (``end`` exclusive) when all-day."""

    title: str
    start: datetime | date
    end: datetime | date
    all_day: bool
    calendar_id: int | None = None
    repeat: str = NO_REPEAT  # a REPEAT_PRESETS key, or KEEP_CUSTOM for the rule the event has
    location: str = ""
    description: str = ""
    guests: tuple[Address, ...] | None = None  # None leaves the guests as they are (a drag on the grid)
    organiser_identity_id: int | None = None  # the identity that invites; None: the user's primary address
    # What a JSCalendar client (JMAP) says beyond the web form; None keeps the editor's own choice.
    time_zone: str | None = None  # the zone a timed event is kept in; None: the user's (or the event's own)
    recurrence: JsonObject | None = None  # recurrenceRules/recurrenceOverrides/excluded, in place of ``repeat``
    status: EventStatus | None = None
    uid: str | None = None  # a new event's UID as the client made it; None: one is made here


@dataclass(frozen=True, slots=True)
class Saved:
    """A saved event and the invitations its change sent (or could not send) to its guests."""

    event_id: int
    invitations: tuple[SentInvitation, ...] = ()

    @property
    def problems(self) -> tuple[str, ...]:
        return tuple(sent.problem for sent in self.invitations if sent.problem)


def _rule(preset: str, start: datetime | date, time_zone: str | None) -> JsonObject | None:
    text = REPEAT_PRESETS.get(preset)
    return rrule_to_jscalendar(text, start=start, time_zone=time_zone) if text else None


def repeat_of(values: EventValues) -> str:
    """The preset the event's recurrence is, ``custom`` for any other rule (or a refused one), else none."""
    rules = values.recurrence.get(RULES) if isinstance(values.recurrence, dict) else None
    if not rules:
        return KEEP_CUSTOM if values.raw_rrule else NO_REPEAT
    start, _ = frame_times(values, "UTC")
    for key in REPEAT_PRESETS:
        preset = _rule(key, start, values.time_zone)
        if preset is not None and rules == [preset]:
            return key
    return KEEP_CUSTOM


def custom_rule_text(values: EventValues) -> str | None:
    """The rule a "keep this custom rule" choice keeps, as RRULE text to show beside it."""
    rules = values.recurrence.get(RULES) if isinstance(values.recurrence, dict) else None
    if isinstance(rules, list) and rules and isinstance(rules[0], dict):
        return jscalendar_to_rrule(rules[0], time_zone=values.time_zone, all_day=values.is_all_day,
                                   floating=values.is_floating)
    return values.raw_rrule


def recurrence_key(values: EventValues, recurrence_id: datetime, user_zone: str) -> str:
    """The recurrenceOverrides key of an occurrence, from the instant its row stores (the writer's inverse)."""
    if values.is_all_day:
        return local_datetime(recurrence_id.astimezone(UTC).date())
    if values.is_floating:
        return local_datetime(recurrence_id.astimezone(zone(user_zone) or UTC))
    where = zone(values.time_zone) if values.time_zone else None
    return local_datetime(recurrence_id.astimezone(where or UTC))


def _clean(form: EventForm) -> EventForm:
    title = form.title.strip()[:MAX_TITLE]
    if not title:
        raise ValidationError("Give the event a title.", field="title")
    if isinstance(form.start, datetime) != isinstance(form.end, datetime) or isinstance(form.start, datetime) \
            == form.all_day:
        raise ValidationError("An all-day event takes dates, a timed event takes times.")
    if form.end <= form.start:
        raise ValidationError("The end must be after the start.", field="end")
    if form.repeat not in REPEAT_PRESETS and form.repeat != KEEP_CUSTOM:
        raise ValidationError("Choose how the event repeats.", field="repeat")
    return replace(form, title=title, location=form.location.strip()[:MAX_LOCATION],
                   description=form.description.strip()[:MAX_DESCRIPTION])


class CalendarEditor:
    def __init__(
        self, db: Database, calendars: CalendarRepository, events: CalendarEventRepository,
        writer: CalendarEventWriter, suppressor: EventSuppressor, invitations: GuestInvitations | None = None,
    ) -> None:
        self.db = db
        self.calendars = calendars
        self.events = events
        self.writer = writer
        self.suppressor = suppressor
        self.invitations = invitations

    async def _calendar(self, user_id: int, calendar_id: int | None, default: int | None = None) -> int:
        if calendar_id is None:
            if default is not None:
                return default
            return await self.calendars.ensure_default(user_id, "Calendar")
        owned = await self.calendars.owned(user_id, calendar_id)
        if owned is None:
            raise ValidationError("Choose one of your calendars.", field="calendar_id")
        return owned.id

    async def create(self, user_id: int, form: EventForm, *, user_zone: str) -> int:
        return (await self.create_event(user_id, form, user_zone=user_zone)).event_id

    async def create_event(self, user_id: int, form: EventForm, *, user_zone: str, send: bool = True) -> Saved:
        """Save a new event; with guests, the user organises it and each guest is sent a REQUEST (unless
        ``send`` is False: JMAP's sendSchedulingMessages)."""
        form = _clean(form)
        if form.repeat == KEEP_CUSTOM and form.recurrence is None:
            raise ValidationError("Choose how the event repeats.", field="repeat")
        calendar_id = await self._calendar(user_id, form.calendar_id)
        time_zone = None if form.all_day else form.time_zone or user_zone
        recurrence = form.recurrence if form.recurrence is not None else {}
        if form.recurrence is None:
            rule = _rule(form.repeat, form.start, time_zone)
            recurrence = {RULES: [rule]} if rule else {}
        organizer, attendees = await self._people(user_id, form, None, ())
        rules, overrides, excluded = (recurrence.get(key) for key in (RULES, OVERRIDES, EXCLUDED))
        draft = EventDraft(
            uid=form.uid or f"{uuid.uuid4()}@plmail", start=form.start, end=form.end, title=form.title,
            location=form.location or None, description=form.description or None, time_zone=time_zone,
            status=form.status or EventStatus.CONFIRMED, source=EventSource.MANUAL,
            recurrence_rules=tuple(r for r in rules if isinstance(r, dict)) if isinstance(rules, list) else (),
            recurrence_overrides={k: v for k, v in overrides.items() if isinstance(v, dict)}
            if isinstance(overrides, dict) else {},
            excluded=tuple(str(k) for k in excluded) if isinstance(excluded, list) else (), organizer=organizer,
            attendees=tuple(attendees),
        )
        # Occurrences are materialised around the event's own start, never around the clock.
        created = await self.writer.create(calendar_id, user_id, draft, user_zone=user_zone,
                                           reference=stored_instant(form.start, user_zone))
        if created is None:  # a UID collision, or the calendar vanished under us
            if form.uid:
                raise ValidationError("The calendar already has an event with this UID.", field="uid")
            raise ValidationError("The event could not be saved; try again.")
        if not attendees or self.invitations is None or not send:
            return Saved(created)
        event = await self._owned(user_id, created)
        sent = await self.invitations.send(user_id, event, Method.REQUEST, attendees, kind="new",
                                           user_zone=user_zone)
        return Saved(created, (sent,) if sent else ())

    async def _people(self, user_id: int, form: EventForm, organizer: dict[str, Any] | None,
                      attendees: list[dict[str, Any]] | tuple[dict[str, Any], ...],
                      ) -> tuple[dict[str, Any] | None, list[dict[str, Any]]]:
        """The organiser and guests the form leaves the event with. Guests make the user its organiser (with the
        identity chosen); a guest already there keeps their answer; an invitation someone else sent keeps its
        people, which are theirs to change."""
        current = [dict(a) for a in attendees if isinstance(a, dict)]
        if form.guests is None:
            return organizer, current
        if self.invitations is None:
            raise ValidationError("Guests cannot be invited here.", field="guests")
        own = await self.invitations.own_addresses(user_id)
        if organizer and not organised_by(organizer, own):
            if {address_of(a) for a in current} != {g.address.lower() for g in form.guests} and form.guests:
                raise ValidationError("Only the organiser can change who is invited.", field="guests")
            return organizer, current
        if not form.guests and not current:
            return organizer, current
        if organizer and form.organiser_identity_id is None:
            email = address_of(organizer)
            identity = next((i for i in await self.invitations.identities.for_user(user_id)
                             if i.email.lower() == email), None)
        else:
            identity = None
        if identity is None:
            identity = await self.invitations.organiser_identity(user_id, form.organiser_identity_id)
        by_address = {address_of(a): a for a in current}
        guests = check_guests(form.guests, identity.email)
        kept = [{**by_address[g.address.lower()], **({"name": g.name} if g.name else {})}
                if g.address.lower() in by_address else guest(g) for g in guests]
        return {"name": identity.name, "email": identity.email}, kept

    async def update(
        self, user_id: int, event_id: int, form: EventForm, *, user_zone: str, scope: Scope = Scope.SERIES,
        occurrence: datetime | None = None,
    ) -> StoredEvent:
        saved = await self.update_event(user_id, event_id, form, user_zone=user_zone, scope=scope,
                                        occurrence=occurrence)
        return await self._owned(user_id, saved.event_id)

    async def update_event(
        self, user_id: int, event_id: int, form: EventForm, *, user_zone: str, scope: Scope = Scope.SERIES,
        occurrence: datetime | None = None, send: bool = True,
    ) -> Saved:
        """Save a change. An event the user organises goes to its guests again with a higher SEQUENCE when its
        time, title, place or repetition changed (RFC 5546 §2.1.4), to new guests alone when only they were
        added, and a removed guest is sent a CANCEL."""
        form = _clean(form)
        async with self.db.transaction():  # an edit that is not marked as one could be overwritten
            event = await self._owned(user_id, event_id)
            if scope is Scope.OCCURRENCE and occurrence is not None and _recurs(event.values):
                values = await self._one_occurrence(event, form, occurrence, user_zone)
            else:
                values = self._series(event.values, form, user_zone)
                calendar_id = await self._calendar(user_id, form.calendar_id, event.calendar_id)
                if calendar_id != event.calendar_id:
                    await self.events.move(user_id, event_id, calendar_id)
                    values = replace(values, calendar_id=calendar_id)
            organizer, attendees = await self._people(user_id, form, event.values.organizer, event.values.attendees)
            before = {address_of(a): a for a in event.values.attendees if isinstance(a, dict) and address_of(a)}
            organising = self.invitations is not None and organizer is not None and organised_by(
                organizer, await self.invitations.own_addresses(user_id))
            significant = significant_change(event.values, values)
            if organising and (before or attendees) and significant:
                values = replace(values, sequence=event.sequence + 1)
                # a guest's earlier answer was to the old time: they are asked again
                attendees = [{**a, "partstat": "needs-action"} if a.get("partstat") != "needs-action" else a
                             for a in attendees]
            values = replace(values, organizer=organizer, attendees=attendees)
            await self.writer.store(event_id, values, user_zone=user_zone, reference=values.starts_at)
            await self.writer.mark_user_edited(user_id, event_id)
        if not organising or self.invitations is None or not send:
            return Saved(event_id)
        stored = await self._owned(user_id, event_id)
        now_invited = {address_of(a) for a in attendees}
        removed = [a for key, a in before.items() if key not in now_invited]
        added = [a for a in attendees if address_of(a) not in before]
        sent: list[SentInvitation | None] = []
        if removed:
            sent.append(await self.invitations.send(user_id, stored, Method.CANCEL, removed, kind="cancelled",
                                                    user_zone=user_zone))
        if significant:
            sent.append(await self.invitations.send(user_id, stored, Method.REQUEST, attendees, kind="changed",
                                                    user_zone=user_zone))
        elif added:
            sent.append(await self.invitations.send(user_id, stored, Method.REQUEST, added, kind="new",
                                                    user_zone=user_zone))
        return Saved(event_id, tuple(s for s in sent if s is not None))

    async def delete(
        self, user_id: int, event_id: int, *, user_zone: str, scope: Scope = Scope.SERIES,
        occurrence: datetime | None = None, send: bool = True,
    ) -> bool:
        """True when the whole event went, False when one occurrence did. ``send`` False: guests are not told."""
        event = await self._owned(user_id, event_id)
        if scope is Scope.OCCURRENCE and occurrence is not None and _recurs(event.values):
            async with self.db.transaction():
                key = await self._known_occurrence(event, occurrence, user_zone)
                recurrence = dict(event.values.recurrence)
                excluded = recurrence.get(EXCLUDED)
                recurrence[EXCLUDED] = [*(excluded if isinstance(excluded, list) else []), key]
                overrides = recurrence.get(OVERRIDES)
                if isinstance(overrides, dict) and key in overrides:
                    recurrence[OVERRIDES] = {k: v for k, v in overrides.items() if k != key}
                values = replace(event.values, recurrence=recurrence)
                await self.writer.store(event_id, values, user_zone=user_zone, reference=values.starts_at)
                await self.writer.mark_user_edited(user_id, event_id)
            return False
        if send:
            await self._cancel_for_guests(user_id, event, user_zone)
        await self.suppressor.not_an_event(user_id, event_id)
        return True

    async def _cancel_for_guests(self, user_id: int, event: StoredEvent, user_zone: str) -> None:
        """A deleted event the user organised is cancelled for its guests (RFC 5546 §3.2.5), at a higher SEQUENCE;
        a refused send is logged by the sender and never keeps the event."""
        if self.invitations is None or not event.values.attendees:
            return
        if not organised_by(event.values.organizer, await self.invitations.own_addresses(user_id)):
            return
        cancelled = StoredEvent(event.id, replace(event.values, sequence=event.sequence + 1),
                                event.is_user_edited, event.created_at, event.updated_at)
        guests = [a for a in event.values.attendees if isinstance(a, dict) and address_of(a)]
        await self.invitations.send(user_id, cancelled, Method.CANCEL, guests, kind="cancelled",
                                    user_zone=user_zone)

    async def _owned(self, user_id: int, event_id: int) -> StoredEvent:
        event = await self.events.owned(user_id, event_id)
        if event is None:
            raise NotFoundError("No such event.")
        return event

    async def _known_occurrence(self, event: StoredEvent, occurrence: datetime, user_zone: str) -> str:
        rows = await self.events.occurrences(event.user_id, event.id)
        if not any(row.recurrence_id == occurrence for row in rows):
            raise NotFoundError("This event has no such occurrence.")
        return recurrence_key(event.values, occurrence, user_zone)

    async def _one_occurrence(
        self, event: StoredEvent, form: EventForm, occurrence: datetime, user_zone: str
    ) -> EventValues:
        values = event.values
        key = await self._known_occurrence(event, occurrence, user_zone)
        start, end = _in_frame(values, form.start, user_zone), _in_frame(values, form.end, user_zone)
        patch: dict[str, Any] = {"start": local_datetime(start), "duration": format_duration(end - start)}
        if form.title != (values.title or ""):
            patch["title"] = form.title
        if form.location != (values.location or ""):
            patch["locations"] = {"1": {"@type": "Location", "name": form.location}}
        recurrence = dict(values.recurrence)
        overrides = recurrence.get(OVERRIDES)
        recurrence[OVERRIDES] = {**(overrides if isinstance(overrides, dict) else {}), key: patch}
        return replace(values, recurrence=recurrence)

    def _series(self, values: EventValues, form: EventForm, user_zone: str) -> EventValues:
        was_all_day = values.is_all_day
        floating = values.is_floating and not form.all_day and form.time_zone is None
        time_zone = None if form.all_day or floating else form.time_zone or (
            values.time_zone if values.time_zone and not was_all_day else user_zone)
        shaped = replace(values, is_all_day=form.all_day, is_floating=floating, time_zone=time_zone)
        start, end = _in_frame(shaped, form.start, user_zone), _in_frame(shaped, form.end, user_zone)
        old_start, _ = frame_times(values, user_zone)
        recurrence = shift_recurrence(values, old_start, start) if was_all_day == form.all_day else {}
        raw_rrule = values.raw_rrule
        if form.recurrence is not None:  # the client states the whole recurrence, keyed to its new start
            recurrence, raw_rrule = dict(form.recurrence), None
        elif form.repeat != KEEP_CUSTOM:
            rule = _rule(form.repeat, start, time_zone)
            if [rule] != recurrence.get(RULES) and (rule or recurrence.get(RULES)):
                # A new rule makes other instances: changes keyed to the old ones would name instances it
                # does not have (and an override the rule does not produce adds one), so they go with it.
                recurrence = {RULES: [rule]} if rule else {}
            raw_rrule = None
        return replace(
            shaped, title=form.title, location=form.location or None, description=form.description or None,
            starts_at=stored_instant(start, user_zone), ends_at=stored_instant(end, user_zone),
            recurrence=recurrence, raw_rrule=raw_rrule, source=values.source,
            status=form.status.value if form.status is not None else values.status,
        )


def significant_change(before: EventValues, after: EventValues) -> bool:
    """A change guests must hear of again: its time, title, place or repetition (RFC 5546 §2.1.4)."""
    return (before.starts_at, before.ends_at, before.is_all_day, before.title, before.location, before.recurrence,
            before.raw_rrule) != (after.starts_at, after.ends_at, after.is_all_day, after.title, after.location,
                                  after.recurrence, after.raw_rrule)


def _recurs(values: EventValues) -> bool:
    recurrence = values.recurrence
    return bool(recurrence.get(RULES) or recurrence.get(OVERRIDES)) if isinstance(recurrence, dict) else False


def _in_frame(values: EventValues, moment: datetime | date, user_zone: str) -> Any:
    """A time from the form in the frame the event is stepped in: a date, a floating wall time, or aware."""
    if values.is_all_day:
        return moment.astimezone(zone(user_zone) or UTC).date() if isinstance(moment, datetime) else moment
    if not isinstance(moment, datetime):
        moment = datetime.combine(moment, datetime.min.time(), zone(user_zone) or UTC)
    if values.is_floating:
        return moment.astimezone(zone(user_zone) or UTC).replace(tzinfo=None)
    return moment


__all__ = [
    "KEEP_CUSTOM",
    "NO_REPEAT",
    "REPEAT_PRESETS",
    "CalendarEditor",
    "EventForm",
    "Scope",
    "custom_rule_text",
    "recurrence_key",
    "repeat_of",
]
