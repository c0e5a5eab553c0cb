"""The event editor's form: what it posts, how that becomes an EventForm, and what it shows to start from.

Times are typed in the reader's zone, as a date and a time each (or one ``datetime-local`` value, which
the earlier editor posted); an all-day event names its first and last day, and its end is exclusive.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from email.utils import formataddr
from typing import Any, Protocol

from plmail.calendar.display import all_day_dates, reader_zone
from plmail.calendar.editor import KEEP_CUSTOM, NO_REPEAT, REPEAT_PRESETS, EventForm, custom_rule_text, repeat_of
from plmail.domain.calendar import EventValues
from plmail.domain.errors import ValidationError
from plmail.domain.models import User
from plmail.domain.outgoing import Identity
from plmail.mail.public import parse_address_list

REPEAT_LABELS = (("none", "Does not repeat"), ("daily", "Every day"), ("weekdays", "Every weekday (Mon–Fri)"),
                 ("weekly", "Every week"), ("monthly", "Every month"), ("yearly", "Every year"))
DEFAULT_HOUR = 9


class Choosable(Protocol):
    """A calendar as the editor's list shows it."""

    @property
    def id(self) -> int: ...

    @property
    def name(self) -> str: ...

    @property
    def is_default(self) -> bool: ...


@dataclass(frozen=True)
class EventEditorForm:
    title: str = ""
    all_day: str = ""
    start: str = ""  # one datetime-local (or date) value, as the earlier editor posted it
    end: str = ""
    start_date: str = ""
    start_time: str = ""
    end_date: str = ""
    end_time: str = ""
    calendar_id: str = ""
    repeat: str = ""
    location: str = ""
    description: str = ""
    scope: str = "series"
    occurrence: str = ""
    guests: str = ""  # "Ann <ann@x>, bob@y": who the event's invitation goes to
    organiser_identity_id: str = ""


def _moment(day: str, clock: str, combined: str, *, all_day: bool, user: User) -> datetime | date:
    text = combined.strip() or (f"{day.strip()}T{clock.strip()}" if clock.strip() and not all_day else day.strip())
    try:
        if all_day:
            return date.fromisoformat(text[:10])
        if len(text) == 10:
            raise ValueError(text)
        return datetime.fromisoformat(text).replace(tzinfo=reader_zone(user.time_zone))
    except ValueError:
        raise ValidationError("Enter the time as shown, for example 2026-04-01T09:30.") from None


def event_form(data: EventEditorForm, user: User, *, creating: bool) -> EventForm:
    """The posted editor as an EventForm; an all-day event's last day becomes its exclusive end."""
    all_day = data.all_day.strip().lower() in {"on", "true", "1", "yes"}
    start = _moment(data.start_date, data.start_time, data.start, all_day=all_day, user=user)
    end = _moment(data.end_date or data.start_date, data.end_time, data.end, all_day=all_day, user=user)
    if all_day and isinstance(end, date) and not isinstance(end, datetime):
        end += timedelta(days=1)
    repeat = data.repeat.strip() or (NO_REPEAT if creating else KEEP_CUSTOM)
    calendar_id = int(data.calendar_id) if data.calendar_id.strip().isdigit() else None
    identity = int(data.organiser_identity_id) if data.organiser_identity_id.strip().isdigit() else None
    return EventForm(title=data.title, start=start, end=end, all_day=all_day, calendar_id=calendar_id,
                     repeat=repeat, location=data.location, description=data.description,
                     guests=parse_address_list(data.guests, "guests"), organiser_identity_id=identity)


def occurrence_of(value: str) -> datetime | None:
    """The occurrence a link or form names: the ISO instant of its recurrence id."""
    if not value.strip():
        return None
    try:
        moment = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        raise ValidationError("No such occurrence.") from None
    return moment if moment.tzinfo is not None else None


def _inputs(starts_at: datetime, ends_at: datetime, all_day: bool, user: User) -> dict[str, str]:
    if all_day:
        first, last = all_day_dates(starts_at, ends_at)
        return {"start_date": first.isoformat(), "start_time": "", "end_date": last.isoformat(), "end_time": ""}
    where = reader_zone(user.time_zone)
    begin, finish = starts_at.astimezone(where), ends_at.astimezone(where)
    return {"start_date": begin.date().isoformat(), "start_time": begin.strftime("%H:%M"),
            "end_date": finish.date().isoformat(), "end_time": finish.strftime("%H:%M")}


def editor_view(
    user: User, calendars: Sequence[Choosable], t: Any, *, values: EventValues | None = None,
    starts_at: datetime | None = None, ends_at: datetime | None = None, title: str | None = None,
    location: str | None = None, occurrence: datetime | None = None, day: date | None = None,
    hour: int | None = None, span: tuple[int, int] | None = None, posted: EventEditorForm | None = None,
    identities: Sequence[Identity] = (),
) -> dict[str, Any]:
    """What the editor shows: an event (or one of its occurrences), a new event on ``day``, or what was
    posted when it was refused, so nothing typed is lost."""
    if values is not None:
        begin, finish = starts_at or values.starts_at, ends_at or values.ends_at
        fields = {"title": values.title or "" if title is None else title,
                  "location": values.location or "" if location is None else location,
                  "description": values.description or "", "all_day": values.is_all_day,
                  "calendar_id": values.calendar_id, "repeat": repeat_of(values),
                  **_inputs(begin, finish, values.is_all_day, user)}
        custom = custom_rule_text(values) if fields["repeat"] == KEEP_CUSTOM else None
        organizer = str((values.organizer or {}).get("email") or "").lower()
        fields["guests"] = ", ".join(
            formataddr((str(a.get("name") or ""), str(a["email"]))) for a in values.attendees
            if isinstance(a, dict) and a.get("email") and str(a["email"]).lower() != organizer)
        # an invitation someone else sent lists their guests, which are theirs to change
        fields["guests_editable"] = not organizer or organizer in {i.email.lower() for i in identities}
        fields["organiser_identity_id"] = next((i.id for i in identities if i.email.lower() == organizer), None)
    else:
        where = reader_zone(user.time_zone)
        chosen = day or datetime.now(where).date()
        midnight = datetime.combine(chosen, time(), where)
        if span is not None:  # minutes of the day a drag on the time grid covered
            begin, finish = midnight + timedelta(minutes=span[0]), midnight + timedelta(minutes=span[1])
        else:
            begin = datetime.combine(chosen, time(hour if hour is not None else DEFAULT_HOUR), where)
            finish = begin + timedelta(hours=1)
        fields = {"title": "", "location": "", "description": "", "all_day": False,
                  "calendar_id": next((c.id for c in calendars if c.is_default), None), "repeat": NO_REPEAT,
                  "guests": "", "guests_editable": True, "organiser_identity_id": None,
                  **_inputs(begin, finish, False, user)}
        custom = None
    if posted is not None:
        fields.update({"title": posted.title, "location": posted.location, "description": posted.description,
                       "all_day": posted.all_day.strip().lower() in {"on", "true", "1", "yes"},
                       "start_date": posted.start_date or posted.start[:10],
                       "end_date": posted.end_date or posted.end[:10],
                       "start_time": posted.start_time or posted.start[11:16],
                       "end_time": posted.end_time or posted.end[11:16]})
        if posted.repeat:
            fields["repeat"] = posted.repeat
        if posted.calendar_id.isdigit():
            fields["calendar_id"] = int(posted.calendar_id)
        if fields.get("guests_editable", True):
            fields["guests"] = posted.guests
        if posted.organiser_identity_id.isdigit():
            fields["organiser_identity_id"] = int(posted.organiser_identity_id)
    repeats = [(key, t(label)) for key, label in REPEAT_LABELS if key in REPEAT_PRESETS]
    if custom is not None or fields["repeat"] == KEEP_CUSTOM:
        repeats.append((KEEP_CUSTOM, t("Keep this custom rule") + (f" ({custom})" if custom else "")))
    senders = [i for i in identities if i.verified]
    return {**fields, "repeats": repeats, "calendars": [{"id": c.id, "name": c.name} for c in calendars],
            "identities": [{"id": i.id, "label": formataddr((i.name, i.email))} for i in senders],
            "occurrence": occurrence.isoformat() if occurrence is not None else ""}
