"""Thunderbird's invitation mails (Google, Outlook, Teams; updates, exceptions, cancels) through the runner.

Each file must give the events and statuses a calendar client would show; expected values come from
the files themselves and from Thunderbird's browser tests beside them.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from plmail.calendar.extraction import (
    EventExtractionRunner,
    EventKind,
    EventStatus,
    ExtractedEvent,
    ExtractionContext,
    ItipMethod,
    calendar_parts_from_mime,
    context_from_mime,
    default_registry,
    is_meeting_message,
)
from plmail.calendar.extraction.text import decode_bytes
from plmail.calendar.recurrence import materialise_occurrences
from tests.unit.calendar.corpus import CORPUS, INVITATIONS, invitation

REFERENCE = datetime(2022, 3, 1, tzinfo=UTC)


def utc(*parts: int) -> datetime:
    return datetime(*parts, tzinfo=UTC)


async def claims(name: str) -> list[ExtractedEvent]:
    result = await EventExtractionRunner(default_registry()).run(context_from_mime(invitation(name)))
    assert result.failures == ()
    return list(result.events)


async def only(name: str) -> ExtractedEvent:
    events = await claims(name)
    assert len(events) == 1, events
    return events[0]


# file, title, UTC start, UTC end, status, sequence, method
CASES = [
    ("single-event.eml", "Single Event", utc(2022, 3, 16, 11), utc(2022, 3, 16, 11, 30), "confirmed", 0, "REQUEST"),
    ("update-minor.eml", "Updated Event", utc(2022, 3, 16, 11), utc(2022, 3, 16, 11, 30), "confirmed", 0, "REQUEST"),
    ("update-major.eml", "Single Event", utc(2022, 3, 16, 5), utc(2022, 3, 16, 5, 30), "confirmed", 2, "REQUEST"),
    (
        "cancel-single-event.eml",
        "Single Event",
        utc(2022, 3, 16, 11),
        utc(2022, 3, 16, 11, 30),
        "cancelled",
        1,
        "CANCEL",
    ),
    ("repeat-event.eml", "Repeat Event", utc(2022, 3, 16, 11), utc(2022, 3, 16, 11, 30), "confirmed", 0, "REQUEST"),
    (
        "repeat-update-minor.eml",
        "Updated Event",
        utc(2022, 3, 16, 11),
        utc(2022, 3, 16, 11, 30),
        "confirmed",
        0,
        "REQUEST",
    ),
    (
        "repeat-update-major.eml",
        "Repeat Event",
        utc(2022, 3, 16, 5),
        utc(2022, 3, 16, 5, 30),
        "confirmed",
        2,
        "REQUEST",
    ),
    (
        "event-with-file-attachment.eml",
        "File Attachment Event",
        utc(2022, 3, 16, 11),
        utc(2022, 3, 16, 11, 30),
        "confirmed",
        0,
        "REQUEST",
    ),
    (
        "meet-meeting-invite.eml",
        "Meeeeet me HTML",
        utc(2021, 3, 22, 9, 30),
        utc(2021, 3, 22, 10, 30),
        "confirmed",
        0,
        "REQUEST",
    ),
    # Exchange 2010 with a Windows zone: 09:00 "FLE Standard Time" in November is 07:00 UTC.
    ("outlook-test-invite.eml", "Testaus", utc(2021, 11, 27, 7), utc(2021, 11, 27, 7, 30), "confirmed", 0, "REQUEST"),
    (
        "teams-meeting-invite.eml",
        "Teams meeting",
        utc(2020, 12, 2, 17),
        utc(2020, 12, 2, 19),
        "confirmed",
        0,
        "REQUEST",
    ),
    # A booking .ics attached with Content-Disposition: attachment: found by content type alone.
    (
        "message-containing-event.eml",
        "Haircut",
        utc(2016, 9, 1, 6, 25),
        utc(2016, 9, 1, 6, 50),
        "confirmed",
        0,
        "PUBLISH",
    ),
    # Thunderbird shows this PUBLISH as an event to add (browser_imipBarEmail "test_event_from_eml").
    (
        "message-non-invite.eml",
        "Party at John's house, Helsinki",
        utc(2021, 11, 29, 8, 55),
        utc(2021, 11, 29, 9),
        "confirmed",
        3,
        "PUBLISH",
    ),
]


@pytest.mark.parametrize(("name", "title", "start", "end", "status", "sequence", "method"), CASES)
async def test_invitation_gives_the_event_a_client_shows(
    name: str, title: str, start: datetime, end: datetime, status: str, sequence: int, method: str
) -> None:
    event = await only(name)
    assert (event.title, event.start, event.end) == (title, start, end)
    assert (event.status.value, event.sequence, event.method) == (status, sequence, ItipMethod(method))
    assert event.extractor == "ics" and event.confidence == 100
    assert event.dedup_key == f"ics:{event.uid}"
    assert event.source_payload["format"] == "text/calendar"
    assert f"UID:{event.uid[:20]}" in str(event.source_payload["ical"]).replace("\r\n ", "")


async def test_every_update_of_one_invitation_shares_its_identity() -> None:
    names = ["single-event.eml", "update-minor.eml", "update-major.eml", "cancel-single-event.eml"]
    keys = {(await only(name)).dedup_key for name in names}
    assert keys == {"ics:02e79b96"}


async def test_windows_zone_names_become_iana_zones() -> None:
    outlook = await only("outlook-test-invite.eml")
    teams = await only("teams-meeting-invite.eml")
    # CLDR's windowsZones maps "FLE Standard Time" to Kyiv (same rules as Helsinki).
    assert outlook.time_zone in {"Europe/Kiev", "Europe/Kyiv"} and teams.time_zone == outlook.time_zone
    helsinki = await only("message-non-invite.eml")
    assert helsinki.time_zone == "Europe/Helsinki"


async def test_google_meet_invite_in_two_parts_is_one_event_with_attendees() -> None:
    event = await only("meet-meeting-invite.eml")
    assert event.uid == "65m17hsdolmotv3kvmrtg40ont@google.com"
    assert event.kind is EventKind.MEETING
    assert event.organizer is not None and event.organizer.email == "example@gmail.com"
    assert [(a.email, a.partstat, a.role) for a in event.attendees] == [
        ("example@gmail.com", "accepted", "req-participant"),
        ("homer@example.com", "needs-action", "req-participant"),
    ]
    assert event.location is None  # LOCATION: was empty
    assert event.description is not None and "https://meet.google.com/pyb-ndcu-hhc" in event.description


async def test_teams_invite_keeps_its_partstats_and_description() -> None:
    event = await only("teams-meeting-invite.eml")
    assert event.organizer is not None and (event.organizer.email, event.organizer.name) == (
        "marge@example.com",
        "Marge",
    )
    assert {a.email for a in event.attendees} == {"bart@example.com", "homer@example.com"}
    assert all(a.partstat == "needs-action" for a in event.attendees)
    assert event.description is not None and "Microsoft Teams -kokous" in event.description


async def test_daily_series_expands_to_three_occurrences() -> None:
    event = await only("repeat-event.eml")
    assert event.recurrence_rules == (
        {"@type": "RecurrenceRule", "frequency": "daily", "firstDayOfWeek": "su", "count": 3},
    )
    occurrences = materialise_occurrences(
        event.start or REFERENCE,
        event.end,
        rules=event.recurrence_rules,
        time_zone=event.time_zone,
        reference=REFERENCE,
    )
    assert [o.start for o in occurrences] == [utc(2022, 3, 16, 11), utc(2022, 3, 17, 11), utc(2022, 3, 18, 11)]
    assert all(o.end - o.start == (utc(2022, 3, 16, 11, 30) - utc(2022, 3, 16, 11)) for o in occurrences)


async def test_exception_minor_changes_only_the_one_instance() -> None:
    event = await only("exception-minor.eml")
    assert event.instance_only and event.sequence == 0
    assert event.recurrence_overrides == {
        "2022-03-17T11:00:00": {
            "duration": "PT30M",
            "title": "Exception title",
            "location": "Exception location",
            "description": "Exception description",
        }
    }
    assert event.status is EventStatus.CONFIRMED


async def test_exception_major_moves_the_instance() -> None:
    event = await only("exception-major.eml")
    assert event.instance_only and event.sequence == 2
    patch = event.recurrence_overrides["2022-03-17T11:00:00"]
    assert patch["start"] == "2022-03-17T05:00:00"
    # Applied to the series it belongs to, the instance moves and the other two stay.
    series = await only("repeat-event.eml")
    occurrences = materialise_occurrences(
        series.start or REFERENCE,
        series.end,
        rules=series.recurrence_rules,
        overrides=event.recurrence_overrides,
        reference=REFERENCE,
    )
    assert [(o.recurrence_id, o.start, o.is_override) for o in occurrences] == [
        (utc(2022, 3, 16, 11), utc(2022, 3, 16, 11), False),
        (utc(2022, 3, 17, 11), utc(2022, 3, 17, 5), True),
        (utc(2022, 3, 18, 11), utc(2022, 3, 18, 11), False),
    ]


async def test_cancel_of_a_series_without_dtstart_still_cancels_it() -> None:
    event = await only("cancel-repeat-event.eml")
    assert (event.status, event.method, event.sequence) == (EventStatus.CANCELLED, ItipMethod.CANCEL, 1)
    assert event.start is None and not event.instance_only
    assert event.excluded_dates == (utc(2022, 3, 17, 11),)
    assert event.raw_rrule is None and event.recurrence_rules == ()


async def test_outlook_invite_stored_without_parts_is_read_from_raw_mime() -> None:
    """Graph has no part for the text/calendar section: the raw MIME is fetched, once, for flagged messages."""
    calls: list[str] = []
    raw = invitation("outlook-test-invite.eml")

    async def load() -> bytes | None:
        calls.append("load")
        return raw

    flagged = ExtractionContext(
        sender="marge@example.org", headers={"meetingMessageType": "meetingRequest"}, raw_mime_loader=load
    )
    result = await EventExtractionRunner(default_registry()).run(flagged)
    assert [e.title for e in result.events] == ["Testaus"] and calls == ["load"]

    ordinary = ExtractionContext(sender="marge@example.org", headers={"Subject": "lunch?"}, raw_mime_loader=load)
    assert not is_meeting_message(ordinary)
    assert (await EventExtractionRunner(default_registry()).run(ordinary)).events == ()
    assert calls == ["load"]  # never fetched for a message that does not say it is a meeting


@pytest.mark.parametrize(
    "headers",
    [
        {"X-MS-Exchange-Calendar-Series-Instance-Id": "BAAAAIIA"},
        {"Content-Class": "urn:content-classes:calendarmessage"},
        {"X-MICROSOFT-CDO-OWNERAPPTID": "-720128027"},
    ],
)
def test_exchange_headers_flag_a_meeting_message(headers: dict[str, str]) -> None:
    assert is_meeting_message(ExtractionContext(headers=headers))


def test_latin1_calendar_bytes_are_read_as_written() -> None:
    latin1 = (CORPUS / "thunderbird-calendar-invitations" / "unit" / "data" / "importLatin1.ics").read_bytes()
    utf8 = (CORPUS / "thunderbird-calendar-invitations" / "unit" / "data" / "import.ics").read_bytes()
    assert "SUMMARY:Event Två" in decode_bytes(latin1)
    assert "SUMMARY:Event Två" in decode_bytes(utf8)


def test_every_invitation_file_is_covered() -> None:
    covered = {case[0] for case in CASES} | {
        "exception-minor.eml",
        "exception-major.eml",
        "cancel-repeat-event.eml",
    }
    assert covered == {path.name for path in INVITATIONS.glob("*.eml")}


def test_calendar_sections_are_found_by_content_type_alone() -> None:
    meet = calendar_parts_from_mime(invitation("meet-meeting-invite.eml"))
    assert [part.content_type for part in meet] == ["text/calendar", "application/ics"]  # inline, then attachment
    attached = calendar_parts_from_mime(invitation("message-containing-event.eml"))
    assert len(attached) == 1 and b"SUMMARY:Haircut" in attached[0].data
    assert calendar_parts_from_mime(b"Subject: hi\r\n\r\nno parts") == ()


def test_hostile_mime_nesting_is_bounded() -> None:
    depth = 5_000
    raw = b"".join(b'Content-Type: multipart/mixed; boundary="b%d"\r\n\r\n--b%d\r\n' % (i, i) for i in range(depth))
    raw += b"Content-Type: text/calendar\r\n\r\nBEGIN:VCALENDAR\r\nEND:VCALENDAR\r\n"
    assert calendar_parts_from_mime(raw) == ()  # deeper than the parser goes: found nothing, raised nothing
    assert context_from_mime(raw).calendar_parts == ()
