"""The calendar outside plmail: a subscription feed read with `icalendar` gives the events the calendar page
shows (times, all-day, cancelled, a series with a moved and a removed instance); conditional requests; revoked
and wrong tokens; .ics export of an event and a calendar (no METHOD); import with its counts and limits."""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, timedelta
from email.utils import format_datetime

import httpx
from dateutil.rrule import rruleset, rrulestr  # type: ignore[import-untyped]
from icalendar import Calendar

from tests.integration.calendar.conftest import Diary, calendar_mail, invite, utc
from tests.support.web import post_form, sign_in

T0 = utc(2026, 3, 20, 8)


async def signed_in(client: httpx.AsyncClient) -> None:
    assert (await sign_in(client, "reader@example.org", "correct horse")).status_code == 200


async def fill_calendar(diary: Diary) -> None:
    holiday = calendar_mail("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nMETHOD:PUBLISH\r\nBEGIN:VEVENT\r\nUID:holiday@x\r\n"
                            "DTSTART;VALUE=DATE:20260406\r\nDTEND;VALUE=DATE:20260408\r\nSUMMARY:Easter\r\n"
                            "END:VEVENT\r\nEND:VCALENDAR", method="PUBLISH")
    zoned = calendar_mail("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nMETHOD:REQUEST\r\nBEGIN:VEVENT\r\nUID:zoned@x\r\n"
                          "DTSTAMP:20260301T000000Z\r\nDTSTART;TZID=America/New_York:20260407T090000\r\n"
                          "DTEND;TZID=America/New_York:20260407T100000\r\nSUMMARY:New York call\r\n"
                          "ORGANIZER:mailto:boss@example.com\r\nATTENDEE;PARTSTAT=ACCEPTED:mailto:reader@example.org\r\n"
                          "END:VEVENT\r\nEND:VCALENDAR")
    await diary.receive(
        holiday, zoned,
        invite("weekly@x", title="Weekly sync", rrule="FREQ=WEEKLY;COUNT=6", start=utc(2026, 4, 1, 9)),
        invite("weekly@x", sequence=1, title="Weekly sync (moved)", start=utc(2026, 4, 8, 13),
               recurrence_id=utc(2026, 4, 8, 9)),
        invite("weekly@x", sequence=1, method="CANCEL", recurrence_id=utc(2026, 4, 15, 9), start=utc(2026, 4, 15, 9)),
        invite("gone@x", title="Called off", start=utc(2026, 4, 9, 12)),
        invite("gone@x", sequence=1, method="CANCEL"),
        start=T0,
    )


async def subscribe(client: httpx.AsyncClient, calendar_id: int) -> str:
    page = await post_form(client, "/calendar/subscriptions", {"calendar_id": str(calendar_id)},
                           token_from="/calendar/sharing")
    assert page.status_code == 200
    webcal = re.search(r'<code class="feed-url" data-feed-url>(webcal://[^<]+)</code>', page.text)
    https = re.search(r'<code class="feed-https">(http[^<]+)</code>', page.text)
    assert webcal is not None and https is not None
    assert webcal.group(1).removeprefix("webcal://") == https.group(1).split("://", 1)[1]
    token = https.group(1).rsplit("/", 1)[1].removesuffix(".ics")
    assert len(token) >= 59  # a 16-character selector and a 256-bit verifier
    return https.group(1).split("://", 1)[1].split("/", 1)[1]


def expanded(calendar: Calendar) -> dict[str, list[tuple[object, object, str, bool]]]:
    """Every instance the feed describes, per UID, the way any calendar app expands it."""
    masters = {c["uid"]: c for c in calendar.walk("VEVENT") if "RECURRENCE-ID" not in c}
    moved = {(c["uid"], c.decoded("recurrence-id")): c for c in calendar.walk("VEVENT") if "RECURRENCE-ID" in c}
    found: dict[str, list[tuple[object, object, str, bool]]] = {}
    for uid, master in masters.items():
        start, end = master.decoded("dtstart"), master.decoded("dtend")
        starts = [start]
        if "RRULE" in master:
            rules = rruleset()
            rules.rrule(rrulestr(master["rrule"].to_ical().decode(), dtstart=start))
            exdates = master.get("exdate")
            for group in exdates if isinstance(exdates, list) else [exdates] if exdates else []:
                for value in group.dts:
                    rules.exdate(value.dt)
            starts = list(rules)
        rows = []
        for begin in starts:
            component = moved.get((uid, begin), master)
            own_start = component.decoded("dtstart") if component is not master else begin
            length = component.decoded("dtend") - own_start if component is not master else end - start
            rows.append((own_start, own_start + length, str(component["summary"]),
                         str(component.get("status")) == "CANCELLED"))
        found[str(uid)] = rows
    return found


async def test_a_subscription_shows_the_calendar_page_and_honours_etags_and_revocation(
    client: httpx.AsyncClient, diary: Diary
) -> None:
    await fill_calendar(diary)
    await signed_in(client)
    calendar_id = int(await diary.services.db.fetchval("SELECT id FROM calendar WHERE is_default"))
    path = await subscribe(client, calendar_id)
    phone = httpx.AsyncClient(transport=client._transport, base_url="http://plmail.test")  # no session cookie
    feed = await phone.get(path)
    assert feed.status_code == 200, feed.text
    assert feed.headers["content-type"].startswith("text/calendar")
    etag, modified = feed.headers["etag"], feed.headers["last-modified"]
    calendar = Calendar.from_ical(feed.content)
    assert "METHOD" not in calendar
    instances = expanded(calendar)

    # The same as the pages: every instance the calendar stores, with its times, title and status.
    stored = await diary.services.db.fetch(
        """SELECT e.uid, e.title, e.status, e.is_all_day, o.starts_at, o.ends_at, o.cancelled, o.title AS own
             FROM calendar_event_occurrence o JOIN calendar_event e ON e.id = o.event_id ORDER BY o.starts_at""")
    for row in stored:
        rows = instances[row["uid"]]
        if row["is_all_day"]:
            expected = (row["starts_at"].date(), row["ends_at"].date())
        else:
            expected = (row["starts_at"], row["ends_at"])
        match = [r for r in rows if (r[0], r[1]) == expected]
        assert match, (row["uid"], expected, rows)
        assert match[0][3] == (row["cancelled"] or row["status"] == "cancelled")
    assert sum(len(rows) for rows in instances.values()) == len(stored)
    assert instances["holiday@x"] == [(date(2026, 4, 6), date(2026, 4, 8), "Easter", False)]
    assert instances["gone@x"][0][3] is True  # STATUS:CANCELLED, kept, not deleted
    weekly = instances["weekly@x"]
    assert (utc(2026, 4, 8, 13), utc(2026, 4, 8, 14), "Weekly sync (moved)", False) in [
        (a.astimezone(UTC), b.astimezone(UTC), t, c) for a, b, t, c in weekly]  # type: ignore[union-attr]
    assert all(start.astimezone(UTC) != utc(2026, 4, 15, 9) or cancelled  # type: ignore[union-attr]
               for start, _, _, cancelled in weekly)
    zoned = next(c for c in calendar.walk("VEVENT") if c["uid"] == "zoned@x")
    assert zoned["dtstart"].params["TZID"] == "America/New_York" and calendar.walk("VTIMEZONE")
    week = await client.get("/calendar?view=week&day=2026-04-06")
    assert "Weekly sync (moved)" in week.text and "<s>Called off</s>" in week.text and "Easter" in week.text

    # Conditional requests: nothing changed, nothing sent.
    assert (await phone.get(path, headers={"If-None-Match": etag})).status_code == 304
    assert (await phone.get(path, headers={"If-Modified-Since": modified})).status_code == 304
    past = format_datetime(datetime.now(UTC) - timedelta(days=400), usegmt=True)
    assert (await phone.get(path, headers={"If-Modified-Since": past})).status_code == 200
    event_id = int(await diary.services.db.fetchval("SELECT id FROM calendar_event WHERE uid = 'holiday@x'"))
    await diary.services.calendar.suppressor.not_an_event(diary.user_id, event_id)  # a delete changes the ETag
    changed = await phone.get(path, headers={"If-None-Match": etag})
    assert changed.status_code == 200 and changed.headers["etag"] != etag and b"Easter" not in changed.content

    # A wrong token and a revoked one are both simply not there.
    token = path.rsplit("/", 1)[1].removesuffix(".ics")
    assert (await phone.get(f"/calendar/feed/{token[:16]}{'A' * (len(token) - 16)}.ics")).status_code == 404
    assert (await phone.get("/calendar/feed/nothing-like-a-token.ics")).status_code == 404
    settings = await client.get("/calendar/sharing")
    subscription = re.search(r'data-subscription-id="(\d+)"', settings.text)
    assert subscription is not None
    revoked = await post_form(client, f"/calendar/subscriptions/{subscription.group(1)}/revoke", {},
                              token_from="/calendar/sharing")
    assert revoked.status_code == 200
    assert (await phone.get(path)).status_code == 404
    await phone.aclose()


async def test_export_of_an_event_and_a_calendar_and_import_with_counts(
    client: httpx.AsyncClient, diary: Diary
) -> None:
    await fill_calendar(diary)
    await signed_in(client)
    event_id = int(await diary.services.db.fetchval("SELECT id FROM calendar_event WHERE uid = 'weekly@x'"))
    one = await client.get(f"/calendar/event/{event_id}/export.ics")
    assert one.status_code == 200 and "attachment" in one.headers["content-disposition"]
    parsed = Calendar.from_ical(one.content)
    assert "METHOD" not in parsed and {str(c["uid"]) for c in parsed.walk("VEVENT")} == {"weekly@x"}
    calendar_id = int(await diary.services.db.fetchval("SELECT id FROM calendar WHERE is_default"))
    whole = await client.get(f"/calendar/{calendar_id}/export.ics")
    assert {str(c["uid"]) for c in Calendar.from_ical(whole.content).walk("VEVENT")} == {
        "holiday@x", "zoned@x", "weekly@x", "gone@x"}

    # Into another calendar: everything is new there.
    assert (await client.get("/calendar/sharing")).status_code == 200  # the account's calendar exists from here on
    other = int(await diary.services.db.fetchval("SELECT id FROM calendar WHERE NOT is_default"))
    page = await upload(client, whole.content, other)
    assert "Imported: 4 added, 0 updated, 0 skipped." in page.text
    assert await diary.services.db.fetchval("SELECT count(*) FROM calendar_event WHERE calendar_id = $1", other) == 4
    again = await upload(client, whole.content, other)
    assert "Imported: 0 added, 0 updated, 4 skipped." in again.text and "unchanged" in again.text
    newer = whole.content.replace(b"SUMMARY:Easter", b"SUMMARY:Easter holidays").replace(
        b"UID:holiday@x", b"UID:holiday@x\r\nX-PLMAIL-TEST:1")
    updated = await upload(client, newer, other)
    assert "Imported: 0 added, 1 updated, 3 skipped." in updated.text
    assert await diary.services.db.fetchval(
        "SELECT title FROM calendar_event WHERE calendar_id = $1 AND uid = 'holiday@x'", other) == "Easter holidays"

    too_big = await upload(client, b"BEGIN:VCALENDAR\r\n" + b"X" * (4 * 1024 * 1024) + b"\r\nEND:VCALENDAR", other)
    assert too_big.status_code == 400 and "larger than 4 MB" in too_big.text
    junk = await upload(client, b"this is a shopping list", other)
    assert junk.status_code == 400 and "not an iCalendar" in junk.text
    assert await diary.services.db.fetchval("SELECT count(*) FROM calendar_event WHERE calendar_id = $1", other) == 4


async def upload(client: httpx.AsyncClient, data: bytes, calendar_id: int) -> httpx.Response:
    token = client.cookies.get("plmail_csrf")
    assert token
    return await client.post("/calendar/import", files={"file": ("cal.ics", data, "text/calendar")},
                             data={"calendar_id": str(calendar_id), "_csrf_token": token})
