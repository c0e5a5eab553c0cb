"""JMAP Calendars writable (issue 34, draft-ietf-jmap-calendars): CalendarEvent/set create, update and destroy of
JSCalendar events (RFC 8984) and Calendar/set, as raw JMAP requests over HTTP through the ASGI app (jmapc has no
calendar types). Each write shows in /get, /changes and the web calendar page; bad input is an RFC 8620 §5.3
SetError for that object alone."""

from __future__ import annotations

from typing import Any

import httpx

from tests.integration.calendar.conftest import invite
from tests.integration.jmap.conftest import CORE, JmapBox, make_box
from tests.support.web import sign_in

CALENDARS = "urn:ietf:params:jmap:calendars"
USING = [CORE, CALENDARS]


async def call(box: JmapBox, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return await box.call(name, {"accountId": box.primary, **arguments}, using=USING)


async def default_calendar(box: JmapBox) -> str:
    calendars = await call(box, "Calendar/get", {"ids": None})
    return str(next(c["id"] for c in calendars["list"] if c["isDefault"]))


def dentist(calendar_id: str, **extra: Any) -> dict[str, Any]:
    return {"@type": "Event", "calendarIds": {calendar_id: True}, "title": "Dentist", "description": "Bring the card",
            "start": "2027-05-12T09:30:00", "timeZone": "Europe/Berlin", "duration": "PT45M",
            "locations": {"loc": {"@type": "Location", "name": "Praxis Dr. Zahn"}}, **extra}


async def week_page(box: JmapBox, client: httpx.AsyncClient) -> str:
    return (await client.get("/calendar?view=week&day=2027-05-12")).text


async def test_an_event_made_moved_and_removed_over_jmap(box: JmapBox, client: httpx.AsyncClient) -> None:
    calendar = await default_calendar(box)
    calendar_state = (await call(box, "Calendar/get", {"ids": []}))["state"]
    made = await call(box, "CalendarEvent/set", {"create": {"d1": dentist(calendar)}})
    event_id = made["created"]["d1"]["id"]
    assert made["created"]["d1"]["uid"]  # the server made the UID the client left out (RFC 8620 §5.3)
    assert made["newState"] != made["oldState"]

    got = (await call(box, "CalendarEvent/get", {"ids": [event_id]}))["list"][0]
    assert (got["title"], got["start"], got["timeZone"], got["duration"], got["calendarIds"]) == (
        "Dentist", "2027-05-12T09:30:00", "Europe/Berlin", "PT45M", {calendar: True})
    assert got["utcStart"] == "2027-05-12T07:30:00Z"  # Berlin is UTC+2 in May (CEST)
    assert got["locations"]["1"]["name"] == "Praxis Dr. Zahn" and got["description"] == "Bring the card"
    assert (await sign_in(client, box.user.email, "correct horse")).status_code == 200
    assert "Dentist" in await week_page(box, client)

    moved = await call(box, "CalendarEvent/set", {"ifInState": made["newState"], "update": {
        event_id: {"start": "2027-05-12T11:00:00"}}})
    assert moved["updated"] == {event_id: None}
    changes = await call(box, "CalendarEvent/changes", {"sinceState": made["newState"]})
    assert changes["updated"] == [event_id] and changes["created"] == [] and changes["destroyed"] == []
    calendar_changes = await call(box, "Calendar/changes", {"sinceState": calendar_state})
    assert calendar_changes["newState"] == calendar_state  # an event's change is no calendar's change
    again = (await call(box, "CalendarEvent/get", {"ids": [event_id]}))["list"][0]
    assert again["start"] == "2027-05-12T11:00:00" and again["duration"] == "PT45M"
    assert again["title"] == "Dentist"  # a patch changes what it names, nothing else
    # The person moved it: mail no longer rewrites it (reconciler rule 5).
    assert await box.services.db.fetchval("SELECT is_user_edited FROM calendar_event WHERE id = $1", int(event_id))

    gone = await call(box, "CalendarEvent/set", {"destroy": [event_id]})
    assert gone["destroyed"] == [event_id]
    after = await call(box, "CalendarEvent/get", {"ids": [event_id]})
    assert after["notFound"] == [event_id] and after["list"] == []
    assert (await call(box, "CalendarEvent/changes", {"sinceState": moved["newState"]}))["destroyed"] == [event_id]
    assert "Dentist" not in await week_page(box, client)


async def test_all_day_recurring_and_participants_round_trip(box: JmapBox) -> None:
    calendar = await default_calendar(box)
    made = await call(box, "CalendarEvent/set", {"create": {
        "trip": {"calendarIds": {calendar: True}, "title": "Holiday", "start": "2027-07-01T00:00:00",
                 "showWithoutTime": True, "duration": "P3D", "uid": "holiday-2027@phone"},
        "yoga": {"calendarIds": {calendar: True}, "title": "Yoga", "start": "2027-06-07T18:00:00",
                 "timeZone": "Europe/Berlin", "duration": "PT1H", "status": "tentative",
                 "recurrenceRules": [{"@type": "RecurrenceRule", "frequency": "weekly", "count": 4}],
                 "recurrenceOverrides": {"2027-06-14T18:00:00": {"excluded": True}}}}})
    trip, yoga = made["created"]["trip"]["id"], made["created"]["yoga"]["id"]
    assert "uid" not in made["created"]["trip"]  # the client's own UID is kept, so not repeated back
    events = {e["id"]: e for e in (await call(box, "CalendarEvent/get", {"ids": [trip, yoga]}))["list"]}
    assert (events[trip]["uid"], events[trip]["showWithoutTime"], events[trip]["start"], events[trip]["duration"]) \
        == ("holiday-2027@phone", True, "2027-07-01T00:00:00", "P3D")
    assert events[yoga]["status"] == "tentative"
    assert events[yoga]["recurrenceRules"] == [{"@type": "RecurrenceRule", "frequency": "weekly", "count": 4}]
    assert events[yoga]["recurrenceOverrides"] == {"2027-06-14T18:00:00": {"excluded": True}}
    occurrences = await box.services.db.fetchval(
        "SELECT count(*) FROM calendar_event_occurrence WHERE event_id = $1 AND NOT cancelled", int(yoga))
    assert occurrences == 3  # four weeks, one left out

    # A guest without an address cannot be invited; the whole update is refused and nothing changes.
    refused = await call(box, "CalendarEvent/set", {"update": {yoga: {
        "participants": {"p1": {"@type": "Participant", "name": "Nobody", "roles": {"attendee": True}}},
        "title": "Yin yoga"}}})
    assert refused["notUpdated"][yoga]["type"] == "invalidProperties"
    assert refused["notUpdated"][yoga]["properties"] == ["participants/p1"]
    assert (await call(box, "CalendarEvent/get", {"ids": [yoga]}))["list"][0]["title"] == "Yoga"


async def test_bad_writes_are_set_errors_for_that_object_alone(box: JmapBox, client: httpx.AsyncClient) -> None:
    calendar = await default_calendar(box)
    other = await make_box(box.services, client, email="other@example.org")
    theirs = await default_calendar(other)
    state = (await call(box, "CalendarEvent/get", {"ids": []}))["state"]
    result = await call(box, "CalendarEvent/set", {"create": {
        "ok": dentist(calendar),
        "badStart": dentist(calendar, start="2027-05-32T09:30:00"),
        "badZone": dentist(calendar, timeZone="Mars/Olympus_Mons"),
        "theirs": dentist(theirs),
        "alerts": dentist(calendar, alerts={"a": {"@type": "Alert", "trigger": {"@type": "OffsetTrigger",
                                                                                 "offset": "-PT15M"}}}),
        "serverSet": dentist(calendar, id="12"),
        "huge": dentist(calendar, description="x" * 200_000),
        "longTitle": dentist(calendar, title="T" * 501),
        "tooEarly": dentist(calendar, start="1850-05-12T09:30:00"),  # before the account's minDateTime
    }, "update": {"999999": {"title": "Ghost"}}, "destroy": ["999998", "not-an-id"]})
    assert list(result["created"]) == ["ok"]  # one bad object never costs the others
    refused = result["notCreated"]
    # RFC 8620 §5.3: invalidProperties names the properties at fault
    assert (refused["badStart"]["type"], refused["badStart"]["properties"]) == ("invalidProperties", ["start"])
    assert (refused["badZone"]["type"], refused["badZone"]["properties"]) == ("invalidProperties", ["timeZone"])
    assert refused["theirs"]["type"] == "forbidden"  # another user's calendar
    assert (refused["alerts"]["type"], refused["alerts"]["properties"]) == ("invalidProperties", ["alerts"])
    assert (refused["serverSet"]["type"], refused["serverSet"]["properties"]) == ("invalidProperties", ["id"])
    assert refused["huge"]["type"] == "tooLarge"
    assert refused["longTitle"]["properties"] == ["title"]  # refused, never cut short
    assert refused["tooEarly"]["properties"] == ["start"]
    assert result["notUpdated"]["999999"]["type"] == "notFound"
    assert {k: v["type"] for k, v in result["notDestroyed"].items()} == {"999998": "notFound",
                                                                          "not-an-id": "notFound"}
    assert await other.services.db.fetchval(
        "SELECT count(*) FROM calendar_event WHERE calendar_id = $1", int(theirs)) == 0

    # Another user's event is not there for this user: neither to change nor to remove.
    their_event = (await call(other, "CalendarEvent/set", {"create": {"x": dentist(theirs)}}))["created"]["x"]["id"]
    foreign = await call(box, "CalendarEvent/set", {"update": {their_event: {"title": "Mine"}},
                                                    "destroy": [their_event]})
    assert foreign["notUpdated"][their_event]["type"] == "notFound"
    assert foreign["notDestroyed"][their_event]["type"] == "notFound"
    mine = result["created"]["ok"]["id"]
    moved = await call(box, "CalendarEvent/set", {"update": {
        mine: {"calendarIds": {theirs: True}}, }})
    assert moved["notUpdated"][mine]["type"] == "forbidden"
    patch = await call(box, "CalendarEvent/set", {"update": {mine: {"locations/nowhere/name": "X"}}})
    assert patch["notUpdated"][mine]["type"] == "invalidPatch"  # a path through nothing (RFC 8620 §5.3)

    other_calendar = await call(box, "Calendar/set", {"update": {theirs: {"name": "Mine"}}, "destroy": [theirs]})
    assert other_calendar["notUpdated"][theirs]["type"] == "notFound"
    assert other_calendar["notDestroyed"][theirs]["type"] == "notFound"
    assert (await call(other, "Calendar/get", {"ids": [theirs]}))["list"][0]["name"] == "Calendar"

    stale = await box.error("CalendarEvent/set", {"accountId": box.primary, "ifInState": state,
                                                  "create": {"late": dentist(calendar)}}, using=USING)
    assert stale["type"] == "stateMismatch"
    count = await box.services.db.fetchval("SELECT count(*) FROM calendar_event WHERE user_id = $1", box.user.id)
    assert count == 1


async def test_an_invitation_from_mail_edited_over_jmap_keeps_its_source(box: JmapBox) -> None:
    """The seed: what a person changes is theirs; the event's source (and so its trust) is not rewritten."""
    result = await box.ingest(invite("keep@x", title="From mail"))
    await box.services.calendar.extraction.run(box.user.id, [m.id for m in result.messages])
    (event_id,) = (await call(box, "CalendarEvent/query", {}))["ids"]
    source = await box.services.db.fetchval("SELECT source FROM calendar_event WHERE id = $1", int(event_id))
    done = await call(box, "CalendarEvent/set", {"update": {event_id: {"description": "Bring slides"}}})
    assert done["updated"] == {event_id: None}
    row = await box.services.db.fetchrow("SELECT source, is_user_edited, description FROM calendar_event "
                                         "WHERE id = $1", int(event_id))
    assert (row["source"], row["is_user_edited"], row["description"]) == (source, True, "Bring slides")


async def test_calendars_made_renamed_and_removed(box: JmapBox) -> None:
    default = await default_calendar(box)
    session = (await box.http.get("/.well-known/jmap", headers=box.headers, follow_redirects=True)).json()
    capability = session["accounts"][box.primary]["accountCapabilities"][CALENDARS]
    assert capability["mayCreateCalendar"] is True and capability["maxCalendarsPerEvent"] == 1

    state = (await call(box, "Calendar/get", {"ids": []}))["state"]
    made = await call(box, "Calendar/set", {"create": {
        "work": {"name": "Work", "color": "#4e9a06", "sortOrder": 5},
        "club": {"name": "Club"},
        "nameless": {"color": "red"},
        "shared": {"name": "Shared", "shareWith": {"someone": {"mayReadItems": True}}}}})
    work, club = made["created"]["work"]["id"], made["created"]["club"]["id"]
    assert made["notCreated"]["nameless"]["properties"] == ["name"]
    assert made["notCreated"]["shared"]["properties"] == ["shareWith"]
    assert made["created"]["club"]["isDefault"] is False and made["created"]["club"]["myRights"]["mayDelete"]
    listed = {c["id"]: c for c in (await call(box, "Calendar/get", {"ids": [work, club]}))["list"]}
    assert (listed[work]["name"], listed[work]["color"], listed[work]["sortOrder"]) == ("Work", "#4e9a06", 5)

    renamed = await call(box, "Calendar/set", {"ifInState": made["newState"], "update": {work: {
        "name": "Office", "color": "#cc0000", "isVisible": False, "description": "9 to 5"}}})
    assert renamed["updated"] == {work: None}
    since_made = await call(box, "Calendar/changes", {"sinceState": made["newState"]})
    assert (since_made["created"], since_made["updated"], since_made["destroyed"]) == ([], [work], [])
    refused = await call(box, "Calendar/set", {"update": {work: {"name": " ", "sortOrder": -1, "isDefault": True}}})
    assert sorted(refused["notUpdated"][work]["properties"]) == ["isDefault", "name", "sortOrder"]
    office = (await call(box, "Calendar/get", {"ids": [work]}))["list"][0]
    assert (office["name"], office["color"], office["isVisible"], office["description"]) == (
        "Office", "#cc0000", False, "9 to 5")
    changes = await call(box, "Calendar/changes", {"sinceState": state})
    assert set(changes["created"]) == {work, club} and changes["updated"] == []  # made and changed since: created

    meeting = (await call(box, "CalendarEvent/set", {"create": {"m": dentist(work)}}))["created"]["m"]["id"]
    events_state = (await call(box, "CalendarEvent/get", {"ids": []}))["state"]
    calendars_state = (await call(box, "Calendar/get", {"ids": []}))["state"]
    kept = await call(box, "Calendar/set", {"destroy": [work, club, default]})
    assert kept["destroyed"] == [club]  # an empty calendar goes
    assert kept["notDestroyed"][work]["type"] == "calendarHasEvent"  # the draft: not without onDestroyRemoveEvents
    assert kept["notDestroyed"][default]["type"] == "forbidden"
    assert "default" in kept["notDestroyed"][default]["description"]

    removed = await call(box, "Calendar/set", {"destroy": [work], "onDestroyRemoveEvents": True})
    assert removed["destroyed"] == [work]
    assert (await call(box, "CalendarEvent/get", {"ids": [meeting]}))["notFound"] == [meeting]
    assert (await call(box, "CalendarEvent/changes", {"sinceState": events_state}))["destroyed"] == [meeting]
    assert set((await call(box, "Calendar/changes", {"sinceState": calendars_state}))["destroyed"]) == {work, club}
    stale = await box.error("Calendar/set", {"accountId": box.primary, "ifInState": state,
                                             "create": {"late": {"name": "Late"}}}, using=USING)
    assert stale["type"] == "stateMismatch"
