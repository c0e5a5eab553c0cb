"""JMAP for Calendars over the ASGI app: the session names the primary account, Calendar/get, CalendarEvent/get
as JSCalendar (RFC 8984), /query by range, /changes after a write and a delete, and /set answering an
invitation (the other writes: test_calendar_writes.py)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from plmail.domain.enums import ProviderKind
from tests.integration.calendar.conftest import invite
from tests.integration.jmap.conftest import CORE, JmapBox
from tests.support.repos import account_rows

CALENDARS = "urn:ietf:params:jmap:calendars"
USING = [CORE, CALENDARS]


def utc(*parts: int) -> datetime:
    return datetime(*parts, tzinfo=UTC)


async def extract(box: JmapBox, *raws: bytes) -> list[int]:
    ids: list[int] = []
    for index, raw in enumerate(raws):
        result = await box.ingest(raw, received_at=utc(2026, 3, 1, 8) + timedelta(hours=index))
        batch = [m.id for m in result.messages]
        await box.services.calendar.extraction.run(box.user.id, batch)
        ids += batch
    return ids


async def test_the_session_names_the_calendars_and_events_read_as_jscalendar(box: JmapBox) -> None:
    session = (await box.http.get("/.well-known/jmap", headers=box.headers, follow_redirects=True)).json()
    assert CALENDARS in session["capabilities"]
    assert session["primaryAccounts"][CALENDARS] == box.primary  # the user's unified account
    assert CALENDARS in session["accounts"][box.primary]["accountCapabilities"]
    assert CALENDARS not in session["accounts"][box.account]["accountCapabilities"]

    await extract(box, invite("weekly@x", title="Weekly sync", rrule="FREQ=WEEKLY;COUNT=4", start=utc(2026, 4, 1, 9)),
                  invite("other@x", title="Far away", start=utc(2026, 9, 1, 9)))
    calendars = await box.call("Calendar/get", {"accountId": box.primary, "ids": None}, using=USING)
    default = next(c for c in calendars["list"] if c["isDefault"])
    assert default["name"] == "Calendar" and default["myRights"]["mayReadItems"] is True

    query = await box.call("CalendarEvent/query", {"accountId": box.primary, "filter": {"after": "2026-04-07T00:00:00Z",
                                                              "before": "2026-04-30T00:00:00Z"}}, using=USING)
    assert len(query["ids"]) == 1  # the series has instances in the range; the September event has none
    got = await box.call("CalendarEvent/get", {"accountId": box.primary, "ids": query["ids"]}, using=USING)
    event = got["list"][0]
    assert (event["@type"], event["uid"], event["title"], event["start"], event["timeZone"], event["duration"]) == (
        "Event", "weekly@x", "Weekly sync", "2026-04-01T09:00:00", "Etc/UTC", "PT1H")
    assert event["calendarIds"] == {default["id"]: True}
    assert event["recurrenceRules"] == [{"@type": "RecurrenceRule", "frequency": "weekly", "count": 4}]
    assert event["locations"]["1"]["name"] == "Room 1"
    organizer = event["participants"]["organizer"]
    assert organizer["roles"] == {"owner": True} and organizer["email"] == "boss@example.com"
    me = next(p for p in event["participants"].values() if p.get("email") == "reader@example.org")
    assert me["participationStatus"] == "needs-action"
    everything = await box.call("CalendarEvent/query", {"accountId": box.primary, }, using=USING)
    assert len(everything["ids"]) == 2

    # Without the capability in `using`, the methods do not exist.
    missing = await box.error("Calendar/get", {"accountId": box.primary})
    assert missing["type"] == "unknownMethod"


async def test_changes_after_a_new_event_and_a_deleted_one(box: JmapBox) -> None:
    await extract(box, invite("first@x", title="First"))
    state = (await box.call("CalendarEvent/get", {"accountId": box.primary, "ids": []}, using=USING))["state"]
    (first_id,) = (await box.call("CalendarEvent/query", {"accountId": box.primary, }, using=USING))["ids"]
    await extract(box, invite("second@x", title="Second", start=utc(2026, 4, 2, 9)))
    await box.services.calendar.suppressor.not_an_event(box.user.id, int(first_id))
    changes = await box.call("CalendarEvent/changes", {"accountId": box.primary, "sinceState": state}, using=USING)
    (second_id,) = (await box.call("CalendarEvent/query", {"accountId": box.primary, }, using=USING))["ids"]
    assert changes["created"] == [second_id] and changes["destroyed"] == [first_id] and changes["updated"] == []
    assert changes["oldState"] == state and changes["newState"] != state and changes["hasMoreChanges"] is False
    none = await box.call("CalendarEvent/changes", {"accountId": box.primary, "sinceState": changes["newState"]},
                          using=USING)
    assert (none["created"], none["updated"], none["destroyed"]) == ([], [], [])
    bad = await box.error("CalendarEvent/changes", {"accountId": box.primary, "sinceState": "99999999"}, using=USING)
    assert bad["type"] == "cannotCalculateChanges"


async def test_set_answers_for_the_user_only_and_only_the_primary_account_has_calendars(box: JmapBox) -> None:
    await extract(box, invite("reply@x", title="Answer me"))
    (event_id,) = (await box.call("CalendarEvent/query", {"accountId": box.primary, }, using=USING))["ids"]
    event = (await box.call("CalendarEvent/get", {"accountId": box.primary, "ids": [event_id]}, using=USING))["list"][0]
    me = next(key for key, p in event["participants"].items() if p.get("email") == "reader@example.org")
    someone = next(key for key, p in event["participants"].items() if p.get("email") == "boss@example.com")
    others = await box.call("CalendarEvent/set", {"accountId": box.primary, "update": {
        event_id: {f"participants/{someone}/participationStatus": "declined"}}}, using=USING)
    assert others["notUpdated"][event_id]["type"] == "forbidden"  # only one's own answer
    odd = await box.call("CalendarEvent/set", {"accountId": box.primary, "update": {
        event_id: {f"participants/{me}/participationStatus": "delegated"}}}, using=USING)
    assert odd["notUpdated"][event_id]["type"] == "invalidProperties"
    done = await box.call("CalendarEvent/set", {"accountId": box.primary, "update": {
        event_id: {f"participants/{me}/participationStatus": "accepted"}}}, using=USING)
    assert done["updated"] == {event_id: None}  # sendSchedulingMessages false: recorded, nothing sent
    assert await box.services.db.fetchval("SELECT count(*) FROM submission") == 0
    # An invitation is the person's to rename (it becomes user-edited); an event without a start is no event.
    title = await box.call("CalendarEvent/set", {"accountId": box.primary, "update": {event_id: {"title": "Mine"}},
                                                 "create": {"n1": {"title": "New"}}}, using=USING)
    assert title["updated"] == {event_id: None}
    assert title["notCreated"]["n1"]["type"] == "invalidProperties" and "start" in title["notCreated"]["n1"][
        "properties"]
    after = (await box.call("CalendarEvent/get", {"accountId": box.primary, "ids": [event_id]}, using=USING))["list"][0]
    assert after["title"] == "Mine" and after["participants"][me]["participationStatus"] == "accepted"
    assert after["participants"][someone]["email"] == "boss@example.com"  # the organiser's people stay theirs

    second = await account_rows(box.services).create(user_id=box.user.id, provider_kind=ProviderKind.LOCAL,
                                                     name="Second", email="second@example.org")
    other = await box.error("Calendar/get", {"accountId": str(second)}, using=USING)
    assert other["type"] == "accountNotSupportedByMethod"
    connected = await box.error("Calendar/get", {"accountId": box.account}, using=USING)
    assert connected["type"] == "accountNotSupportedByMethod"  # a connected account is no diary of its own
