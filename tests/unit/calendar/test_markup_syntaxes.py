"""Microdata and RDFa booking markup give the events its JSON-LD twin gives.

The microdata files are KItinerary's (Google's Gmail samples among them). The RDFa is the same markup with
microdata's attributes swapped for RDFa Lite's (itemscope/itemtype → typeof, itemprop → property, the
vocabulary on the outer item), which is how the two syntaxes correspond; the gold is the JSON-LD.
"""

from __future__ import annotations

import re

import pytest

from plmail.calendar.extraction import ExtractedEvent, structured_events
from tests.unit.calendar.corpus import KITINERARY

STRUCTURED = KITINERARY / "structureddata"
SENDER = "booking@mail.example.com"


def as_rdfa(microdata: str) -> str:
    html = re.sub(r'itemscope\s+itemtype="https?://schema\.org/(\w+)"', r'typeof="\1"', microdata)
    return html.replace("itemprop=", "property=").replace('typeof="', 'vocab="http://schema.org/" typeof="', 1)


def facts(events: tuple[ExtractedEvent, ...]) -> list[tuple[object, ...]]:
    return [(e.kind, e.title, e.start, e.end, e.location, e.status, e.dedup_key) for e in events]


@pytest.mark.parametrize(("microdata", "json_ld"), [
    ("google-flight-reservation-microdata", "google-flight-reservation-json-ld"),
    ("google-microdata", "google-json-ld"),
])
def test_microdata_and_rdfa_read_as_json_ld_does(microdata: str, json_ld: str) -> None:
    gold = structured_events((STRUCTURED / f"{json_ld}.html").read_text(), sender=SENDER).events
    assert len(gold) == 1
    markup = (STRUCTURED / f"{microdata}.html").read_text()
    assert facts(structured_events(markup, sender=SENDER).events) == facts(gold)
    rdfa = as_rdfa(markup)
    assert "itemprop" not in rdfa and "typeof=" in rdfa
    assert facts(structured_events(rdfa, sender=SENDER).events) == facts(gold)


def test_rdfa_with_a_time_element_and_nested_places() -> None:
    html = """<div vocab="https://schema.org/" typeof="FoodEstablishmentReservation">
      <span property="reservationNumber">T-77</span>
      <time property="startTime" datetime="2027-04-10T19:30:00+02:00">Saturday 7:30 pm</time>
      <div property="reservationFor" typeof="FoodEstablishment"><span property="name">Cafe Lotte</span>
        <div property="address" typeof="PostalAddress"><span property="streetAddress">Hauptstr. 1</span>
          <span property="addressLocality">Berlin</span></div></div></div>"""
    [event] = structured_events(html, sender=SENDER).events
    assert (event.title, event.location) == ("Cafe Lotte", "Cafe Lotte, Hauptstr. 1, Berlin")
    assert event.start is not None and event.start.isoformat() == "2027-04-10T17:30:00+00:00"


def test_a_reference_cycle_in_rdfa_is_bounded() -> None:
    html = """<div vocab="http://schema.org/" typeof="EventReservation" resource="#r">
      <span property="reservationNumber">C1</span>
      <div property="reservationFor" typeof="Event" resource="#e"><span property="name">Loop</span>
        <meta property="startDate" content="2027-01-01T10:00:00Z"><link property="subEvent" href="#e"></div></div>"""
    [event] = structured_events(html, sender=SENDER).events
    assert event.title == "Loop"


def test_a_flood_of_rdfa_items_is_capped_in_bounded_time() -> None:
    import time

    item = ('<div typeof="EventReservation"><span property="reservationNumber">N{}</span>'
            '<div property="reservationFor" typeof="Event"><span property="name">E</span>'
            '<meta property="startDate" content="2027-01-01T10:00:00Z"></div></div>')
    small = '<div vocab="http://schema.org/">' + "".join(item.format(i) for i in range(1_500)) + "</div>"
    began = time.perf_counter()
    result = structured_events(small, sender=SENDER)
    assert len(result.events) == 25  # MAX_EVENTS: more is an attack or a broken template
    huge = '<div vocab="http://schema.org/">' + "".join(item.format(i) for i in range(20_000)) + "</div>"
    assert structured_events(huge, sender=SENDER).errors[-1].startswith("RDFa not read")
    assert time.perf_counter() - began < 5
