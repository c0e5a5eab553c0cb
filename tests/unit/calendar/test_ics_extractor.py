"""The iCalendar extractor on the cases the seed names: times, zones, recurrence, cancels, broken bytes."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest

from plmail.calendar.extraction import (
    CalendarPart,
    EventKind,
    EventStatus,
    ExtractedEvent,
    ExtractionContext,
    IcsEventExtractor,
    ics_dedup_key,
    parse_ics,
)
from plmail.calendar.extraction.claims import jscalendar
from plmail.calendar.recurrence import materialise_occurrences
from tests.unit.calendar.corpus import KHAL

REFERENCE = datetime(2024, 1, 1, tzinfo=UTC)


def utc(*parts: int) -> datetime:
    return datetime(*parts, tzinfo=UTC)


def calendar(*events: str, method: str | None = "REQUEST", extra: str = "") -> str:
    head = "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//test//EN\r\n" + (f"METHOD:{method}\r\n" if method else "")
    return (
        head
        + extra
        + "".join(f"BEGIN:VEVENT\r\n{body.strip()}\r\nEND:VEVENT\r\n" for body in events)
        + "END:VCALENDAR\r\n"
    )


def one(text: str | bytes, **kwargs: object) -> ExtractedEvent:
    result = parse_ics(text, **kwargs)  # type: ignore[arg-type]
    assert len(result.events) == 1, (result.events, result.skipped)
    return result.events[0]


async def extract(*parts: bytes) -> list[ExtractedEvent]:
    ctx = ExtractionContext(
        calendar_parts=tuple(CalendarPart("text/calendar", part, part_id=i) for i, part in enumerate(parts))
    )
    extractor = IcsEventExtractor()
    assert extractor.supports(ctx)
    return await extractor.extract(ctx)


def test_extractor_constants() -> None:
    extractor = IcsEventExtractor()
    assert (extractor.name, extractor.priority(), extractor.stops_cascade(), extractor.CONFIDENCE) == (
        "ics",
        100,
        True,
        100,
    )
    assert IcsEventExtractor.NAME == "ics"
    assert not extractor.supports(ExtractionContext())


def test_timed_event_without_end_gets_a_nominal_hour() -> None:
    event = one(calendar("UID:a\r\nDTSTART:20240301T090000Z\r\nSUMMARY:x"))
    assert (event.start, event.end, event.all_day) == (utc(2024, 3, 1, 9), utc(2024, 3, 1, 10), False)


def test_duration_is_used_when_there_is_no_dtend() -> None:
    event = one(calendar("UID:a\r\nDTSTART:20240301T090000Z\r\nDURATION:PT2H30M"))
    assert event.end == utc(2024, 3, 1, 11, 30)


def test_all_day_event_without_end_lasts_one_day() -> None:
    event = one(calendar("UID:a\r\nDTSTART;VALUE=DATE:20240301\r\nSUMMARY:Holiday"))
    assert (event.start, event.end, event.all_day, event.time_zone) == (date(2024, 3, 1), date(2024, 3, 2), True, None)
    assert jscalendar(event)["showWithoutTime"] is True and jscalendar(event)["duration"] == "P1D"


def test_khal_all_day_and_no_end_files() -> None:
    all_day = one((KHAL / "event_d_no_value.ics").read_bytes())
    assert (all_day.start, all_day.end, all_day.all_day) == (date(2014, 4, 9), date(2014, 4, 10), True)
    no_end = one((KHAL / "event_dt_no_end.ics").read_bytes())
    assert (no_end.start, no_end.end) == (utc(2016, 1, 16, 7), utc(2016, 1, 16, 8))


@pytest.mark.parametrize(
    ("tzid", "zone", "start"),
    [
        ("W. Europe Standard Time", "Europe/Berlin", utc(2024, 7, 1, 7)),
        ("Pacific Standard Time", "America/Los_Angeles", utc(2024, 7, 1, 16)),
        ("Europe/Berlin", "Europe/Berlin", utc(2024, 7, 1, 7)),
        ("/freeassociation.sourceforge.net/Tzfile/Europe/Berlin", "Europe/Berlin", utc(2024, 7, 1, 7)),
        ("America_New_York", "America/New_York", utc(2024, 7, 1, 13)),
    ],
)
def test_zone_names_become_iana(tzid: str, zone: str, start: datetime) -> None:
    event = one(calendar(f"UID:a\r\nDTSTART;TZID={tzid}:20240701T090000"))
    assert (event.time_zone, event.start) == (zone, start)


def test_windows_zone_wins_over_a_nonsense_vtimezone() -> None:
    # khal's fixture defines "New Zealand Standard Time" with CET offsets; the name means Auckland.
    event = one((KHAL / "tz_windows_format.ics").read_bytes())
    assert (event.time_zone, event.start) == ("Pacific/Auckland", utc(2019, 11, 20, 0))


VTIMEZONE = """BEGIN:VTIMEZONE\r
TZID:Customized Time Zone\r
BEGIN:STANDARD\r
DTSTART:16010101T000000\r
TZOFFSETFROM:{offset}\r
TZOFFSETTO:{offset}\r
END:STANDARD\r
END:VTIMEZONE\r
"""


def test_custom_zones_are_read_per_calendar_not_from_a_shared_cache() -> None:
    """icalendar caches VTIMEZONEs process-wide by TZID; two senders' "Customized Time Zone" differ."""
    body = "UID:{uid}\r\nDTSTART;TZID=Customized Time Zone:20240701T090000"
    plus_five = one(calendar(body.format(uid="a"), extra=VTIMEZONE.format(offset="+0500")))
    minus_three = one(calendar(body.format(uid="b"), extra=VTIMEZONE.format(offset="-0300")))
    assert plus_five.start == utc(2024, 7, 1, 4) and minus_three.start == utc(2024, 7, 1, 12)
    assert plus_five.time_zone is None and minus_three.time_zone is None  # no IANA zone was named


def test_unknown_tzid_without_definition_stays_floating() -> None:
    event = one(calendar("UID:a\r\nDTSTART;TZID=Mars/Olympus:20240701T090000"))
    assert event.start == datetime(2024, 7, 1, 9) and event.is_floating and event.time_zone is None


def test_latin1_and_broken_bytes_never_crash() -> None:
    text = calendar("UID:latin\r\nDTSTART:20240301T090000Z\r\nSUMMARY:Rückblick Café\r\nLOCATION:Zürich")
    event = one(text.encode("latin-1"))
    assert (event.title, event.location) == ("Rückblick Café", "Zürich")
    declared = one(text.encode("cp1252"), charset="windows-1252")
    assert declared.title == "Rückblick Café"
    broken = calendar("UID:broken\r\nDTSTART:20240301T090000Z\r\nSUMMARY:ok").encode() + b"\xff\xfe\x00\x80garbage"
    assert one(broken).title == "ok"
    assert parse_ics(b"\x00\xff" * 1000).events == ()
    assert parse_ics(b"").events == ()


def test_utf16_part_with_bom_is_read() -> None:
    event = one(calendar("UID:u16\r\nDTSTART:20240301T090000Z\r\nSUMMARY:Grüße").encode("utf-16"))
    assert event.title == "Grüße"


def test_status_sequence_and_participants() -> None:
    event = one(
        calendar(
            "UID:x\r\nSEQUENCE:4\r\nSTATUS:TENTATIVE\r\nDTSTART:20240301T090000Z\r\n"
            'ORGANIZER;CN="Boss, The":mailto:Boss@Example.com\r\n'
            "ATTENDEE;PARTSTAT=DECLINED;ROLE=OPT-PARTICIPANT;CN=Eve:MAILTO:eve@example.org\r\n"
            "ATTENDEE;PARTSTAT=TENTATIVE:mailto:bob@example.org"
        )
    )
    assert (event.sequence, event.status, event.kind) == (4, EventStatus.TENTATIVE, EventKind.MEETING)
    assert event.organizer is not None and (event.organizer.email, event.organizer.name) == (
        "boss@example.com",
        "Boss, The",
    )
    assert [(a.email, a.name, a.partstat, a.role) for a in event.attendees] == [
        ("eve@example.org", "Eve", "declined", "opt-participant"),
        ("bob@example.org", None, "tentative", None),
    ]
    people = jscalendar(event)["participants"]
    assert isinstance(people, dict) and people["attendee-1"] == {
        "@type": "Participant",
        "roles": {"attendee": True, "optional": True},
        "name": "Eve",
        "email": "eve@example.org",
        "sendTo": {"imip": "mailto:eve@example.org"},
        "participationStatus": "declined",
    }


def test_broken_sequence_and_dtend_cost_only_those_properties() -> None:
    event = one(calendar("UID:x\r\nSEQUENCE:abc\r\nDTSTART:19970621T170000Z\r\nDTEND:199706211T173000Z"))
    assert (event.sequence, event.end) == (0, utc(1997, 6, 21, 18))


def test_method_cancel_marks_the_event_cancelled() -> None:
    event = one(calendar("UID:x\r\nSEQUENCE:2\r\nDTSTART:20240301T090000Z", method="CANCEL"))
    assert (event.status, event.sequence, event.instance_only) == (EventStatus.CANCELLED, 2, False)


def test_cancel_naming_a_recurrence_id_cancels_only_that_instance() -> None:
    event = one(
        calendar("UID:series\r\nSEQUENCE:3\r\nRECURRENCE-ID;TZID=Europe/Berlin:20240311T090000", method="CANCEL")
    )
    assert event.instance_only and event.recurrence_overrides == {"2024-03-11T09:00:00": {"status": "cancelled"}}
    assert event.start == utc(2024, 3, 11, 8) and event.time_zone == "Europe/Berlin"


SERIES = (
    "UID:weekly\r\nDTSTART;TZID=Europe/Berlin:20240304T090000\r\nDTEND;TZID=Europe/Berlin:20240304T100000\r\n"
    "SUMMARY:Standup\r\nRRULE:FREQ=WEEKLY;BYDAY=MO;COUNT=6\r\nEXDATE;TZID=Europe/Berlin:20240318T090000"
)


def test_recurring_invitation_with_exception_and_cancelled_instance() -> None:
    moved = (
        "UID:weekly\r\nRECURRENCE-ID;TZID=Europe/Berlin:20240311T090000\r\n"
        "DTSTART;TZID=Europe/Berlin:20240312T140000\r\nDTEND;TZID=Europe/Berlin:20240312T150000\r\nSUMMARY:Standup"
    )
    gone = (
        "UID:weekly\r\nRECURRENCE-ID;TZID=Europe/Berlin:20240325T090000\r\n"
        "DTSTART;TZID=Europe/Berlin:20240325T090000\r\nSTATUS:CANCELLED\r\nSUMMARY:Standup"
    )
    event = one(calendar(SERIES, moved, gone))
    assert event.recurrence_rules == (
        {"@type": "RecurrenceRule", "frequency": "weekly", "byDay": [{"@type": "NDay", "day": "mo"}], "count": 6},
    )
    assert event.excluded_dates == (utc(2024, 3, 18, 8),)
    assert event.recurrence_overrides == {
        "2024-03-11T09:00:00": {"start": "2024-03-12T14:00:00"},
        "2024-03-25T09:00:00": {"status": "cancelled"},
    }
    occurrences = materialise_occurrences(
        event.start or REFERENCE,
        event.end,
        rules=event.recurrence_rules,
        excluded=event.excluded_dates,
        overrides=event.recurrence_overrides,
        time_zone=event.time_zone,
        reference=REFERENCE,
    )
    # Berlin switches to summer time on 31 March: 09:00 local is 08:00 UTC before and 07:00 after.
    assert [(o.start, o.cancelled) for o in occurrences] == [
        (utc(2024, 3, 4, 8), False),
        (utc(2024, 3, 12, 13), False),
        (utc(2024, 3, 25, 8), True),
        (utc(2024, 4, 1, 7), False),
        (utc(2024, 4, 8, 7), False),
    ]


@pytest.mark.parametrize(
    "rule",
    [
        "RSCALE=CHINESE;FREQ=YEARLY;BYMONTH=5L",
        "FREQ=MINUTELY;INTERVAL=15",
        "FREQ=WEEKLY;BYDAY=MO;X-WORKDAYS-ONLY=TRUE",
        "FREQ=MONTHLY;BYMONTH=2;BYMONTHDAY=30,31",
        "FREQ=DAILY;COUNT=5;UNTIL=20240401T000000Z",
        "FREQ=SOMETIMES",
    ],
)
def test_refused_rule_is_kept_verbatim_and_the_event_appears_once(rule: str) -> None:
    event = one(calendar(f"UID:r\r\nDTSTART:20240301T090000Z\r\nRRULE:{rule}"))
    assert event.recurrence_rules == () and event.raw_rrule is not None
    assert rule.split(";")[0] in event.raw_rrule
    occurrences = materialise_occurrences(
        event.start or REFERENCE, event.end, rules=event.recurrence_rules, reference=REFERENCE
    )
    assert [o.start for o in occurrences] == [utc(2024, 3, 1, 9)]
    assert jscalendar(event)["plmail:rrule"] == event.raw_rrule


def test_one_refused_rule_refuses_all_rules_of_the_event() -> None:
    event = one(calendar("UID:r\r\nDTSTART:20240301T090000Z\r\nRRULE:FREQ=WEEKLY\r\nRRULE:FREQ=MINUTELY"))
    assert event.recurrence_rules == () and event.raw_rrule == "FREQ=WEEKLY\nFREQ=MINUTELY"


def test_objects_without_uid_or_start_are_skipped_with_a_reason() -> None:
    result = parse_ics(calendar("DTSTART:20240301T090000Z\r\nSUMMARY:no uid", "UID:x\r\nSUMMARY:no start"))
    assert result.events == ()
    assert sorted(result.skipped) == ["VEVENT without a DTSTART", "VEVENT without a usable UID"]
    assert parse_ics(calendar("UID:x\r\nDTSTART:20240301T090000Z", method="COUNTER")).skipped == (
        "method COUNTER does not state an event",
    )


def test_long_uid_is_keyed_by_its_hash() -> None:
    uid = "x" * 300
    event = one(calendar(f"UID:{uid}\r\nDTSTART:20240301T090000Z"))
    assert event.uid == uid and event.dedup_key == ics_dedup_key(uid) and len(event.dedup_key) == 69
    assert ics_dedup_key("short@example.com") == "ics:short@example.com"


def test_khal_override_and_cancelled_instance() -> None:
    event = one((KHAL / "event_rrule_recuid_cancelled.ics").read_bytes())
    assert event.time_zone == "Europe/Berlin"
    assert event.recurrence_overrides == {
        "2014-07-07T07:00:00": {"start": "2014-07-07T09:00:00"},
        "2014-07-14T07:00:00": {"status": "cancelled"},
    }


def test_khal_instances_without_master_form_one_instance_claim() -> None:
    event = one((KHAL / "event_dt_multi_recuid_no_master.ics").read_bytes())
    assert event.instance_only and len(event.recurrence_overrides) == 2


async def test_same_invitation_in_two_parts_keeps_the_highest_sequence() -> None:
    older = calendar("UID:dup\r\nSEQUENCE:1\r\nDTSTART:20240301T090000Z\r\nSUMMARY:old").encode()
    newer = calendar("UID:dup\r\nSEQUENCE:2\r\nDTSTART:20240301T100000Z\r\nSUMMARY:new").encode()
    events = await extract(older, newer)
    assert [(e.title, e.sequence, e.part_id) for e in events] == [("new", 2, 1)]


async def test_two_uids_in_one_message_are_two_claims() -> None:
    events = await extract(calendar("UID:a\r\nDTSTART:20240301T090000Z", "UID:b\r\nDTSTART:20240302T090000Z").encode())
    assert [e.dedup_key for e in events] == ["ics:a", "ics:b"]
