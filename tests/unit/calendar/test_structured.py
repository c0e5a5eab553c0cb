"""schema.org markup to claims: every reservation type, status, keys, issuers, times and syntaxes."""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, date, datetime

import nh3
import pytest

from plmail.calendar.extraction import (
    EventKind,
    EventStatus,
    ExtractedEvent,
    ExtractionContext,
    StructuredDataEventExtractor,
    anchored,
    registrable_domain,
    structured_dedup_key,
    structured_events,
)
from tests.unit.calendar.corpus import KITINERARY, SCHEMA_ORG

SENDER = "noreply@mail.example.com"


def utc(*parts: int) -> datetime:
    return datetime(*parts, tzinfo=UTC)


def script(*objects: object) -> str:
    blocks = "".join(f'<script type="application/ld+json">{json.dumps(item)}</script>' for item in objects)
    return f"<html><head>{blocks}</head><body>Thanks for booking</body></html>"


def events(html: str, sender: str = SENDER) -> list[ExtractedEvent]:
    return list(structured_events(html, sender=sender).events)


def only(html: str, sender: str = SENDER) -> ExtractedEvent:
    found = events(html, sender)
    assert len(found) == 1, found
    return found[0]


@pytest.mark.parametrize(
    ("example", "kind", "title", "start", "end", "location"),
    [
        # The schema.org sample's arrival precedes its departure, so the end is the nominal hour.
        (
            "eg-0178",
            EventKind.TRAIN,
            "Train Munich Central → Paris Gare De Lyon",
            utc(2017, 1, 4, 9, 30),
            utc(2017, 1, 4, 10, 30),
            "Munich Central",
        ),
        (
            "eg-0179",
            EventKind.BUS,
            "Bus Port Authority, NYC → Boston South Station",
            utc(2017, 1, 4, 17, 30),
            utc(2017, 1, 4, 22, 10),
            "Port Authority, NYC",
        ),
        (
            "eg-0180",
            EventKind.TICKET,
            "Foo Fighters Concert",
            utc(2017, 3, 7, 3, 30),
            utc(2017, 3, 7, 4, 30),
            "AT&T Park, 24 Willie Mays Plaza, 94107 San Francisco, US",
        ),
        (
            "eg-0181",
            EventKind.FLIGHT,
            "Flight UA110 SFO → JFK",
            utc(2017, 3, 5, 4, 15),
            utc(2017, 3, 5, 11, 30),
            "San Francisco Airport (SFO)",
        ),
        (
            "eg-0182",
            EventKind.DINING,
            "Wagamama",
            utc(2017, 4, 10, 8),
            utc(2017, 4, 10, 9),
            "Wagamama, 1 Tavistock Street, WC2E 7PG London, United Kingdom",
        ),
        (
            "eg-0183",
            EventKind.LODGING,
            "Hilton San Francisco Union Square",
            utc(2017, 4, 12),
            utc(2017, 4, 13, 19),
            "Hilton San Francisco Union Square, 333 O'Farrell St, 94102 San Francisco, US",
        ),
        (
            "eg-0184",
            EventKind.RENTAL,
            "Rental car: Hertz Economy Class Car",
            utc(2017, 8, 5, 23),
            utc(2017, 8, 7, 3),
            "Hertz San Diego Airport, 1500 Orange Avenue, 94043 San Diego, US",
        ),
    ],
)
def test_schema_org_reservation_examples(
    example: str, kind: EventKind, title: str, start: datetime, end: datetime, location: str
) -> None:
    event = only((SCHEMA_ORG / example / "jsonld.html").read_text())
    assert (event.kind, event.title, event.start, event.end, event.location) == (kind, title, start, end, location)
    assert (event.status, event.sequence, event.confidence, event.extractor) == (
        EventStatus.CONFIRMED,
        0,
        90,
        "structured_data",
    )
    # An offset is not a zone: the instant is kept in UTC and no zone is claimed.
    assert event.time_zone is None and not event.all_day and event.uid == event.dedup_key
    assert event.dedup_key.startswith("jsonld:") and len(event.dedup_key) == 71
    json.dumps(event.source_payload)
    assert (
        event.source_payload["@type"]
        == json.loads((SCHEMA_ORG / example / "jsonld.html").read_text().split(">", 1)[1].rsplit("<", 1)[0])["@type"]
    )


def test_cancelled_flight_from_kitinerary() -> None:
    booking = json.loads((KITINERARY / "jsonlddata" / "flight-cancellation.in.json").read_text())
    event = only(script(booking))
    assert (event.status, event.start, event.title) == (
        EventStatus.CANCELLED,
        utc(2027, 3, 5, 4, 15),
        "Flight UA110 SFO → JFK",
    )


@pytest.mark.parametrize(
    ("value", "status"),
    [
        ("http://schema.org/Cancelled", EventStatus.CANCELLED),
        ("https://schema.org/ReservationCancelled", EventStatus.CANCELLED),
        ("ReservationCancelled", EventStatus.CANCELLED),
        ("http://schema.org/ReservationPending", EventStatus.TENTATIVE),
        ("http://schema.org/ReservationConfirmed", EventStatus.CONFIRMED),
        ({"@id": "nonsense"}, EventStatus.CONFIRMED),
        (12, EventStatus.CONFIRMED),
    ],
)
def test_reservation_status(value: object, status: EventStatus) -> None:
    booking = {
        "@type": "EventReservation",
        "reservationNumber": "E1",
        "reservationStatus": value,
        "reservationFor": {"@type": "Event", "name": "Gig", "startDate": "2025-05-01T20:00:00+02:00"},
    }
    assert only(script(booking)).status is status


def flight_leg(number: str, departs: str, arrives: str, origin: str, destination: str) -> dict[str, object]:
    return {
        "@type": "Flight",
        "flightNumber": number,
        "airline": {"@type": "Airline", "iataCode": "LH"},
        "departureAirport": {"@type": "Airport", "iataCode": origin},
        "arrivalAirport": {"@type": "Airport", "iataCode": destination},
        "departureTime": departs,
        "arrivalTime": arrives,
    }


def test_one_event_per_flight_leg_with_distinct_keys() -> None:
    booking = {
        "@context": "http://schema.org",
        "@type": "FlightReservation",
        "reservationNumber": "ABC123",
        "reservationFor": [
            flight_leg("2029", "2025-04-07T08:30:00+02:00", "2025-04-07T09:35:00+02:00", "TXL", "MUC"),
            flight_leg("2218", "2025-04-07T11:10:00+02:00", "2025-04-07T13:00:00+02:00", "MUC", "TLS"),
        ],
    }
    legs = events(script(booking))
    assert [(e.title, e.start) for e in legs] == [
        ("Flight LH2029 TXL → MUC", utc(2025, 4, 7, 6, 30)),
        ("Flight LH2218 MUC → TLS", utc(2025, 4, 7, 9, 10)),
    ]
    assert legs[0].dedup_key != legs[1].dedup_key
    # The same leg sent again in its own reservation object keeps its key.
    single = {**booking, "reservationFor": booking["reservationFor"][1]}  # type: ignore[index]
    assert only(script(single)).dedup_key == legs[1].dedup_key


def test_graph_and_top_level_arrays_are_walked() -> None:
    dinner = {
        "@type": "FoodEstablishmentReservation",
        "reservationNumber": "D-7",
        "startTime": "2025-06-01T19:30:00+02:00",
        "reservationFor": {"@type": "Restaurant", "name": "Trattoria"},
    }
    stay = {
        "@type": ["LodgingReservation", "Thing"],
        "reservationNumber": "H-9",
        "checkinDate": "2025-06-01",
        "checkoutDate": "2025-06-03",
        "reservationFor": {"@type": "Hotel", "name": "Hotel Test"},
    }
    found = events(script({"@context": "https://schema.org", "@graph": [{"@type": "WebPage"}, dinner]}, [stay]))
    assert [(e.kind, e.title) for e in found] == [(EventKind.DINING, "Trattoria"), (EventKind.LODGING, "Hotel Test")]
    lodging = found[1]
    # Date-only stay: all-day, and the checkout day is shown too (end is exclusive).
    assert (lodging.start, lodging.end, lodging.all_day) == (date(2025, 6, 1), date(2025, 6, 4), True)


def test_a_broken_block_costs_only_itself() -> None:
    good = {
        "@type": "EventReservation",
        "reservationNumber": "OK1",
        "reservationFor": {"@type": "Event", "name": "Kept", "startDate": "2025-05-01T20:00:00Z"},
    }
    html = (
        '<script type="application/ld+json">{"@type": "EventReservation", "reservationNumber": </script>'
        + script(good)
        + '<div itemscope itemtype="http://schema.org/EventReservation">'
        '<meta itemprop="reservationNumber" content="MD1">'
        '<div itemprop="reservationFor" itemscope itemtype="http://schema.org/Event">'
        '<meta itemprop="name" content="From microdata"><meta itemprop="startDate" content="2025-05-02T20:00:00Z">'
        "</div></div>"
    )
    result = structured_events(html, sender=SENDER)
    assert [e.title for e in result.events] == ["Kept", "From microdata"]
    assert result.errors == ("JSON-LD block 0 unreadable: JSONDecodeError",)


def test_the_same_booking_in_both_syntaxes_is_one_claim() -> None:
    html = (KITINERARY / "structureddata" / "google-flight-reservation-json-ld.html").read_text() + (
        KITINERARY / "structureddata" / "google-flight-reservation-microdata.html"
    ).read_text()
    assert only(html).title == "Flight UA110 SFO → JFK"


def test_microdata_split_by_the_html_parser_is_put_back_together() -> None:
    # Google's own sample nests <div itemprop="reservationFor"> in a <p itemscope>, which parsers close early.
    event = only((KITINERARY / "structureddata" / "google-microdata-inline.html").read_text())
    assert (event.title, event.start) == ("Google I/O 2013", utc(2013, 5, 15, 16, 30))


def test_empty_identity_gives_no_event() -> None:
    nameless = {
        "@type": "FlightReservation",
        "reservationNumber": "   ",
        "reservationFor": flight_leg("1", "2025-01-01T10:00:00Z", "2025-01-01T11:00:00Z", "AAA", "BBB"),
    }
    assert events(script(nameless)) == []
    order_without_number = (SCHEMA_ORG / "eg-0376" / "jsonld.html").read_text()
    assert events(order_without_number) == []


def test_parcel_and_order_deliveries() -> None:
    parcel = {
        "@context": "http://schema.org",
        "@type": "ParcelDelivery",
        "expectedArrivalUntil": "2027-03-12T12:00:00-08:00",
        "carrier": {"@type": "Organization", "name": "FedEx"},
        "itemShipped": {"@type": "Product", "name": "Google Chromecast"},
        "partOfOrder": {
            "@type": "Order",
            "orderNumber": "176057",
            "merchant": {"@type": "Organization", "name": "Bob Dole"},
        },
        "trackingNumber": "3453291231",
    }
    delivery = only(script(parcel))
    assert (delivery.kind, delivery.title, delivery.start, delivery.end) == (
        EventKind.DELIVERY,
        "Delivery: Google Chromecast",
        utc(2027, 3, 12, 20),
        utc(2027, 3, 12, 21),
    )
    order = {
        "@type": "Order",
        "orderNumber": "176057",
        "orderStatus": "http://schema.org/OrderCancelled",
        "seller": {"@type": "Organization", "name": "Bob Dole"},
        "orderedItem": [
            {
                "@type": "OrderItem",
                "orderedItem": {"@type": "Product", "name": "Google Chromecast"},
                "orderDelivery": {
                    "@type": "ParcelDelivery",
                    "trackingNumber": "3453291231",
                    "expectedArrivalFrom": "2027-03-10",
                },
            },
            {
                "@type": "OrderItem",
                "orderedItem": {"@type": "Product", "name": "Cable"},
                "orderDelivery": {
                    "@type": "ParcelDelivery",
                    "expectedArrivalFrom": "2027-03-15",
                    "expectedArrivalUntil": "2027-03-18",
                },
            },
        ],
    }
    deliveries = events(script(order))
    assert [(e.title, e.start, e.end, e.status, e.all_day) for e in deliveries] == [
        ("Delivery: Google Chromecast", date(2027, 3, 10), date(2027, 3, 11), EventStatus.CANCELLED, True),
        ("Delivery: Cable", date(2027, 3, 15), date(2027, 3, 18), EventStatus.CANCELLED, True),
    ]
    # The shipment tracked in the parcel mail and in the order mail is one thing.
    assert deliveries[0].dedup_key == delivery.dedup_key


def test_dedup_key_formula_is_pinned() -> None:
    # Changing this derivation orphans every stored event and suppression: it needs a key-version bump.
    material = b"lufthansa.com\x00FlightReservation\x00RXJ34P\x1fLH400\x1f2025-01-01"
    expected = "jsonld:" + hashlib.sha256(material).hexdigest()
    assert structured_dedup_key("lufthansa.com", "FlightReservation", "RXJ34P\x1fLH400\x1f2025-01-01") == expected
    assert structured_dedup_key("x", "AB", "1234") != structured_dedup_key("x", "AB1", "234")
    leg = flight_leg("400", "2025-01-01T10:00:00+01:00", "2025-01-01T18:00:00-05:00", "FRA", "JFK")
    booking = {"@type": "FlightReservation", "reservationNumber": "RXJ34P", "reservationFor": leg}
    assert only(script(booking), "noreply@mail.lufthansa.com").dedup_key == expected


def test_issuer_is_the_registrable_domain_of_the_sender() -> None:
    booking = {
        "@type": "EventReservation",
        "reservationNumber": "AB1234",
        "reservationFor": {"@type": "Event", "name": "Gig", "startDate": "2025-05-01T20:00:00Z"},
    }
    html = script(booking)
    keys = {sender: only(html, sender).dedup_key for sender in ("a@mail.tix.co.uk", "b@news.tix.co.uk", "c@tix.com")}
    assert keys["a@mail.tix.co.uk"] == keys["b@news.tix.co.uk"] != keys["c@tix.com"]


@pytest.mark.parametrize(
    ("host", "domain"),
    [
        ("mail.lufthansa.com", "lufthansa.com"),
        ("Noreply@Mail.Lufthansa.COM", "lufthansa.com"),
        ("news.bbc.co.uk", "bbc.co.uk"),
        ("bbc.co.uk", "bbc.co.uk"),
        ("shop.example.com.au", "example.com.au"),
        ("a.b.c.example.org", "example.org"),
        ("mail.bmf.gv.at", "bmf.gv.at"),
        ("booking.jp", "booking.jp"),
        ("x.booking.de.", "booking.de"),
        ("[192.168.0.1]", "192.168.0.1"),
        ("localhost", "localhost"),
        ("", ""),
        (None, ""),
        ("bad host.com", ""),
    ],
)
def test_registrable_domain(host: str | None, domain: str) -> None:
    assert registrable_domain(host) == domain


def test_times_offset_naive_and_date() -> None:
    def gig(start: str) -> ExtractedEvent:
        return only(
            script(
                {
                    "@type": "EventReservation",
                    "reservationNumber": "T1",
                    "reservationFor": {"@type": "Event", "name": "Gig", "startDate": start},
                }
            )
        )

    assert gig("2025-05-01T20:00:00-05:00").start == utc(2025, 5, 2, 1)
    assert gig("2017-06-15T14:00:00+0:00").start == utc(2017, 6, 15, 14)
    assert gig("2025-05-01T20:00:00.250Z").start == utc(2025, 5, 1, 20)
    floating = gig("2025-05-01T20:00:00")
    assert floating.is_floating and floating.start == datetime(2025, 5, 1, 20) and floating.time_zone is None
    # The writer anchors a floating time in the user's zone.
    assert anchored(floating, "Europe/Berlin").start == utc(2025, 5, 1, 18)
    all_day = gig("2025-05-01")
    assert (all_day.start, all_day.end, all_day.all_day) == (date(2025, 5, 1), date(2025, 5, 2), True)
    assert (
        events(
            script(
                {"@type": "EventReservation", "reservationNumber": "T1", "reservationFor": {"startDate": "01/05/2025"}}
            )
        )
        == []
    )


def test_supports_only_messages_with_markup() -> None:
    extractor = StructuredDataEventExtractor()
    assert (extractor.name, extractor.priority(), extractor.stops_cascade(), extractor.CONFIDENCE) == (
        "structured_data",
        80,
        False,
        90,
    )
    assert extractor.supports(ExtractionContext(body_html='<script type="application/LD+JSON">{}</script>'))
    assert extractor.supports(ExtractionContext(body_html="<div itemscope itemtype=x>"))
    assert not extractor.supports(ExtractionContext(body_html="<p>hello</p>"))
    assert not extractor.supports(ExtractionContext())


def test_the_sanitised_copy_has_lost_what_the_raw_body_has() -> None:
    """Why the context carries the raw body_html: sanitising rightly strips the JSON-LD <script>."""
    raw = (KITINERARY / "structureddata" / "google-flight-reservation-json-ld.html").read_text()
    assert len(events(raw)) == 1
    assert events(nh3.clean(raw)) == []
