"""Hostile iCalendar files (issue 39): the 783-byte recurrence bomb and the VTIMEZONE bomb."""

from __future__ import annotations

ATTACK_BYTES = 783  # the size the security round measured


def _numbers(low: int, high: int) -> str:
    return ",".join(str(n) for n in range(low, high + 1))


def recurrence_bomb(tag: str = "1") -> bytes:
    """One YEARLY rule with COUNT=1000000 and BYMONTH x BYMONTHDAY x BYHOUR x BYMINUTE x BYSECOND, starting on
    the last second of a year: dateutil tries 31 million times of day before it yields the second instance.

    ``tag`` (one character) tells copies apart by UID without changing the size."""
    assert len(tag) == 1
    rule = (f"RRULE:FREQ=YEARLY;COUNT=1000000;BYMONTH={_numbers(1, 12)};BYMONTHDAY={_numbers(1, 31)};"
            f"BYHOUR={_numbers(0, 23)};BYMINUTE={_numbers(0, 59)};BYSECOND={_numbers(0, 59)}")
    lines = ["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//x//x//EN", "BEGIN:VEVENT", f"UID:bomb-{tag}@x.example",
             "DTSTAMP:20260101T000000Z", "DTSTART:20261231T235959Z", "SUMMARY:Bomb", rule, "END:VEVENT",
             "END:VCALENDAR"]
    data = ("\r\n".join(lines) + "\r\n").encode()
    return data if len(data) == ATTACK_BYTES else _pad(data)


def _pad(data: bytes) -> bytes:
    """Brings the file to exactly ATTACK_BYTES with a DESCRIPTION, so the test attacks with the measured size."""
    head, tail = data.split(b"SUMMARY:Bomb\r\n")
    spare = ATTACK_BYTES - len(data) - len(b"DESCRIPTION:\r\n")
    assert spare >= 0, len(data)
    return head + b"SUMMARY:Bomb\r\nDESCRIPTION:" + b"x" * spare + b"\r\n" + tail


def vtimezone_bomb(events: int = 200, *, tag: str = "tz") -> bytes:
    """A VTIMEZONE whose two rules name a transition every day from 1601 to 2038 (320,000 of them), and
    ``events`` daily events in that zone, 2,000 to a VCALENDAR (the parser's limit per calendar)."""
    zone = ["BEGIN:VTIMEZONE", "TZID:Bomb Standard Time", "BEGIN:STANDARD", "DTSTART:16010101T000000",
            f"RRULE:FREQ=YEARLY;BYMONTH={_numbers(1, 12)};BYMONTHDAY={_numbers(1, 31)}",
            "TZOFFSETFROM:+0100", "TZOFFSETTO:+0000", "TZNAME:BST", "END:STANDARD", "BEGIN:DAYLIGHT",
            "DTSTART:16010101T010000", f"RRULE:FREQ=YEARLY;BYMONTH={_numbers(1, 12)};BYMONTHDAY={_numbers(1, 31)}",
            "TZOFFSETFROM:+0000", "TZOFFSETTO:+0100", "TZNAME:BDT", "END:DAYLIGHT", "END:VTIMEZONE"]
    head = ("\r\n".join(["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//x//x//EN", *zone]) + "\r\n").encode()
    tail = b"END:VCALENDAR\r\n"
    calendars: list[bytes] = []
    for first in range(0, events, 2_000):
        body = b"".join(
            ("\r\n".join(["BEGIN:VEVENT", f"UID:{tag}-{n}@x.example", "DTSTAMP:20260101T000000Z",
                           "DTSTART;TZID=Bomb Standard Time:20260101T090000",
                           "DTEND;TZID=Bomb Standard Time:20260101T100000", f"SUMMARY:Daily {n}",
                           "RRULE:FREQ=DAILY", "END:VEVENT"]) + "\r\n").encode()
            for n in range(first, min(first + 2_000, events))
        )
        calendars.append(head + body + tail)
    return b"".join(calendars)
