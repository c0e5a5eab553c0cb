"""A signed-up reader with an archive account, and helpers that deliver mail and run the extraction job."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from pathlib import Path
from typing import Any

import pytest

from plmail.calendar.service import ExtractionRunReport
from plmail.jobs.calendar import extract_events
from plmail.jobs.context import SERVICES_KEY
from plmail.services import Services
from tests.integration.mail.conftest import Mailbox, loads, mailbox  # noqa: F401  (the fixture, re-exported)

CORPUS = Path(__file__).resolve().parents[4] / "shared" / "corpus"
INVITATIONS = CORPUS / "thunderbird-calendar-invitations" / "browser" / "invitations" / "data"
LIBICAL = CORPUS / "libical-test-data" / "test-data"


def utc(*parts: int) -> datetime:
    return datetime(*parts, tzinfo=UTC)


def invitation(name: str) -> bytes:
    return (INVITATIONS / name).read_bytes()


@dataclass(frozen=True)
class Diary:
    """The reader's mail and calendar, as the tests drive and inspect them."""

    box: Mailbox

    @property
    def services(self) -> Services:
        return self.box.services

    @property
    def user_id(self) -> int:
        return self.box.user.id

    async def deliver(
        self, *raws: bytes, arrivals: Sequence[datetime] | None = None, start: datetime | None = None,
        account_id: int | None = None,
    ) -> list[int]:
        """One pipeline batch; message i arrives ``arrivals[i]`` (default: a minute apart from ``start``)."""
        first = start or utc(2022, 3, 1, 8)
        times = list(arrivals) if arrivals is not None else [first + timedelta(minutes=i) for i in range(len(raws))]
        batch = [self.box.message(raw, received_at=when, account_id=account_id) for raw, when in zip(raws, times,
                                                                                                     strict=True)]
        result = await self.services.pipeline.ingest(batch)
        return [m.id for m in result.messages]

    async def extract(self, ids: Sequence[int], *, user_id: int | None = None) -> dict[str, int]:
        """The job the step enqueues, run in this process with this process's services."""
        return await extract_events({SERVICES_KEY: self.services}, user_id=user_id or self.user_id,
                                    message_ids=list(ids))

    async def receive(self, *raws: bytes, **kwargs: Any) -> list[int]:
        """Deliver each message in its own batch and extract it, in order: mail arriving over time."""
        ids: list[int] = []
        start = kwargs.pop("start", None) or utc(2022, 3, 1, 8)
        for index, raw in enumerate(raws):
            delivered = await self.deliver(raw, arrivals=[start + timedelta(hours=index)], **kwargs)
            await self.extract(delivered)
            ids += delivered
        return ids

    async def events(self, user_id: int | None = None) -> list[dict[str, Any]]:
        rows = await self.services.db.fetch(
            "SELECT * FROM calendar_event WHERE user_id = $1 ORDER BY id", user_id or self.user_id
        )
        return [{**dict(r), "recurrence": loads(r["recurrence"]), "attendees": loads(r["attendees"]),
                 "organizer": loads(r["organizer"])} for r in rows]

    async def only_event(self) -> dict[str, Any]:
        events = await self.events()
        assert len(events) == 1, [(e["uid"], e["title"]) for e in events]
        return events[0]

    async def occurrences(self, event_id: int) -> list[tuple[datetime, datetime, bool, bool]]:
        rows = await self.services.db.fetch(
            "SELECT starts_at, ends_at, cancelled, is_override FROM calendar_event_occurrence WHERE event_id = $1 "
            "ORDER BY recurrence_id", event_id,
        )
        return [(r["starts_at"], r["ends_at"], r["cancelled"], r["is_override"]) for r in rows]

    async def links(self, event_id: int) -> list[tuple[int, str, bool]]:
        rows = await self.services.db.fetch(
            "SELECT message_id, extractor, applied FROM event_source_link WHERE event_id = $1 ORDER BY message_id",
            event_id,
        )
        return [(r["message_id"], r["extractor"], r["applied"]) for r in rows]


@pytest.fixture
def diary(mailbox: Mailbox) -> Diary:  # noqa: F811
    return Diary(mailbox)


def report_count(report: ExtractionRunReport | dict[str, int], key: str) -> int:
    return report.get(key, 0) if isinstance(report, dict) else report.outcomes.get(key, 0)


def invite(
    uid: str,
    *,
    sequence: int = 0,
    start: datetime | None = None,
    minutes: int = 60,
    title: str = "Planning",
    method: str = "REQUEST",
    rrule: str | None = None,
    recurrence_id: datetime | None = None,
    attendee: str = "reader@example.org",
    partstat: str = "NEEDS-ACTION",
    message_id: str | None = None,
    location: str = "Room 1",
) -> bytes:
    """An iTIP mail as calendar servers send it: text/plain beside a text/calendar part."""
    when = start or utc(2026, 4, 1, 9)
    stamp = "%Y%m%dT%H%M%SZ"
    lines = ["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//plmail tests//EN", f"METHOD:{method}", "BEGIN:VEVENT",
             f"UID:{uid}", f"SEQUENCE:{sequence}", f"DTSTAMP:{when.strftime(stamp)}"]
    if method != "CANCEL" or recurrence_id is not None or start is not None:
        lines += [f"DTSTART:{when.strftime(stamp)}", f"DTEND:{(when + timedelta(minutes=minutes)).strftime(stamp)}"]
    if recurrence_id is not None:
        lines.append(f"RECURRENCE-ID:{recurrence_id.strftime(stamp)}")
    if rrule:
        lines.append(f"RRULE:{rrule}")
    lines += [f"SUMMARY:{title}", f"LOCATION:{location}", "ORGANIZER;CN=Boss:mailto:boss@example.com",
              f"ATTENDEE;PARTSTAT={partstat};ROLE=REQ-PARTICIPANT:mailto:{attendee}"]
    if method == "CANCEL":
        lines.append("STATUS:CANCELLED")
    lines += ["END:VEVENT", "END:VCALENDAR"]
    return calendar_mail("\r\n".join(lines), method=method, subject=title, date=when - timedelta(days=7),
                         sender=attendee if method == "REPLY" else "boss@example.com", message_id=message_id)


def calendar_mail(
    ics: str, *, method: str = "REQUEST", subject: str = "Invitation", date: datetime | None = None,
    sender: str = "boss@example.com", message_id: str | None = None,
) -> bytes:
    boundary = "inv-boundary"
    headers = [f"From: {sender}", "To: reader@example.org", f"Subject: {subject}",
               f"Date: {format_datetime(date or utc(2026, 3, 1))}", "MIME-Version: 1.0"]
    if message_id:
        headers.append(f"Message-ID: <{message_id}>")
    return "\r\n".join([
        *headers, f'Content-Type: multipart/alternative; boundary="{boundary}"', "", f"--{boundary}",
        "Content-Type: text/plain; charset=utf-8", "", subject, f"--{boundary}",
        f"Content-Type: text/calendar; charset=utf-8; method={method}", "", ics, f"--{boundary}--", "",
    ]).encode("utf-8")
