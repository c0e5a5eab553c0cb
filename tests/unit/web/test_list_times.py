"""The time a list row shows (pages.localtime): the time for today, the day this year, else the date, in the
reader's zone, language and 12/24-hour choice, as CLDR writes them. The text is remembered per moment, so it must
follow a change of day, language, clock or zone at once."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, date, datetime
from zoneinfo import ZoneInfo

import pytest

from plmail.domain.enums import Locale
from plmail.domain.models import Appearance, User
from plmail.web.pages import _babel_locale, _clock_pattern, _list_time, clocktime, fulltime, localtime

BERLIN = ZoneInfo("Europe/Berlin")
MOMENT = datetime(2026, 3, 4, 8, 5, tzinfo=UTC)  # 09:05 in Berlin


def _reader(locale: Locale = Locale.EN, hour_cycle: str = "", zone: str = "Europe/Berlin") -> User:
    return User(1, "eve@example.org", "Eve", False, locale, zone, MOMENT, Appearance(hour_cycle=hour_cycle))


@pytest.mark.parametrize(("locale", "hour_cycle", "shown"), [
    (Locale.EN, "", "9:05\u202fAM"), (Locale.DE, "", "09:05"),
    (Locale.EN, "24", "09:05"), (Locale.DE, "12", "9:05 AM"),
])
def test_today_shows_the_time_in_the_readers_language_and_clock(locale: Locale, hour_cycle: str, shown: str) -> None:
    user = _reader(locale, hour_cycle)
    assert _list_time(MOMENT, BERLIN, date(2026, 3, 4), _babel_locale(user), _clock_pattern(user)) == shown
    assert clocktime(MOMENT, user) == shown


def test_the_next_day_the_same_moment_shows_its_day_and_an_older_year_its_date() -> None:
    en, de = _babel_locale(_reader()), _babel_locale(_reader(Locale.DE))
    assert _list_time(MOMENT, BERLIN, date(2026, 3, 4), en, "short") == "9:05\u202fAM"
    assert _list_time(MOMENT, BERLIN, date(2026, 3, 5), en, "short") == "Mar 4"
    assert _list_time(MOMENT, BERLIN, date(2026, 3, 5), de, "short") == "4. März"
    assert _list_time(MOMENT, BERLIN, date(2027, 1, 2), en, "short") == "Mar 4, 2026"


def test_a_change_of_zone_or_language_shows_at_once() -> None:
    berlin = _reader()
    now = datetime.now(UTC)
    assert localtime(now, berlin) == clocktime(now, berlin)  # today: the time
    assert fulltime(MOMENT, berlin) == "Mar 4, 2026, 9:05\u202fAM"
    assert fulltime(MOMENT, replace(berlin, locale=Locale.DE)) == "04.03.2026, 09:05"
    assert fulltime(MOMENT, replace(berlin, time_zone="Asia/Tokyo")) == "Mar 4, 2026, 5:05\u202fPM"
    older = datetime(2025, 3, 4, 8, 5, tzinfo=UTC)
    assert localtime(older, berlin) == "Mar 4, 2025"
    assert localtime(older, replace(berlin, locale=Locale.DE)) == "04.03.2025"
