"""What the calendar pages show, worked out from the calendar service's answers: the time grid and month
window, an event's detail, the upcoming list; no request handling (web/controllers/calendar.py)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, date, datetime, timedelta, tzinfo
from typing import Any, Protocol
from urllib.parse import quote

from babel.dates import format_date

from plmail.calendar.browse import CalendarView, CalendarWindow, EventDetail, window_bounds
from plmail.calendar.display import (
    Translator,
    clock,
    day_label,
    moment_label,
    month_label,
    reader_zone,
    side_by_side,
    span_label,
    weekday_names,
)
from plmail.calendar.sources import is_trusted_source
from plmail.calendar.upcoming import SoonEntry
from plmail.calendar.writer import is_shortened
from plmail.domain.calendar import ACCEPTED_PROPOSAL_EVIDENCE, EventValues
from plmail.domain.errors import ValidationError
from plmail.domain.models import User
from plmail.web.i18n import translate
from plmail.web.i18n_runtime import N_

STATUS_LABELS = {"confirmed": "Confirmed", "tentative": "Tentative", "cancelled": "Cancelled"}
PARTSTAT_LABELS = {"accepted": "Accepted", "declined": "Declined", "tentative": "Tentative",
                   "needs-action": "Not answered yet", "delegated": "Delegated"}
VIEW_LABELS = (("day", "Day"), ("week", "Week"), ("month", "Month"), ("agenda", "Agenda"))


def _translator(user: User) -> Translator:
    locale = user.locale.value

    def t(text: str) -> str:
        return translate(text, locale)

    return t


def _person(name: str | None, email: str | None) -> str:
    if name and email:
        return f"{name} <{email}>"
    return name or email or ""


def _unconfirmed(source: str) -> bool:
    """An untrusted source's event is shown with an explicit "unconfirmed" marker."""
    return not is_trusted_source(source)


# Events mail brought keep a badge naming where they came from.
PROVENANCE_BADGES = {"ics": N_("from an invitation"), "structured_data": N_("from a booking"),
                     "accepted_proposal": N_("proposal accepted")}
# The colours a calendar may carry (the label palette); anything else is drawn in the first.
CALENDAR_COLOURS = ("blue", "teal", "green", "orange", "red", "violet", "pink", "amber", "gray")
MINUTES_A_DAY = 24 * 60
# A view is drawn from the times stored now: Back must not bring a copy whose events sit where they were (a drag
# on it would move from there).
FRESH = {"cache-control": "no-store"}


class Coloured(Protocol):
    """A calendar as the views draw it: its name and colour."""

    @property
    def id(self) -> int: ...

    @property
    def name(self) -> str: ...

    @property
    def color(self) -> str: ...


def _minute_of(moment: datetime, day: date) -> int:
    """Minutes from the start of ``day`` to ``moment`` (a local time), held within the day."""
    midnight = datetime.combine(day, datetime.min.time(), moment.tzinfo)
    return max(0, min(MINUTES_A_DAY, int((moment - midnight).total_seconds() // 60)))


def _mini_month(anchor: date, today: date, shown: tuple[date, date] | None, locale: str) -> dict[str, Any]:
    """The sidebar's small month around ``anchor``: its weeks, today and the days a day or week view shows marked."""
    start, finish, previous, following = window_bounds(CalendarView.MONTH, anchor)
    weeks, week, day = [], [], start
    while day <= finish:
        week.append({"date": day.isoformat(), "number": day.day, "other": day.month != anchor.month,
                     "today": day == today, "shown": shown is not None and shown[0] <= day <= shown[1]})
        if len(week) == 7:
            weeks.append(week)
            week = []
        day += timedelta(days=1)
    return {"heading": month_label(anchor, locale), "weeks": weeks, "previous": previous.isoformat(),
            "following": following.isoformat(), "weekdays": [n[:2] for n in weekday_names(locale)]}


def _window_view(window: CalendarWindow, user: User, calendars: Sequence[Coloured] = ()) -> dict[str, Any]:
    t = _translator(user)
    where = reader_zone(user.time_zone)
    locale = user.locale.value
    now = datetime.now(where)
    today = now.date()
    colours = {c.id: c.color if c.color in CALENDAR_COLOURS else CALENDAR_COLOURS[0] for c in calendars}
    days = []
    for cell in window.days:
        entries: list[dict[str, Any]] = []
        timed: list[dict[str, Any]] = []
        for entry in cell.entries:
            begin, finish = entry.starts_at.astimezone(where), entry.ends_at.astimezone(where)
            if entry.all_day:
                time_label = t("all day")
            elif begin.date() < cell.day:
                time_label = t("continues")  # began on an earlier day
            else:
                time_label = f"{clock(begin)}–{clock(finish)}"
            href = f"/calendar/event/{entry.event_id}"
            occurrence = ""
            if entry.recurrence_id is not None:
                occurrence = entry.recurrence_id.astimezone(UTC).isoformat()
                href += "?occurrence=" + quote(occurrence)
            badge = PROVENANCE_BADGES.get(entry.source)
            shown: dict[str, Any] = {
                "id": entry.event_id, "title": entry.title or t("(no title)"), "time": time_label,
                "location": entry.location, "cancelled": entry.cancelled, "kind": entry.kind,
                "href": href, "unconfirmed": _unconfirmed(entry.source), "all_day": entry.all_day,
                "colour": colours.get(entry.calendar_id or 0, CALENDAR_COLOURS[0]),
                "badge": t(badge) if badge else None, "occurrence": occurrence,
                # Where the time grid draws it, in minutes of this day, and the whole span to move it by.
                "top": _minute_of(begin, cell.day), "bottom": _minute_of(finish, cell.day),
                "starts": begin.strftime("%Y-%m-%dT%H:%M"), "ends": finish.strftime("%Y-%m-%dT%H:%M"),
                "movable": not entry.cancelled and _movable(entry.source),
            }
            entries.append(shown)
            if not entry.all_day:
                timed.append(shown)
        for shown, (column, columns) in zip(timed, side_by_side([(e["top"], e["bottom"]) for e in timed]),
                                            strict=True):
            shown["column"], shown["columns"] = column, columns
        days.append({"date": cell.day.isoformat(), "label": day_label(cell.day, locale, t), "number": cell.day.day,
                     "weekday": format_date(cell.day, "EEE", locale=locale),
                     "entries": entries, "all_day": [e for e in entries if e["all_day"]], "timed": timed,
                     "in_range": cell.in_range, "today": cell.day == today})
    if window.view is CalendarView.AGENDA:
        heading = f"{day_label(window.first, locale, t)} – {day_label(window.last, locale, t)}"
    else:
        heading = _months_label(window.first if window.view is not CalendarView.MONTH else window.anchor,
                                window.last if window.view is not CalendarView.MONTH else window.anchor, locale)
    return {"view": window.view.value, "anchor": window.anchor.isoformat(), "heading": heading, "days": days,
            "weeks": [days[i : i + 7] for i in range(0, len(days), 7)], "previous": window.previous.isoformat(),
            "following": window.following.isoformat(), "today": today.isoformat(), "views": VIEW_LABELS,
            "weekdays": weekday_names(locale), "hours": [f"{h:02d}:00" for h in range(24)],
            "now_minute": now.hour * 60 + now.minute,
            "mini": _mini_month(window.anchor, today, (window.first, window.last)
                                if window.view in (CalendarView.DAY, CalendarView.WEEK) else None, locale),
            "calendars": [{"name": c.name, "colour": colours[c.id]} for c in calendars]}


def _months_label(first: date, last: date, locale: str) -> str:
    """The grid's heading, as calendars title it: "December 2026", or "Nov – Dec 2026" for a week across two."""
    if (first.year, first.month) == (last.year, last.month):
        return month_label(first, locale)
    pattern = "LLL" if first.year == last.year else "LLL y"
    return f"{format_date(first, pattern, locale=locale)} – {format_date(last, 'LLL y', locale=locale)}"


def _is_date(text: str) -> bool:
    try:
        date.fromisoformat(text)
    except ValueError:
        return False
    return True


def _clock_minute(text: str | None) -> int | None:
    """Minutes of the day of an "HH:MM" (24:00 is the day's end), None when it is not one."""
    hours, _, minutes = (text or "").partition(":")
    if not (hours.isdigit() and minutes.isdigit()):
        return None
    total = int(hours) * 60 + int(minutes)
    return total if int(minutes) < 60 and 0 <= total <= MINUTES_A_DAY else None


def _local_minute(text: str, where: tzinfo) -> datetime:
    """A wall time from the grid (YYYY-MM-DDTHH:MM) in the reader's zone."""
    try:
        moment = datetime.strptime(text, "%Y-%m-%dT%H:%M")
    except ValueError:
        raise ValidationError("Give the new start and end as date and time.") from None
    return moment.replace(tzinfo=where)


def _movable(source: str) -> bool:
    """A subscribed calendar's event is the other side's to change; anything else the person may move."""
    return source != "remote_sync"


def _people(values: EventValues, t: Translator) -> tuple[str | None, list[dict[str, str]]]:
    organizer = values.organizer
    shown = _person(organizer.get("name"), organizer.get("email")) if organizer else None
    attendees = [{"who": _person(a.get("name"), a.get("email")),
                  "partstat": t(PARTSTAT_LABELS.get(str(a.get("partstat")), "")) if a.get("partstat") else ""}
                 for a in values.attendees]
    return shown, attendees


def _detail_view(detail: EventDetail, user: User, occurrence: datetime | None) -> dict[str, Any]:
    t = _translator(user)
    where = reader_zone(user.time_zone)
    values = detail.event.values
    locale = user.locale.value
    organizer, attendees = _people(values, t)

    def when(starts_at: datetime, ends_at: datetime) -> str:
        return span_label(starts_at, ends_at, all_day=values.is_all_day, where=where, locale=locale, t=t)

    provenance = [
        {"subject": row.subject or t("(no subject)"), "sender": row.from_name or row.from_address,
         "arrived": moment_label(row.arrived_at, where=where, locale=locale, t=t) if row.arrived_at else "",
         "applied": row.applied, "extractor": row.extractor, "confidence": row.confidence,
         "accepted": row.extractor == ACCEPTED_PROPOSAL_EVIDENCE,
         "href": f"/thread/{row.thread_id}#m{row.message_id}" if row.thread_id else None}
        for row in detail.provenance
    ]
    chosen = next((o for o in detail.occurrences if occurrence is not None and o.recurrence_id == occurrence), None)
    recurring = len(detail.occurrences) > 1 or bool(values.recurrence)
    return {
        "id": detail.event.id, "title": values.title or t("(no title)"),
        "when": when(values.starts_at, values.ends_at), "location": values.location or "",
        "description": values.description, "cancelled": values.status == "cancelled",
        "status": t(STATUS_LABELS.get(values.status, values.status)), "all_day": values.is_all_day,
        "edited": detail.event.is_user_edited, "source": values.source, "sequence": values.sequence,
        "shortened": is_shortened(values),
        "unconfirmed": _unconfirmed(values.source),
        "calendar": detail.calendar.name if detail.calendar else "", "time_zone": values.time_zone,
        "organizer": organizer, "attendees": attendees, "recurring": recurring,
        "occurrences": [{"when": when(o.starts_at, o.ends_at), "cancelled": o.cancelled, "moved": o.is_override,
                         "title": o.title,
                         "href": f"/calendar/event/{detail.event.id}?occurrence="
                                 + quote(o.recurrence_id.astimezone(UTC).isoformat()),
                         "current": chosen is not None and o.recurrence_id == chosen.recurrence_id}
                        for o in detail.occurrences],
        "more_occurrences": detail.occurrence_count - len(detail.occurrences),
        "provenance": provenance,
        "occurrence_when": when(chosen.starts_at, chosen.ends_at) if chosen is not None else None,
        "chosen": chosen,
    }


def _soon_view(entries: list[SoonEntry], user: User) -> list[dict[str, Any]]:
    t = _translator(user)
    where = reader_zone(user.time_zone)
    rows = []
    for soon in entries:
        entry = soon.entry
        rows.append({
            "title": entry.title or t("(no title)"), "location": entry.location,
            "when": span_label(entry.starts_at, entry.ends_at, all_day=entry.all_day, where=where,
                               locale=user.locale.value, t=t),
            "event_href": f"/calendar/event/{entry.event_id}",
            "message_href": f"/thread/{soon.thread_id}#m{soon.message_id}" if soon.thread_id else None,
        })
    return rows
