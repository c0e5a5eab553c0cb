"""Changed instances of a series: each RECURRENCE-ID VEVENT becomes a JSCalendar override patch.

A moved or cancelled instance is applied to its occurrence rather than dropped; dropping it is
how a meeting that was moved to Thursday keeps appearing on Wednesday.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date, datetime, timedelta

from icalendar import Component
from icalendar.prop import vBroken, vDDDTypes

from plmail.calendar.extraction.claims import nominal_end, override_key
from plmail.calendar.extraction.ics_time import IcsClock, Moment
from plmail.calendar.extraction.text import clean_block, clean_line
from plmail.calendar.jscalendar import JsonObject, format_duration
from plmail.domain.calendar import EventStatus

MAX_OVERRIDES = 1_000
_TEXTS = (
    ("SUMMARY", "title", 500, False),
    ("LOCATION", "location", 500, False),
    ("DESCRIPTION", "description", 10_000, True),
)
_STATUSES = {"CANCELLED": EventStatus.CANCELLED, "TENTATIVE": EventStatus.TENTATIVE}

__all__ = ["component_end", "component_status", "instance_patches", "override_key"]


def component_status(component: Component) -> EventStatus:
    return _STATUSES.get(str(component.get("STATUS", "")).strip().upper(), EventStatus.CONFIRMED)


def component_end(component: Component, start: Moment | None, clock: IcsClock) -> datetime | date | None:
    """DTEND if it is after the start, else DURATION, else a day (all-day) or a nominal hour."""
    if start is None:
        return None
    own = clock.moment(component.get("DTEND"))
    if own is not None and isinstance(own.value, datetime) == isinstance(start.value, datetime):
        return nominal_end(start.value, own.value)
    length = component.get("DURATION")
    if isinstance(length, vDDDTypes) and isinstance(length.dt, timedelta) and length.dt > timedelta(0):
        if isinstance(start.value, datetime):
            return start.value + length.dt
        return start.value + timedelta(days=max(length.dt.days, 1))
    return nominal_end(start.value, None)


def instance_patches(
    master: Component | None,
    instances: Sequence[Component],
    clock: IcsClock,
    zone_name: str | None,
    *,
    cancel: bool,
) -> dict[str, JsonObject]:
    """One patch per changed instance, keyed by its recurrence id in the series' zone."""
    series_length = _length(master, clock) if master is not None else None
    patches: dict[str, JsonObject] = {}
    for instance in instances[:MAX_OVERRIDES]:
        original = clock.moment(instance.get("RECURRENCE-ID"))
        if original is None:
            continue
        patch: JsonObject = {}
        start = clock.moment(instance.get("DTSTART"))
        if start is not None and start.value != original.value:
            patch["start"] = override_key(start.value, zone_name)
        length = _length(instance, clock)
        if length is not None and length != series_length:
            patch["duration"] = format_duration(length)
        for prop, key, limit, block in _TEXTS:
            value = _cleaned(instance.get(prop), limit, block)
            if value is not None and (master is None or value != _cleaned(master.get(prop), limit, block)):
                patch[key] = value
        status = EventStatus.CANCELLED if cancel else component_status(instance)
        if status is not EventStatus.CONFIRMED:
            patch["status"] = status.value
        patches[override_key(original.value, zone_name)] = patch
    return patches


def _length(component: Component, clock: IcsClock) -> timedelta | None:
    start = clock.moment(component.get("DTSTART"))
    end = component_end(component, start, clock)
    if start is None or end is None:
        return None
    try:
        span = end - start.value
    except TypeError:
        return None
    return span if isinstance(span, timedelta) else None


def _cleaned(value: object, limit: int, block: bool) -> str | None:
    if value is None or isinstance(value, vBroken | list):
        return None
    return clean_block(str(value), limit) if block else clean_line(str(value), limit)
