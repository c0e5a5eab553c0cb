"""The step queues the job; the job reads parts, raw HTML and raw MIME; backfills replay to the same state."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from typing import Any

from plmail.calendar.service import ReplaySource
from plmail.config import Settings
from plmail.domain.enums import QueueName
from plmail.domain.ingest import IngestedMessage
from plmail.mail.mime import parse_mime
from tests.integration.calendar.conftest import Diary, invitation, invite, utc
from tests.support.mail import make_message

BOOKING = {
    "@context": "http://schema.org", "@type": "FlightReservation", "reservationNumber": "RXJ34P",
    "reservationStatus": "http://schema.org/ReservationConfirmed",
    "underName": {"@type": "Person", "name": "Eva Green"},
    "reservationFor": {
        "@type": "Flight", "flightNumber": "110", "airline": {"@type": "Airline", "name": "United", "iataCode": "UA"},
        "departureAirport": {"@type": "Airport", "name": "San Francisco Airport", "iataCode": "SFO"},
        "departureTime": "2026-04-20T20:15:00-08:00",
        "arrivalAirport": {"@type": "Airport", "name": "John F. Kennedy International Airport", "iataCode": "JFK"},
        "arrivalTime": "2026-04-21T04:30:00-05:00",
    },
}


def booking_mail(booking: dict[str, Any] | None = None, *, date: datetime | None = None) -> bytes:
    block = json.dumps(booking or BOOKING)
    html = (f'<html><head><script type="application/ld+json">{block}</script></head>'
            "<body><p>Your flight</p></body></html>")
    return make_message(subject="Your United flight", sender="United <noreply@united.com>",
                        to=["reader@example.org"], html=html, body="Your flight", date=date)


async def test_the_step_queues_recent_candidates_and_the_job_reads_parts_html_and_raw_mime(diary: Diary) -> None:
    now = datetime.now(UTC)
    raws = [invite("step@x", start=now + timedelta(days=3)), make_message(subject="Lunch?"), booking_mail()]
    box = diary.box
    batch = [box.message(raw, received_at=now - timedelta(minutes=5 - i)) for i, raw in enumerate(raws)]
    # Graph keeps no part for the invitation: the stored message has only its meeting header, the raw has it all.
    outlook = invitation("outlook-test-invite.eml")
    stripped = parse_mime(make_message(subject="Testaus", headers={"meetingMessageType": "meetingRequest"}))
    batch.append(IngestedMessage(account_id=box.account_id, parsed=stripped, raw=outlook, received_at=now,
                                 label_ids=(box.inbox,)))
    batch.append(box.message(invite("old@x"), received_at=now - timedelta(days=400)))  # not recent: no job
    result = await diary.services.pipeline.ingest(batch)
    ids = [m.id for m in result.messages]

    queue = diary.services.queues[QueueName.ENRICH]  # an archive account is never live
    keys = [r["key"] for r in await diary.services.db.fetch("SELECT key FROM saq_jobs WHERE queue = 'enrich'")]
    jobs = [job for job in await queue.jobs(keys) if job is not None and job.function == "extract_events"]
    assert len(jobs) == 1
    job = jobs[0]
    assert job.kwargs == {"user_id": diary.user_id, "message_ids": [ids[0], ids[2], ids[3]]}
    assert job.retries == 1  # one attempt: a message that does not parse will not parse on a second one

    report = await diary.extract(job.kwargs["message_ids"])
    assert (report["messages"], report["created"], report["failed"]) == (3, 3, 0)
    events = {e["title"]: e for e in await diary.events()}
    assert set(events) == {"Planning", "Flight UA110 SFO → JFK", "Testaus"}
    flight = events["Flight UA110 SFO → JFK"]
    assert (flight["source"], flight["kind"], flight["confidence"], flight["time_zone"]) == (
        "structured_data", "flight", 90, None)
    assert (flight["starts_at"], flight["ends_at"]) == (utc(2026, 4, 21, 4, 15), utc(2026, 4, 21, 9, 30))
    assert events["Testaus"]["starts_at"] == utc(2021, 11, 27, 7)  # read from the raw MIME


async def test_body_html_is_raw_for_extraction_and_sanitised_for_display(diary: Diary) -> None:
    ids = await diary.deliver(booking_mail(), start=utc(2026, 3, 1))
    row = await diary.services.db.fetchrow("SELECT body_html, body_html_safe FROM message WHERE id = $1", ids[0])
    assert "application/ld+json" in row["body_html"]
    assert "<script" not in row["body_html_safe"] and "RXJ34P" not in row["body_html_safe"]
    await diary.extract(ids)
    event = await diary.only_event()
    assert event["uid"].startswith("jsonld:") and event["title"] == "Flight UA110 SFO → JFK"


async def _snapshot(diary: Diary) -> dict[str, Any]:
    db = diary.services.db
    events = await db.fetch(
        """SELECT uid, calendar_id, sequence, status, title, location, starts_at, ends_at, time_zone, is_all_day,
                  kind, source, confidence, recurrence::text, raw_rrule, my_participation, attendees::text,
                  is_user_edited FROM calendar_event ORDER BY uid""")
    occurrences = await db.fetch(
        """SELECT e.uid, o.recurrence_id, o.starts_at, o.ends_at, o.cancelled, o.is_override
             FROM calendar_event_occurrence o JOIN calendar_event e ON e.id = o.event_id
            ORDER BY e.uid, o.recurrence_id""")
    links = await db.fetch(
        """SELECT e.uid, l.message_id, l.extractor, l.applied, l.dedup_key, l.payload::text, l.message_part_id
             FROM event_source_link l JOIN calendar_event e ON e.id = l.event_id
            ORDER BY e.uid, l.message_id, l.extractor""")
    return {"events": [tuple(r) for r in events], "occurrences": [tuple(r) for r in occurrences],
            "links": [tuple(r) for r in links]}


async def test_backfill_replays_to_the_same_state_from_messages_payloads_and_after_losing_events(
    diary: Diary, settings: Settings, database_url: str
) -> None:
    await diary.receive(invitation("single-event.eml"), invitation("update-minor.eml"), invitation("update-major.eml"),
                        invitation("cancel-single-event.eml"), booking_mail(), invite("weekly@x", rrule="FREQ=WEEKLY"),
                        invite("weekly@x", sequence=1, method="CANCEL", start=utc(2026, 4, 15, 9),
                               recurrence_id=utc(2026, 4, 15, 9)))
    live = await _snapshot(diary)
    links = live["links"]
    assert len(live["events"]) == 3 and [applied for _, _, name, applied, *_ in links if name != "kitinerary"].count(
        False) == 1
    # Where KItinerary is installed it reads the booking markup too: the same key, filed as the superseded duplicate.
    assert all(not applied and key.startswith("jsonld:") for _, _, name, applied, key, *_ in links
               if name == "kitinerary")

    backfill = diary.services.calendar.backfill
    report = await backfill.run(email="reader@example.org")
    assert report.users == 1 and report.run.messages == 7 and not report.run.failed
    assert await _snapshot(diary) == live
    await backfill.run(source=ReplaySource.PAYLOADS)  # no message bytes read at all
    assert await _snapshot(diary) == live

    # Everything the calendar held is gone; the mail is not: replay gives the same calendar back.
    await diary.services.db.execute("DELETE FROM calendar_event")
    await backfill.run()
    assert await _snapshot(diary) == live

    # The command line does the same, in its own process, against the same database and data directory.
    env = {k: v for k, v in os.environ.items() if not k.startswith("PLMAIL_")}
    env.update({"PLMAIL_DATABASE_URL": database_url, "PLMAIL_DATA_DIR": str(settings.data_dir)})
    done = subprocess.run([sys.executable, "-m", "plmail.cli", "backfill", "events", "--user", "reader@example.org"],
                          env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "messages 7" in done.stdout and "failed 0" in done.stdout
    assert await _snapshot(diary) == live


async def test_a_message_whose_parts_are_gone_is_replayed_from_its_payloads(diary: Diary) -> None:
    ids = await diary.receive(invitation("single-event.eml"))
    before = await _snapshot(diary)
    digest = await diary.services.db.fetchval(
        "SELECT sha256 FROM message_part WHERE message_id = $1 AND is_calendar", ids[0])
    await diary.services.db.execute("DELETE FROM blob WHERE digest = $1", digest)  # the part is gone
    report = await diary.services.calendar.backfill.run()
    assert not report.run.failed and report.run.claims == 1
    assert await _snapshot(diary) == before
