from __future__ import annotations

from datetime import UTC, datetime

import pytest

from plmail.domain.errors import ValidationError
from plmail.mail.snooze import resolve_snooze, snooze_presets


def test_presets_are_in_the_users_zone() -> None:
    # Wednesday 2026-03-04 10:00 in Berlin (09:00 UTC).
    now = datetime(2026, 3, 4, 9, 0, tzinfo=UTC)
    presets = {p.key: p.until for p in snooze_presets(now, "Europe/Berlin")}
    assert presets["later"] == datetime(2026, 3, 4, 17, 0, tzinfo=UTC)  # 18:00 Berlin
    assert presets["tomorrow"] == datetime(2026, 3, 5, 7, 0, tzinfo=UTC)
    assert presets["weekend"] == datetime(2026, 3, 7, 7, 0, tzinfo=UTC)  # Saturday 08:00
    assert presets["next_week"] == datetime(2026, 3, 9, 7, 0, tzinfo=UTC)  # Monday 08:00
    evening = datetime(2026, 3, 4, 19, 0, tzinfo=UTC)  # 20:00 Berlin: "later today" is gone
    assert "later" not in {p.key for p in snooze_presets(evening, "Europe/Berlin")}
    saturday = datetime(2026, 3, 7, 12, 0, tzinfo=UTC)
    assert {p.key: p.until for p in snooze_presets(saturday, "Europe/Berlin")}["weekend"] == \
        datetime(2026, 3, 14, 7, 0, tzinfo=UTC)


def test_custom_time_is_local_and_must_be_ahead() -> None:
    now = datetime(2026, 3, 4, 9, 0, tzinfo=UTC)
    assert resolve_snooze("custom", "2026-03-10T09:30", now, "America/New_York") == datetime(2026, 3, 10, 13, 30,
                                                                                            tzinfo=UTC)
    with pytest.raises(ValidationError, match="future"):
        resolve_snooze("custom", "2026-03-01T09:30", now, "Europe/Berlin")
    with pytest.raises(ValidationError):
        resolve_snooze("custom", "soon", now, "Europe/Berlin")
    with pytest.raises(ValidationError):
        resolve_snooze("yesterday", "", now, "Europe/Berlin")
