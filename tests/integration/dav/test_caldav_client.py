"""CalDAV with the Python `caldav` library, a real client over real HTTP: discovery from the well-known URI
(RFC 6764) through the principal to the calendar home (RFC 4791 §6.2), events written on the "phone" appearing in
plmail's calendar and events written in plmail appearing on the "phone", range queries over recurring events
with expansion, and sync-collection (RFC 6578) answering only what changed."""

from __future__ import annotations

import asyncio
from datetime import UTC, date, datetime
from typing import Any

import caldav

from plmail.calendar.editor import EventForm
from plmail.services import Services
from tests.integration.dav.conftest import DavUser

PHONE_EVENT = """BEGIN:VCALENDAR
VERSION:2.0
PRODID:-//Phone//EN
BEGIN:VEVENT
UID:phone-1@example.org
DTSTAMP:20261201T080000Z
DTSTART;TZID=Europe/Berlin:20261210T090000
DTEND;TZID=Europe/Berlin:20261210T100000
SUMMARY:Dentist
LOCATION:Hauptstr. 1
END:VEVENT
END:VCALENDAR
"""

WEEKLY = """BEGIN:VCALENDAR
VERSION:2.0
PRODID:-//Phone//EN
BEGIN:VEVENT
UID:weekly-1@example.org
DTSTAMP:20261201T080000Z
DTSTART:20261201T150000Z
DTEND:20261201T160000Z
RRULE:FREQ=WEEKLY;COUNT=10
SUMMARY:Choir
END:VEVENT
END:VCALENDAR
"""


def _client(base_url: str, who: DavUser) -> caldav.DAVClient:
    return caldav.DAVClient(url=f"{base_url}/.well-known/caldav", username=who.email, password=who.password)


async def blocking(function: Any, *args: Any) -> Any:
    """The caldav library blocks; it runs in a thread while this loop serves its requests."""
    return await asyncio.to_thread(function, *args)


async def test_discovery_and_an_event_from_the_phone_appears_in_plmail(base_url: str, owner: DavUser,
                                                                       services: Services) -> None:
    def discover_and_save() -> tuple[list[str], str]:
        principal = _client(base_url, owner).principal()
        calendars = principal.calendars()
        default = calendars[0]
        default.save_event(PHONE_EVENT)
        return [str(c.url) for c in calendars], str(default.url)

    urls, default_url = await blocking(discover_and_save)
    assert default_url.startswith(f"{base_url}/dav/{owner.user.id}/calendars/")
    assert len(urls) == 1  # the user's own calendar, no account has one yet

    stored = await services.calendar.objects.events_of(owner.user.id, None, limit=10)
    assert [(e.uid, e.values.title, e.values.location, e.values.time_zone) for e in stored] == [
        ("phone-1@example.org", "Dentist", "Hauptstr. 1", "Europe/Berlin")]
    assert stored[0].values.starts_at == datetime(2026, 12, 10, 8, tzinfo=UTC)  # 09:00 in Berlin, winter time


async def test_an_event_made_in_plmail_appears_on_the_phone_and_a_phone_edit_makes_it_the_persons(
        base_url: str, owner: DavUser, services: Services) -> None:
    event_id = await services.calendar.editor.create(owner.user.id, EventForm(
        title="Team lunch", start=date(2026, 12, 11), end=date(2026, 12, 12), all_day=True), user_zone="Europe/Berlin")

    def read_and_edit() -> str:
        calendar = _client(base_url, owner).principal().calendars()[0]
        events = calendar.events()
        assert len(events) == 1
        event = events[0]
        text = str(event.data)
        event.vobject_instance.vevent.summary.value = "Team lunch (moved)"
        event.save()
        return text

    text = await blocking(read_and_edit)
    assert "SUMMARY:Team lunch" in text and "DTSTART;VALUE=DATE:20261211" in text
    stored = await services.calendar.objects.events_of(owner.user.id, [event_id], limit=1)
    assert stored[0].values.title == "Team lunch (moved)"
    assert stored[0].is_user_edited  # the seed: an event a person edited on any device is theirs


async def test_a_range_query_finds_a_series_by_its_instances_and_expands_them(base_url: str, owner: DavUser) -> None:
    def search() -> tuple[int, int, list[str]]:
        calendar = _client(base_url, owner).principal().calendars()[0]
        calendar.save_event(WEEKLY)
        calendar.save_event(PHONE_EVENT)
        # The series starts 1 December; only its later instances fall in January.
        found = calendar.search(start=datetime(2027, 1, 1, tzinfo=UTC), end=datetime(2027, 1, 20, tzinfo=UTC),
                                event=True)
        expanded = calendar.search(start=datetime(2027, 1, 1, tzinfo=UTC), end=datetime(2027, 1, 20, tzinfo=UTC),
                                   event=True, expand=True)
        starts = [str(e.vobject_instance.vevent.dtstart.value) for e in expanded]
        return len(found), len(expanded), starts

    found, expanded, starts = await blocking(search)

    def by_uid() -> str:
        # The library's calendar-query with a prop-filter on UID (RFC 4791 §9.7.2, text-match).
        calendar = _client(base_url, owner).principal().calendars()[0]
        return str(calendar.event_by_uid("weekly-1@example.org").data)

    assert "SUMMARY:Choir" in await blocking(by_uid)
    assert found == 1  # the series, not the dentist on 10 December
    # RFC 4791 §9.6.5: the instances in the range, in UTC: 5, 12 and 19 January.
    assert expanded == 3 and sorted(starts) == ["2027-01-05 15:00:00+00:00", "2027-01-12 15:00:00+00:00",
                                                "2027-01-19 15:00:00+00:00"]


async def test_sync_collection_answers_what_changed_since_the_token(base_url: str, owner: DavUser,
                                                                    services: Services) -> None:
    def first() -> tuple[Any, str, list[str]]:
        calendar = _client(base_url, owner).principal().calendars()[0]
        calendar.save_event(PHONE_EVENT)
        objects = calendar.objects_by_sync_token(load_objects=True)
        return calendar, str(objects.sync_token), [str(o.url).rsplit("/", 1)[-1] for o in objects]

    calendar, token, names = await blocking(first)
    assert len(names) == 1  # the phone's event, under the name the phone gave it
    event_id = await services.calendar.editor.create(owner.user.id, EventForm(
        title="Made in plmail", start=date(2026, 12, 15), end=date(2026, 12, 16), all_day=True),
        user_zone="Europe/Berlin")

    def since(sync_token: str) -> list[str]:
        changed = calendar.objects_by_sync_token(sync_token=sync_token, load_objects=True)
        return [str(o.data) for o in changed]

    changed = await blocking(since, token)
    assert len(changed) == 1 and "SUMMARY:Made in plmail" in changed[0]  # not the phone's own event again
    assert "X-PLMAIL-SOURCE:manual" in changed[0]

    await services.calendar.editor.delete(owner.user.id, event_id, user_zone="Europe/Berlin")

    def reported(sync_token: str) -> list[str]:
        result = calendar.objects_by_sync_token(sync_token=sync_token, load_objects=False)
        return [str(o.url).rsplit("/", 1)[-1] for o in result]

    # RFC 6578 §3.5.1: the deleted event is still reported (as a 404 response), under the name it was listed by;
    # the phone's own event did not change since the token and is not.
    assert await blocking(reported, token) == [f"{event_id}.ics"]
