"""Snooze presets, computed in the user's own time zone."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, time, timedelta
from zoneinfo import ZoneInfo

from plmail.domain.errors import ValidationError

MORNING = time(8, 0)
EVENING = time(18, 0)


@dataclass(frozen=True, slots=True)
class SnoozePreset:
    key: str
    label: str  # English; the page translates it
    until: datetime  # aware, UTC


def _at(day: datetime, clock: time, zone: ZoneInfo) -> datetime:
    return datetime.combine(day.date(), clock, tzinfo=zone).astimezone(UTC)


def snooze_presets(now: datetime, time_zone: str) -> list[SnoozePreset]:
    """Later today (18:00, while it is still ahead), tomorrow 08:00, this weekend (Saturday 08:00, or next
    Saturday on a weekend), next week (Monday 08:00)."""
    zone = ZoneInfo(time_zone)
    local = now.astimezone(zone)
    presets: list[SnoozePreset] = []
    if local.time() < time(17, 0):
        presets.append(SnoozePreset("later", "Later today", _at(local, EVENING, zone)))
    presets.append(SnoozePreset("tomorrow", "Tomorrow", _at(local + timedelta(days=1), MORNING, zone)))
    to_saturday = (5 - local.weekday()) % 7 or 7
    presets.append(SnoozePreset("weekend", "This weekend", _at(local + timedelta(days=to_saturday), MORNING, zone)))
    to_monday = (7 - local.weekday()) % 7 or 7
    presets.append(SnoozePreset("next_week", "Next week", _at(local + timedelta(days=to_monday), MORNING, zone)))
    return presets


def resolve_snooze(choice: str, custom: str, now: datetime, time_zone: str) -> datetime:
    """A preset key, or "custom" with a local `YYYY-MM-DDTHH:MM` from a datetime-local field."""
    if choice != "custom":
        for preset in snooze_presets(now, time_zone):
            if preset.key == choice:
                return preset.until
        raise ValidationError("Choose when the conversation should come back.")
    try:
        local = datetime.fromisoformat(custom.strip())
    except ValueError:
        raise ValidationError("Enter a date and time such as 2026-12-24T09:00.") from None
    until = (local if local.tzinfo else local.replace(tzinfo=ZoneInfo(time_zone))).astimezone(UTC)
    if until <= now:
        raise ValidationError("Choose a time in the future.")
    return until
