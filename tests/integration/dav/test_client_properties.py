"""The properties the phones' clients read, one test each, asked the way the client asks.

DAVx⁵ (Android): its collection refresher (bitfireAT/davx5-ose, app/.../servicedetection/CollectionListRefresher.kt,
``collectionProperties``) sends one Depth 1 PROPFIND to each home set for resourcetype, current-user-privilege-set,
displayname, owner, calendar-description, calendar-color, calendar-timezone, supported-calendar-component-set and
supported-address-data, and keeps a collection only when its resourcetype and component set say what it holds;
its manual ("Accounts and collections", manual.davx5.com) asks servers for the /.well-known/caldav and /carddav
redirects. iOS Calendar reads Apple's calendar-color and calendar-order (namespace http://apple.com/ns/ical/) and
polls CalendarServer's getctag (http://calendarserver.org/ns/, caldav-ctag) before it lists a calendar again.
"""

from __future__ import annotations

import httpx
import pytest
from lxml import etree

from plmail.services import Services
from tests.integration.dav.conftest import DavUser

D, C, CARD = "{DAV:}", "{urn:ietf:params:xml:ns:caldav}", "{urn:ietf:params:xml:ns:carddav}"
ICAL, CS = "{http://apple.com/ns/ical/}", "{http://calendarserver.org/ns/}"
ASKED = (b'<d:propfind xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav" xmlns:a="http://apple.com/ns/ical/"'
         b' xmlns:s="http://calendarserver.org/ns/" xmlns:r="urn:ietf:params:xml:ns:carddav"><d:prop>'
         b'<d:resourcetype/><d:current-user-privilege-set/><d:displayname/><d:owner/><c:calendar-description/>'
         b'<a:calendar-color/><c:calendar-timezone/><c:supported-calendar-component-set/><r:supported-address-data/>'
         b'<a:calendar-order/><s:getctag/><d:sync-token/><d:supported-report-set/></d:prop></d:propfind>')


async def _collection(http: httpx.AsyncClient, who: DavUser, home: str) -> etree._Element:
    """The first collection below the home, as the Depth 1 PROPFIND of DAVx⁵'s refresher returns it."""
    response = await http.request("PROPFIND", f"/dav/{who.user.id}/{home}/", auth=who.auth, content=ASKED,
                                  headers={"Depth": "1"})
    assert response.status_code == 207
    found = [r for r in etree.fromstring(response.content).iter(f"{D}response")
             if r.findtext(f"{D}href") != f"/dav/{who.user.id}/{home}/"]
    assert found
    return found[0]


def _ok(response: etree._Element, prop: str) -> etree._Element:
    """The property in the response's 200 propstat."""
    for propstat in response.iter(f"{D}propstat"):
        if "200" in str(propstat.findtext(f"{D}status")):
            node = propstat.find(f"{D}prop/{prop}")
            if node is not None:
                return node
    raise AssertionError(f"{prop} is not among the found properties")


async def test_resourcetype_says_calendar(http: httpx.AsyncClient, owner: DavUser) -> None:
    """DAVx⁵ keeps a collection only when resourcetype names it a calendar (RFC 4791 §4.2)."""
    node = _ok(await _collection(http, owner, "calendars"), f"{D}resourcetype")
    assert node.find(f"{C}calendar") is not None and node.find(f"{D}collection") is not None


async def test_supported_calendar_component_set_is_events(http: httpx.AsyncClient, owner: DavUser) -> None:
    """DAVx⁵ syncs a calendar for events (not tasks) when VEVENT is in supported-calendar-component-set
    (RFC 4791 §5.2.3)."""
    node = _ok(await _collection(http, owner, "calendars"), f"{C}supported-calendar-component-set")
    assert [c.get("name") for c in node] == ["VEVENT"]


async def test_privileges_let_the_phone_write(http: httpx.AsyncClient, owner: DavUser) -> None:
    """DAVx⁵ makes a calendar read-only on the phone unless current-user-privilege-set grants write-content
    (RFC 3744 §5.4)."""
    node = _ok(await _collection(http, owner, "calendars"), f"{D}current-user-privilege-set")
    granted = {child.tag for privilege in node for child in privilege}
    assert {f"{D}read", f"{D}write-content", f"{D}bind", f"{D}unbind"} <= granted


async def test_calendar_color_is_a_hex_colour(http: httpx.AsyncClient, owner: DavUser) -> None:
    """DAVx⁵ and iOS read Apple's calendar-color as #RRGGBB[AA]."""
    node = _ok(await _collection(http, owner, "calendars"), f"{ICAL}calendar-color")
    text = str(node.text)
    assert text.startswith("#") and len(text) in (7, 9) and int(text[1:], 16) >= 0


async def test_calendar_order_puts_the_default_first(http: httpx.AsyncClient, owner: DavUser) -> None:
    """iOS sorts calendars by Apple's calendar-order, an integer."""
    assert _ok(await _collection(http, owner, "calendars"), f"{ICAL}calendar-order").text == "0"


async def test_getctag_and_sync_token_move_when_an_event_changes(http: httpx.AsyncClient, owner: DavUser,
                                                                 services: Services) -> None:
    """iOS polls getctag (caldav-ctag) and DAVx⁵ the sync-token (RFC 6578 §4) to know whether to list again."""
    before = await _collection(http, owner, "calendars")
    calendar = str(before.findtext(f"{D}href"))
    event = ("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//x//EN\r\nBEGIN:VEVENT\r\nUID:ctag@x\r\n"
             "DTSTAMP:20261201T000000Z\r\nDTSTART:20261201T100000Z\r\nDTEND:20261201T110000Z\r\nSUMMARY:Ctag\r\n"
             "END:VEVENT\r\nEND:VCALENDAR\r\n")
    assert (await http.put(calendar + "ctag.ics", content=event, auth=owner.auth)).status_code == 201
    after = await _collection(http, owner, "calendars")
    assert _ok(after, f"{CS}getctag").text != _ok(before, f"{CS}getctag").text
    assert _ok(after, f"{D}sync-token").text != _ok(before, f"{D}sync-token").text


async def test_supported_report_set_offers_sync_collection(http: httpx.AsyncClient, owner: DavUser) -> None:
    """DAVx⁵ uses sync-collection only where supported-report-set lists it (RFC 6578 §3.1), else it lists all."""
    node = _ok(await _collection(http, owner, "calendars"), f"{D}supported-report-set")
    reports = {r.tag for report in node.iter(f"{D}report") for r in report}
    assert {f"{D}sync-collection", f"{C}calendar-multiget", f"{C}calendar-query"} <= reports


@pytest.mark.parametrize("prop", [f"{C}calendar-timezone"])
async def test_a_property_not_kept_is_answered_404_not_dropped(http: httpx.AsyncClient, owner: DavUser,
                                                               prop: str) -> None:
    """DAVx⁵ asks for calendar-timezone; a property the server does not keep is named in a 404 propstat
    (RFC 4918 §9.1), so the client knows to use its own default."""
    response = await _collection(http, owner, "calendars")
    missing = [p for p in response.iter(f"{D}propstat") if "404" in str(p.findtext(f"{D}status"))]
    assert missing and missing[0].find(f"{D}prop/{prop}") is not None


async def test_address_books_say_what_they_hold(http: httpx.AsyncClient, owner: DavUser) -> None:
    """DAVx⁵ keeps an address book by its resourcetype and supported-address-data (RFC 6352 §5.2, §6.2.2)."""
    response = await _collection(http, owner, "addressbooks")
    assert _ok(response, f"{D}resourcetype").find(f"{CARD}addressbook") is not None
    data = _ok(response, f"{CARD}supported-address-data")
    assert [(t.get("content-type"), t.get("version")) for t in data] == [("text/vcard", "3.0")]


async def test_a_phone_renames_and_recolours_a_calendar_and_plmail_shows_it(http: httpx.AsyncClient, owner: DavUser,
                                                                           services: Services) -> None:
    """iOS writes displayname and Apple's calendar-color (as #RRGGBBAA) by PROPPATCH when the person edits the
    calendar; the change is plmail's too, and a property the server does not keep fails the whole update
    (RFC 4918 §9.2: 403 for it, 424 for the rest)."""
    calendar = str((await _collection(http, owner, "calendars")).findtext(f"{D}href"))
    both = (b'<d:propertyupdate xmlns:d="DAV:" xmlns:a="http://apple.com/ns/ical/"><d:set><d:prop>'
            b'<d:displayname>Family</d:displayname><a:calendar-color>#FF2968FF</a:calendar-color>'
            b'</d:prop></d:set></d:propertyupdate>')
    answer = await http.request("PROPPATCH", calendar, auth=owner.auth, content=both)
    assert answer.status_code == 207 and "200 OK" in answer.text
    [row, *_] = await services.calendar.objects.calendars_of(owner.user.id)
    assert (row.name, row.color) == ("Family", "#ff2968")
    after = await _collection(http, owner, "calendars")
    assert _ok(after, f"{D}displayname").text == "Family"

    mixed = (b'<d:propertyupdate xmlns:d="DAV:" xmlns:a="http://apple.com/ns/ical/"><d:set><d:prop>'
             b'<d:displayname>Work</d:displayname><a:calendar-order>3</a:calendar-order>'
             b'</d:prop></d:set></d:propertyupdate>')
    refused = etree.fromstring((await http.request("PROPPATCH", calendar, auth=owner.auth, content=mixed)).content)
    statuses = {p.find(f"{D}prop")[0].tag: p.findtext(f"{D}status") for p in refused.iter(f"{D}propstat")}
    assert statuses == {f"{ICAL}calendar-order": "HTTP/1.1 403 Forbidden",
                        f"{D}displayname": "HTTP/1.1 424 Failed Dependency"}
    assert (await services.calendar.objects.calendars_of(owner.user.id))[0].name == "Family"
