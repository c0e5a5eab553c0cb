"""Real invitations through the real pipeline and the extraction job: the end state a calendar client shows.

Thunderbird's invitation mails (one UID across single-event and series scenarios, so each scenario is a
test of its own) and libical's RFC 2446 examples, each VCALENDAR sent as its own mail, in order.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import pytest

from tests.integration.calendar.conftest import LIBICAL, Diary, invitation, utc

UID = "02e79b96"


async def test_single_event_updates_minor_then_major_and_a_late_lower_cancel_is_filed(diary: Diary) -> None:
    ids = await diary.receive(invitation("single-event.eml"), invitation("update-minor.eml"))
    event = await diary.only_event()
    assert (event["uid"], event["title"], event["sequence"], event["status"]) == (UID, "Updated Event", 0,
                                                                                   "confirmed")
    assert (event["starts_at"], event["ends_at"]) == (utc(2022, 3, 16, 11), utc(2022, 3, 16, 11, 30))
    assert (event["source"], event["kind"], event["confidence"]) == ("ics", "meeting", 100)

    ids += await diary.receive(invitation("update-major.eml"), invitation("cancel-single-event.eml"),
                               start=utc(2022, 3, 2, 8))
    event = await diary.only_event()
    assert (event["title"], event["sequence"], event["status"]) == ("Single Event", 2, "confirmed")
    assert (event["starts_at"], event["ends_at"]) == (utc(2022, 3, 16, 5), utc(2022, 3, 16, 5, 30))
    assert await diary.occurrences(event["id"]) == [(utc(2022, 3, 16, 5), utc(2022, 3, 16, 5, 30), False, False)]
    # The cancel carries SEQUENCE 1 after SEQUENCE 2: an older revision, filed with applied = false.
    assert await diary.links(event["id"]) == [(ids[0], "ics", True), (ids[1], "ics", True), (ids[2], "ics", True),
                                              (ids[3], "ics", False)]


async def test_cancel_sets_the_status_marks_the_occurrence_and_deletes_nothing(diary: Diary) -> None:
    ids = await diary.receive(invitation("single-event.eml"), invitation("cancel-single-event.eml"))
    event = await diary.only_event()
    assert (event["status"], event["sequence"], event["title"]) == ("cancelled", 1, "Single Event")
    assert await diary.occurrences(event["id"]) == [(utc(2022, 3, 16, 11), utc(2022, 3, 16, 11, 30), True, False)]
    assert await diary.links(event["id"]) == [(ids[0], "ics", True), (ids[1], "ics", True)]


async def test_daily_series_with_minor_and_major_exceptions(diary: Diary) -> None:
    await diary.receive(invitation("repeat-event.eml"))
    event = await diary.only_event()
    assert event["recurrence"]["recurrenceRules"] == [
        {"@type": "RecurrenceRule", "frequency": "daily", "firstDayOfWeek": "su", "count": 3}]
    thirty = timedelta(minutes=30)
    days = [utc(2022, 3, d, 11) for d in (16, 17, 18)]
    assert await diary.occurrences(event["id"]) == [(d, d + thirty, False, False) for d in days]

    await diary.receive(invitation("exception-minor.eml"), start=utc(2022, 3, 2))
    event = await diary.only_event()
    assert event["recurrence"]["recurrenceOverrides"]["2022-03-17T11:00:00"]["title"] == "Exception title"
    assert [o[3] for o in await diary.occurrences(event["id"])] == [False, True, False]

    await diary.receive(invitation("exception-major.eml"), start=utc(2022, 3, 3))
    event = await diary.only_event()
    assert event["sequence"] == 2  # the instance's revision is the series' revision now
    moved = utc(2022, 3, 17, 5)
    assert await diary.occurrences(event["id"]) == [
        (days[0], days[0] + thirty, False, False), (moved, moved + thirty, False, True),
        (days[2], days[2] + thirty, False, False)]


async def test_series_updates_minor_and_major(diary: Diary) -> None:
    await diary.receive(invitation("repeat-event.eml"), invitation("repeat-update-minor.eml"))
    event = await diary.only_event()
    assert (event["title"], event["sequence"]) == ("Updated Event", 0)
    await diary.receive(invitation("repeat-update-major.eml"), start=utc(2022, 3, 2))
    event = await diary.only_event()
    assert (event["title"], event["sequence"]) == ("Repeat Event", 2)
    assert [o[0] for o in await diary.occurrences(event["id"])] == [utc(2022, 3, d, 5) for d in (16, 17, 18)]


async def test_series_cancel_without_a_start_cancels_every_occurrence(diary: Diary) -> None:
    await diary.receive(invitation("repeat-event.eml"), invitation("cancel-repeat-event.eml"))
    event = await diary.only_event()
    assert (event["status"], event["sequence"]) == ("cancelled", 1)
    occurrences = await diary.occurrences(event["id"])
    assert len(occurrences) == 3 and all(cancelled for _, _, cancelled, _ in occurrences)


@pytest.mark.parametrize(
    ("name", "title", "start", "end", "kind"),
    [
        ("meet-meeting-invite.eml", "Meeeeet me HTML", utc(2021, 3, 22, 9, 30), utc(2021, 3, 22, 10, 30), "meeting"),
        ("outlook-test-invite.eml", "Testaus", utc(2021, 11, 27, 7), utc(2021, 11, 27, 7, 30), "meeting"),
        ("teams-meeting-invite.eml", "Teams meeting", utc(2020, 12, 2, 17), utc(2020, 12, 2, 19), "meeting"),
        ("message-containing-event.eml", "Haircut", utc(2016, 9, 1, 6, 25), utc(2016, 9, 1, 6, 50), "meeting"),
        ("message-non-invite.eml", "Party at John's house, Helsinki", utc(2021, 11, 29, 8, 55),
         utc(2021, 11, 29, 9), "meeting"),
        ("event-with-file-attachment.eml", "File Attachment Event", utc(2022, 3, 16, 11),
         utc(2022, 3, 16, 11, 30), "meeting"),
    ],
)
async def test_google_outlook_teams_and_published_events_land_on_the_calendar(
    diary: Diary, name: str, title: str, start: datetime, end: datetime, kind: str
) -> None:
    await diary.receive(invitation(name))
    event = await diary.only_event()
    assert (event["title"], event["starts_at"], event["ends_at"], event["kind"]) == (title, start, end, kind)
    assert event["status"] == "confirmed"
    assert await diary.occurrences(event["id"]) == [(start, end, False, False)]


def _rfc2446_mail(index: int, ics: str) -> bytes:
    method = next((line.split(":", 1)[1].strip() for line in ics.splitlines() if line.startswith("METHOD:")), "")
    boundary = "itip-boundary"
    return "\r\n".join([
        "From: organizer@example.com", "To: reader@example.org", f"Subject: RFC 2446 example {index}",
        f"Date: {format_datetime(datetime(1997, 6, 1, tzinfo=UTC) + timedelta(hours=index))}",
        f"Message-ID: <rfc2446-{index}@example.com>", "MIME-Version: 1.0",
        f'Content-Type: multipart/mixed; boundary="{boundary}"', "", f"--{boundary}",
        "Content-Type: text/plain; charset=utf-8", "", "See the calendar part.", f"--{boundary}",
        f"Content-Type: text/calendar; charset=utf-8; method={method}", "", ics.strip(), f"--{boundary}--", "",
    ]).encode("utf-8")


@pytest.fixture(scope="module")
def rfc2446() -> list[bytes]:
    text = (LIBICAL / "2446.ics").read_text()
    chunks = ["BEGIN:VCALENDAR" + chunk for chunk in text.split("BEGIN:VCALENDAR")[1:]]
    return [_rfc2446_mail(index, chunk) for index, chunk in enumerate(chunks)]


async def test_rfc2446_published_game_revisions_end_at_sequence_three(diary: Diary, rfc2446: list[bytes]) -> None:
    # PUBLISH s0, PUBLISH s1, CANCEL s2, PUBLISH s3 (moved to 2 July), then an unrelated s0 under the same UID.
    ids = await diary.receive(*rfc2446[0:5], start=utc(1997, 6, 1))
    event = await diary.only_event()
    assert (event["sequence"], event["status"], event["starts_at"]) == (3, "confirmed", utc(1997, 7, 2, 21))
    assert event["time_zone"] == "America/Chicago"
    assert await diary.links(event["id"]) == [(ids[0], "ics", True), (ids[1], "ics", True), (ids[2], "ics", True),
                                              (ids[3], "ics", True), (ids[4], "ics", False)]


async def test_rfc2446_request_reply_and_cancel(diary: Diary, rfc2446: list[bytes]) -> None:
    ids = await diary.receive(rfc2446[5], rfc2446[6], rfc2446[17], rfc2446[18], start=utc(1997, 6, 1))
    event = await diary.only_event()
    assert (event["title"], event["status"], event["sequence"]) == ("Conference", "cancelled", 1)
    partstats = {a["email"]: a["partstat"] for a in event["attendees"]}
    assert partstats["a@example.com"] == "accepted" and partstats["b@example.com"] == "accepted"  # from the REPLY
    assert [cancelled for _, _, cancelled, _ in await diary.occurrences(event["id"])] == [True]
    assert [applied for _, _, applied in await diary.links(event["id"])] == [True] * 4
    assert [mid for mid, _, _ in await diary.links(event["id"])] == ids


async def test_rfc2446_series_one_instance_cancelled_then_the_whole_series(
    diary: Diary, rfc2446: list[bytes]
) -> None:
    await diary.receive(rfc2446[25], rfc2446[27], start=utc(1997, 5, 20))
    event = await diary.only_event()
    occurrences = await diary.occurrences(event["id"])
    assert len(occurrences) == 16
    assert [(start, cancelled) for start, _, cancelled, _ in occurrences[:4]] == [
        (utc(1997, 6, 1, 21), False), (utc(1997, 7, 1, 21), False), (utc(1997, 8, 1, 21), True),
        (utc(1997, 9, 1, 21), False)]
    assert event["status"] == "confirmed"  # an instance's cancel never speaks for the series

    await diary.receive(rfc2446[28], start=utc(1997, 5, 21))
    event = await diary.only_event()
    occurrences = await diary.occurrences(event["id"])
    assert event["status"] == "cancelled" and len(occurrences) == 16
    assert all(cancelled for _, _, cancelled, _ in occurrences)
