"""One booking, one event: two mails about the same reservation from one issuer (a mail subdomain and the
apex, markup and plain text) reconcile into one event with both messages linked, whichever arrives first.
Also KItinerary through the real job, and its absence shown on the admin page."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest

from plmail.app import create_app
from plmail.calendar.extraction.kitinerary_engine import find_kitinerary
from plmail.config import Settings
from plmail.domain.enums import LabelRole, ProviderKind
from plmail.services import Services, open_services
from tests.conftest import running_lifespan
from tests.integration.calendar.conftest import Diary, utc
from tests.integration.mail.conftest import Mailbox
from tests.support.mail import make_message
from tests.support.repos import account_rows
from tests.support.web import sign_in, sign_up_admin
from tests.unit.calendar.corpus import KITINERARY_EXTRACTORDATA, kitinerary_mail

needs_binary = pytest.mark.skipif(find_kitinerary() is None, reason="kitinerary-extractor is not installed")


def hotel(number: str, checkin: str, name: str = "Hotel Adler") -> dict[str, Any]:
    return {"@context": "https://schema.org", "@type": "LodgingReservation", "reservationNumber": number,
            "checkinTime": checkin, "checkoutTime": "2027-05-03T11:00:00+02:00",
            "reservationFor": {"@type": "LodgingBusiness", "name": name}}


def markup_mail(booking: dict[str, Any], *, sender: str, subject: str) -> bytes:
    html = (f'<html><head><script type="application/ld+json">{json.dumps(booking)}</script></head>'
            "<body><p>Thank you</p></body></html>")
    return make_message(subject=subject, sender=sender, to=["reader@example.org"], html=html, body="Thank you")


@pytest.mark.parametrize("subdomain_first", [True, False])
async def test_a_confirmation_and_a_change_from_subdomain_and_apex_are_one_event(
    diary: Diary, subdomain_first: bool
) -> None:
    confirmation = markup_mail(hotel("HB-4711", "2027-05-01T15:00:00+02:00"),
                               sender="Hotel <noreply@mail.hotel-adler.example>", subject="Booking confirmed")
    change = markup_mail(hotel("HB-4711", "2027-05-01T18:00:00+02:00", "Hotel Adler (late arrival)"),
                         sender="Hotel <service@hotel-adler.example>", subject="Booking changed")
    first, second = (confirmation, change) if subdomain_first else (change, confirmation)
    ids = await diary.receive(first, second, start=utc(2027, 4, 1, 8))
    event = await diary.only_event()
    # Rule 2: the later arrival wins, whichever of the two it is.
    expected_start = utc(2027, 5, 1, 16) if subdomain_first else utc(2027, 5, 1, 13)
    assert event["starts_at"] == expected_start
    links = await diary.links(event["id"])
    assert [link for link in links if link[1] == "structured_data"] == [(ids[0], "structured_data", True),
                                                                         (ids[1], "structured_data", True)]
    # KItinerary reads the same markup where it is installed: the same key, so a superseded duplicate.
    assert all(not applied for _, extractor, applied in links if extractor == "kitinerary")


async def test_different_companies_with_the_same_number_stay_apart(diary: Diary) -> None:
    await diary.receive(
        markup_mail(hotel("AB1234", "2027-05-01T15:00:00+02:00"), sender="a@hotel-adler.example", subject="Booking"),
        markup_mail(hotel("AB1234", "2027-05-01T15:00:00+02:00", "Other"), sender="b@other-inn.example",
                    subject="Booking"),
        start=utc(2027, 4, 1, 8),
    )
    assert len(await diary.events()) == 2


SWISS_TEXT = KITINERARY_EXTRACTORDATA / "swiss" / "swiss_one-leg-return.txt"


def swiss_markup() -> bytes:
    """The outbound leg of the same booking (XXX007, LX 963 on 10 Sep 2017) as the airline's JSON-LD."""
    leg = {"@type": "FlightReservation", "reservationNumber": "XXX007", "reservationFor": {
        "@type": "Flight", "flightNumber": "963", "airline": {"@type": "Airline", "iataCode": "LX"},
        "departureAirport": {"@type": "Airport", "name": "Berlin Tegel", "iataCode": "TXL"},
        "arrivalAirport": {"@type": "Airport", "name": "Zürich", "iataCode": "ZRH"},
        "departureTime": "2017-09-10T06:45:00+02:00", "arrivalTime": "2017-09-10T08:15:00+02:00"}}
    return markup_mail(leg, sender="SWISS <booking@notifications.swiss.com>", subject="Your flight")


@needs_binary
@pytest.mark.parametrize("text_first", [True, False])
async def test_kitinerary_and_markup_agree_on_one_booking_in_either_order(diary: Diary, text_first: bool) -> None:
    text = kitinerary_mail(SWISS_TEXT, subject="Ihre Buchungsbestätigung")
    mails = (text, swiss_markup()) if text_first else (swiss_markup(), text)
    ids = await diary.receive(*mails, start=utc(2017, 8, 28, 8))
    events = await diary.events()
    assert sorted(e["starts_at"] for e in events) == [utc(2017, 9, 10, 4, 45), utc(2017, 9, 15, 18, 50)]
    outbound = next(e for e in events if e["starts_at"] == utc(2017, 9, 10, 4, 45))
    text_id, markup_id = (ids[0], ids[1]) if text_first else (ids[1], ids[0])
    links = await diary.links(outbound["id"])
    assert {(message, extractor) for message, extractor, applied in links if applied} == {
        (text_id, "kitinerary"), (markup_id, "structured_data")}
    # KItinerary also reads the markup mail: the same key, filed as the loser beside the sender's own markup.
    assert {(message, extractor) for message, extractor, applied in links if not applied} <= {
        (markup_id, "kitinerary")}
    assert outbound["time_zone"] in ("Europe/Berlin", None)  # KItinerary names it; the sender's markup does not


@needs_binary
async def test_a_plain_text_booking_reaches_the_calendar_through_the_step_and_the_job(diary: Diary) -> None:
    now = datetime.now(UTC)
    raw = kitinerary_mail(SWISS_TEXT, subject="Ihre Buchung")
    result = await diary.services.pipeline.ingest([diary.box.message(raw, received_at=now)])
    [message_id] = [m.id for m in result.messages]
    assert await queued_extractions(diary.services) == [[message_id]]
    await diary.extract([message_id])
    events = await diary.events()
    assert len(events) == 2 and {e["time_zone"] for e in events} == {"Europe/Berlin", "Europe/Zurich"}
    assert {e["source"] for e in events} == {"structured_data"}

    # The backfill finds it again by its sender alone, and replaying stored payloads needs no binary.
    backfill = await diary.services.calendar.backfill.run(email="reader@example.org")
    assert backfill.run.messages == 1 and backfill.run.outcomes.get("applied") == 2


async def queued_extractions(services: Services) -> list[list[int]]:
    """The message ids of every extraction job waiting on any queue."""
    found: list[list[int]] = []
    for name, queue in services.queues.queues.items():
        keys = [r["key"] for r in await services.db.fetch("SELECT key FROM saq_jobs WHERE queue = $1", name.value)]
        found += [job.kwargs["message_ids"] for job in await queue.jobs(keys)
                  if job is not None and job.function == "extract_events"]
    return found


@pytest.fixture
async def without_kitinerary(settings: Settings, database_url: str) -> AsyncIterator[tuple[Services, Settings]]:
    chosen = dataclasses.replace(settings, kitinerary="off")
    opened = await open_services(chosen, database_url)
    try:
        yield opened, chosen
    finally:
        await opened.close()


async def test_without_kitinerary_the_admin_page_says_so_and_nothing_fails(
    without_kitinerary: tuple[Services, Settings], database_url: str
) -> None:
    services, chosen = without_kitinerary
    assert services.calendar.kitinerary.available is False
    app = create_app(chosen, database_url, worker_queues=(), services=services)
    transport = httpx.ASGITransport(app=app, client=("203.0.113.7", 40000))
    async with running_lifespan(app):
        async with httpx.AsyncClient(transport=transport, base_url="http://plmail.test",
                                     follow_redirects=True) as admin:
            assert (await sign_up_admin(admin)).status_code == 200
            assert 'hx-get="/calendar/extractors"' in (await admin.get("/admin")).text
            notice = await admin.get("/calendar/extractors")
            assert notice.status_code == 200
            assert "KItinerary" in notice.text and "not installed" in notice.text
            assert "libkpimitinerary-bin" in notice.text
        await services.users.create_user("plain@example.org", "correct horse", time_zone="UTC")
        async with httpx.AsyncClient(transport=transport, base_url="http://plmail.test",
                                     follow_redirects=True) as reader:
            assert (await sign_in(reader, "plain@example.org", "correct horse")).status_code == 200
            assert (await reader.get("/calendar/extractors")).status_code == 403

    # A booking in plain text is simply not read: no job, no failure, no event.
    user = await services.users.create_user("reader@example.org", "correct horse", time_zone="UTC")
    account_id = await account_rows(services).create(user_id=user.id, provider_kind=ProviderKind.LOCAL,
                                                     name="Archive", email="reader@example.org")
    box = Mailbox(services, user, account_id, (await services.labels.role_ids(user.id))[LabelRole.INBOX])
    raw = kitinerary_mail(SWISS_TEXT, subject="Ihre Buchung")
    result = await services.pipeline.ingest([box.message(raw, received_at=datetime.now(UTC))])
    assert await queued_extractions(services) == []
    report = await services.calendar.extraction.run(user.id, [m.id for m in result.messages])
    assert (report.messages, report.claims, report.failed) == (1, 0, [])
