"""Times in one iCalendar object, read with that object's own zones.

icalendar caches every VTIMEZONE it parses in a process-wide table keyed by TZID, first
definition wins. Two senders' "Customized Time Zone" would then share one definition, so the
values it decodes are not trusted for zones: we take the wall-clock digits it read and apply
the zone ourselves — the IANA zone the TZID names if it names one (Windows names included),
else this calendar's own VTIMEZONE, else the time stays floating.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta, tzinfo

from icalendar import Component, Timezone
from icalendar.prop import vDDDLists, vDDDTypes

from plmail.calendar.occurrences import ExpansionBudget
from plmail.calendar.timezones import resolve_zone_name, zone, zone_transitions

MAX_LIST_VALUES = 1_000


@dataclass(frozen=True, slots=True)
class Moment:
    """A DTSTART-like value: aware UTC, a date, or naive when floating; ``zone_name`` if the sender named one."""

    value: datetime | date
    zone_name: str | None = None


class IcsClock:
    """Reads date-time properties of one VCALENDAR."""

    __slots__ = ("_budget", "_built", "_definitions")

    def __init__(self, calendar: Component | None, budget: ExpansionBudget | None = None) -> None:
        """``budget`` bounds the VTIMEZONE rules expanded for one file, shared by all its calendars."""
        self._budget = budget if budget is not None else ExpansionBudget()
        self._definitions: dict[str, Timezone] = {}
        self._built: dict[str, tzinfo | None] = {}
        for component in calendar.subcomponents if calendar is not None else []:
            if isinstance(component, Timezone):
                tzid = str(component.get("TZID", "")).strip()
                if tzid and tzid not in self._definitions:
                    self._definitions[tzid] = component

    def moment(self, prop: object) -> Moment | None:
        """The value of DTSTART, DTEND, RECURRENCE-ID …; None when absent, broken or not a date/time."""
        if not isinstance(prop, vDDDTypes):
            return None
        return self.resolve(prop.dt, prop.params.get("TZID"))

    def moments(self, prop: object) -> Iterator[tuple[Moment, timedelta | None]]:
        """Each value of an EXDATE/RDATE (one property or several), with a PERIOD's length if it has one."""
        lists = prop if isinstance(prop, list) else [prop]
        produced = 0
        for item in lists:
            if not isinstance(item, vDDDLists):
                continue
            tzid = item.params.get("TZID")
            for value in item.dts:
                if produced >= MAX_LIST_VALUES:
                    return
                raw = value.dt if isinstance(value, vDDDTypes) else None
                length: timedelta | None = None
                if isinstance(raw, tuple) and len(raw) == 2:  # a PERIOD: start and end, or start and duration
                    raw, second = raw
                    length = second if isinstance(second, timedelta) else _span(raw, second)
                moment = self.resolve(raw, value.params.get("TZID", tzid) if isinstance(value, vDDDTypes) else tzid)
                if moment is not None:
                    produced += 1
                    yield moment, length

    def resolve(self, value: object, tzid: object) -> Moment | None:
        if isinstance(value, datetime):
            wall = value.replace(tzinfo=None)
            if tzid:
                return self._zoned(wall, str(tzid))
            if value.tzinfo is not None:
                return Moment(_utc(value))
            return Moment(wall)
        if isinstance(value, date):
            return Moment(value)
        return None

    def _zoned(self, wall: datetime, tzid: str) -> Moment:
        name = resolve_zone_name(tzid)
        named = zone(name) if name else None
        if named is not None:
            return Moment(_utc(wall.replace(tzinfo=named)), name)
        own = self._own_zone(tzid)
        if own is not None:
            return Moment(_utc(wall.replace(tzinfo=own)))
        return Moment(wall)  # a TZID that names nothing we know: keep the wall clock, floating

    def _own_zone(self, tzid: str) -> tzinfo | None:
        key = tzid.strip()
        if key not in self._built:
            definition = self._definitions.get(key)
            built: tzinfo | None = None
            # A VTIMEZONE whose rules expand past the budget is no zone we use: its times stay floating.
            transitions = None if definition is None or self._budget.exhausted else zone_transitions(definition)
            if definition is not None and transitions is not None:
                self._budget.spend(transitions)
                try:
                    built = definition.to_tz(lookup_tzid=False)
                except Exception:  # a broken VTIMEZONE is one sender's problem, not a reason to fail
                    built = None
            self._built[key] = built
        return self._built[key]


def _utc(value: datetime) -> datetime:
    try:
        return value.astimezone(UTC)
    except (OverflowError, ValueError):
        # Year 1 or 9999 with an offset falls off the calendar; keep the digits as if UTC.
        return value.replace(tzinfo=UTC)


def _span(start: object, end: object) -> timedelta | None:
    if isinstance(start, datetime) and isinstance(end, datetime):
        try:
            return end - start
        except TypeError:
            return None
    return None
