"""schema.org reservations, deliveries and orders as draft events: one mapper per type, found by name."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import date, datetime, timedelta

from plmail.calendar.extraction.schema_values import (
    Node,
    child,
    children,
    identity,
    moment,
    named_zone,
    place,
    status_of,
    text,
    written_date,
)
from plmail.calendar.extraction.text import clean_block
from plmail.domain.calendar import EventKind, EventStatus

MAX_TITLE = 200
MAX_LOCATION = 300
MAX_DESCRIPTION = 2_000
MAX_LEGS = 25
MAX_DELIVERIES = 25
_IDENTITY = 100
_SPACES = re.compile(r"\s+")
DELIVERY_TYPE = "ParcelDelivery"


@dataclass(frozen=True, slots=True)
class Draft:
    """An event read from one schema.org object, before it is keyed to its issuer."""

    schema_type: str
    kind: EventKind
    identity: str
    start: datetime | date
    end: datetime | date | None
    status: EventStatus
    title: str | None
    location: str | None = None
    description: str | None = None
    time_zone: str | None = None  # only a zone the data named beside the start (see named_zone)


Mapper = Callable[[Node], Iterator[Draft]]


def drafts(node: Node, schema_type: str) -> Iterator[Draft]:
    mapper = MAPPERS.get(schema_type)
    return mapper(node) if mapper is not None else iter(())


def _number(reservation: Node) -> str | None:
    """The booking number, else an Apple Wallet pass's own identity (its type and serial number): a pass
    KItinerary read without a vendor script carries no booking number, but the pair names it uniquely."""
    number = text(reservation, "reservationNumber", "reservationId", limit=_IDENTITY)
    if number:
        return number
    pass_type = text(reservation, "pkpassPassTypeIdentifier", limit=_IDENTITY)
    serial = text(reservation, "pkpassSerialNumber", limit=_IDENTITY)
    return f"{pass_type}/{serial}" if pass_type and serial else None


def _passenger(reservation: Node) -> str | None:
    return text(child(reservation, "underName"), "name", limit=100)


def _details(*pairs: tuple[str, str | None]) -> str | None:
    return clean_block("\n".join(f"{label}: {value}" for label, value in pairs if value), MAX_DESCRIPTION)


def _title(*pieces: str | None) -> str | None:
    joined = " ".join(piece for piece in pieces if piece)
    return joined[:MAX_TITLE] or None


def _route(origin: str | None, destination: str | None) -> str | None:
    if origin and destination:
        return f"{origin} → {destination}"
    return origin or destination


def _short(node: Node | None) -> str | None:
    return text(node, "iataCode", limit=10) or text(node, "name", limit=80)


def _designator(carrier: str | None, number: str | None) -> str | None:
    if not number:
        return None
    compact = _SPACES.sub("", number).upper()
    if carrier and compact[:1].isdigit():
        return _SPACES.sub("", carrier).upper() + compact
    return compact


def _flights(reservation: Node) -> Iterator[Draft]:
    number = _number(reservation)
    if not number:
        return
    status = status_of(reservation.get("reservationStatus"))
    for leg in children(reservation, "reservationFor", MAX_LEGS):
        departs = leg.get("departureTime") or leg.get("departureDay")
        start = moment(departs)
        if start is None:
            continue
        airline = child(leg, "airline")
        designator = _designator(text(airline, "iataCode", limit=3), text(leg, "flightNumber", limit=10))
        origin, destination = child(leg, "departureAirport"), child(leg, "arrivalAirport")
        yield Draft(
            schema_type="FlightReservation",
            kind=EventKind.FLIGHT,
            # One event per leg: the flight and its day tell legs of one booking apart.
            identity=identity(number, designator or _short(origin), written_date(departs)),
            start=start,
            end=moment(leg.get("arrivalTime")),
            status=status,
            title=_title(
                "Flight", designator or text(airline, "name", limit=60), _route(_short(origin), _short(destination))
            ),
            location=place(origin, MAX_LOCATION),
            description=_details(
                ("Booking reference", number),
                ("Passenger", _passenger(reservation)),
                ("Seat", text(reservation, "airplaneSeat", limit=10)),
                ("Terminal", text(leg, "departureTerminal", limit=20)),
                ("Gate", text(leg, "departureGate", limit=20)),
            ),
            time_zone=named_zone(departs),
        )


def _trips(schema_type: str, kind: EventKind, label: str, stops: tuple[str, str], numbers: tuple[str, str]) -> Mapper:
    """Train and bus reservations: the same shape with different property names."""

    def mapper(reservation: Node) -> Iterator[Draft]:
        number = _number(reservation)
        if not number:
            return
        status = status_of(reservation.get("reservationStatus"))
        for trip in children(reservation, "reservationFor", MAX_LEGS):
            # A ticket valid for a day (a UIC barcode names no train) is that day, like a flight's departureDay.
            departs = trip.get("departureTime") or trip.get("departureDay")
            start = moment(departs)
            if start is None:
                continue
            origin = child(trip, stops[0]) or child(trip, "departureStation")
            destination = child(trip, stops[1]) or child(trip, "arrivalStation")
            service = text(trip, numbers[0], limit=40) or text(trip, numbers[1], limit=40)
            yield Draft(
                schema_type=schema_type,
                kind=kind,
                identity=identity(number, service or _short(origin), written_date(departs)),
                start=start,
                end=moment(trip.get("arrivalTime")),
                status=status,
                title=_title(label, service, _route(_short(origin), _short(destination))),
                location=place(origin, MAX_LOCATION),
                description=_details(
                    ("Booking reference", number),
                    ("Passenger", _passenger(reservation)),
                    ("Platform", text(trip, "departurePlatform", limit=20)),
                ),
                time_zone=named_zone(departs),
            )

    return mapper


def _event_reservation(reservation: Node) -> Iterator[Draft]:
    number = _number(reservation)
    if not number:
        return
    for event in children(reservation, "reservationFor", MAX_LEGS):
        begins = event.get("startDate")
        start = moment(begins)
        if start is None:
            continue
        venue = child(event, "location")
        yield Draft(
            schema_type="EventReservation",
            kind=EventKind.TICKET,
            identity=identity(number),
            start=start,
            end=moment(event.get("endDate")),
            status=status_of(reservation.get("reservationStatus")),
            title=text(event, "name", limit=MAX_TITLE) or "Event",
            location=place(venue, MAX_LOCATION) if venue is not None else text(event, "location", limit=MAX_LOCATION),
            description=_details(("Booking reference", number), ("Ticket holder", _passenger(reservation))),
            time_zone=named_zone(begins),
        )


def _dining(reservation: Node) -> Iterator[Draft]:
    number = _number(reservation)
    restaurant = child(reservation, "reservationFor")
    begins = reservation.get("startTime") or (restaurant.get("startDate") if restaurant else None)
    start = moment(begins)
    if not number or start is None:
        return
    yield Draft(
        schema_type="FoodEstablishmentReservation",
        kind=EventKind.DINING,
        identity=identity(number),
        start=start,
        end=moment(reservation.get("endTime")),
        status=status_of(reservation.get("reservationStatus")),
        title=text(restaurant, "name", limit=MAX_TITLE) or "Table reservation",
        location=place(restaurant, MAX_LOCATION),
        description=_details(("Booking reference", number), ("Party size", text(reservation, "partySize", limit=10))),
        time_zone=named_zone(begins),
    )


def _lodging(reservation: Node) -> Iterator[Draft]:
    number = _number(reservation)
    arrives = reservation.get("checkinDate") or reservation.get("checkinTime")
    leaves = reservation.get("checkoutDate") or reservation.get("checkoutTime")
    start, end = moment(arrives), moment(leaves)
    if not number or start is None:
        return
    if end is not None and isinstance(start, datetime) != isinstance(end, datetime):
        start, end = date.fromisoformat(written_date(arrives)), date.fromisoformat(written_date(leaves))
    if end is not None and not isinstance(end, datetime):
        end += timedelta(days=1)  # the checkout day is spent at the hotel too: show it
    hotel = child(reservation, "reservationFor")
    yield Draft(
        schema_type="LodgingReservation",
        kind=EventKind.LODGING,
        identity=identity(number),
        start=start,
        end=end,
        status=status_of(reservation.get("reservationStatus")),
        title=text(hotel, "name", limit=MAX_TITLE) or "Hotel stay",
        location=place(hotel, MAX_LOCATION),
        description=_details(("Booking reference", number), ("Guest", _passenger(reservation))),
        time_zone=named_zone(arrives) if isinstance(start, datetime) else None,
    )


def _rental(reservation: Node) -> Iterator[Draft]:
    number = _number(reservation)
    picks_up = reservation.get("pickupTime")
    start = moment(picks_up)
    if not number or start is None:
        return
    car = child(reservation, "reservationFor")
    company = text(child(reservation, "provider"), "name", limit=60) or text(
        child(car, "rentalCompany"), "name", limit=60
    )
    yield Draft(
        schema_type="RentalCarReservation",
        kind=EventKind.RENTAL,
        identity=identity(number),
        start=start,
        end=moment(reservation.get("dropoffTime")),
        status=status_of(reservation.get("reservationStatus")),
        title=_title("Rental car:", company, text(car, "name", limit=80)),
        location=place(child(reservation, "pickupLocation"), MAX_LOCATION),
        description=_details(
            ("Booking reference", number),
            ("Drop-off", place(child(reservation, "dropoffLocation"), MAX_LOCATION)),
        ),
        time_zone=named_zone(picks_up),
    )


def _parcel(delivery: Node) -> Iterator[Draft]:
    order = child(delivery, "partOfOrder")
    draft = _delivery_draft(
        delivery,
        key=text(delivery, "trackingNumber", limit=_IDENTITY) or text(order, "orderNumber", limit=_IDENTITY),
        item=text(child(delivery, "itemShipped"), "name", limit=120),
        merchant=_merchant(order) or text(child(delivery, "carrier"), "name", limit=80),
        status=status_of(order.get("orderStatus") if order else None, delivery.get("deliveryStatus")),
    )
    if draft is not None:
        yield draft


def _order(order: Node) -> Iterator[Draft]:
    number = text(order, "orderNumber", limit=_IDENTITY)
    deliveries: list[tuple[Node, str | None]] = [
        (node, None) for node in children(order, "orderDelivery", MAX_DELIVERIES)
    ]
    for line in children(order, "orderedItem", MAX_DELIVERIES):
        name = text(child(line, "orderedItem"), "name", limit=120) or text(line, "name", limit=120)
        deliveries.extend((node, name) for node in children(line, "orderDelivery", MAX_DELIVERIES))
    untracked = sum(1 for node, _ in deliveries if not text(node, "trackingNumber", limit=_IDENTITY))
    for index, (delivery, item) in enumerate(deliveries[:MAX_DELIVERIES]):
        tracking = text(delivery, "trackingNumber", limit=_IDENTITY)
        # An untracked delivery is the order itself, unless the order has several of them.
        key = tracking or (identity(number, f"#{index}") if number and untracked > 1 else number)
        draft = _delivery_draft(
            delivery, key=key, item=item, merchant=_merchant(order), status=status_of(order.get("orderStatus"))
        )
        if draft is not None:
            yield draft


def _delivery_draft(
    delivery: Node, *, key: str | None, item: str | None, merchant: str | None, status: EventStatus
) -> Draft | None:
    earliest, latest = moment(delivery.get("expectedArrivalFrom")), moment(delivery.get("expectedArrivalUntil"))
    start = earliest or latest
    if not key or start is None:
        return None
    return Draft(
        schema_type=DELIVERY_TYPE,
        kind=EventKind.DELIVERY,
        identity=identity(key),
        start=start,
        end=latest if earliest is not None else None,
        status=status,
        title=f"Delivery: {item}"[:MAX_TITLE] if item else f"Delivery from {merchant}" if merchant else "Delivery",
        description=_details(
            ("Tracking number", text(delivery, "trackingNumber", limit=_IDENTITY)), ("From", merchant)
        ),
    )


def _merchant(order: Node | None) -> str | None:
    return text(child(order, "seller"), "name", limit=80) or text(child(order, "merchant"), "name", limit=80)


MAPPERS: dict[str, Mapper] = {
    "FlightReservation": _flights,
    "TrainReservation": _trips(
        "TrainReservation",
        EventKind.TRAIN,
        "Train",
        ("departureStation", "arrivalStation"),
        ("trainNumber", "trainName"),
    ),
    "BusReservation": _trips(
        "BusReservation", EventKind.BUS, "Bus", ("departureBusStop", "arrivalBusStop"), ("busNumber", "busName")
    ),
    "EventReservation": _event_reservation,
    "FoodEstablishmentReservation": _dining,
    "LodgingReservation": _lodging,
    "RentalCarReservation": _rental,
    "ParcelDelivery": _parcel,
    "Order": _order,
}
