"""CalDAV by raw RFC requests over real HTTP: authentication and isolation, conditional writes (RFC 9110 §13.1 with
RFC 4791 §5.3.4), body limits, the preconditions RFC 4791 §5.3.2.1 and RFC 6578 §3.2 name, and the seed's rules
across the protocol: untrusted events stay off the phone, extracted ones carry their provenance, and an event a
person changed on the phone is no longer rewritten by mail."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import httpx
from lxml import etree

from plmail.calendar.editor import EventForm
from plmail.calendar.sources import EventSource
from plmail.calendar.writer import EventDraft
from plmail.domain.enums import LabelRole, ProviderKind
from plmail.mail.ingest import parse_message
from plmail.services import Services
from tests.integration.calendar.conftest import invite
from tests.integration.dav.conftest import DavUser
from tests.support.mail import make_message
from tests.support.repos import account_rows

D = "{DAV:}"
EVENT = """BEGIN:VCALENDAR\r
VERSION:2.0\r
PRODID:-//Raw//EN\r
BEGIN:VEVENT\r
UID:{uid}\r
DTSTAMP:20261201T080000Z\r
DTSTART:20261210T090000Z\r
DTEND:20261210T100000Z\r
SUMMARY:{title}\r
BEGIN:VALARM\r
ACTION:DISPLAY\r
TRIGGER:-PT15M\r
DESCRIPTION:Reminder\r
END:VALARM\r
END:VEVENT\r
END:VCALENDAR\r
"""


async def calendar_path(services: Services, who: DavUser) -> str:
    calendar = (await services.calendar.dav.calendars(who.user.id))[0]  # the default one, listed first
    return f"/dav/{who.user.id}/calendars/{calendar.key}/"


def listed(response: httpx.Response) -> dict[str, str]:
    """href → getetag of a multistatus's object responses."""
    root = etree.fromstring(response.content)
    found = {}
    for node in root.iter(f"{D}response"):
        etag = node.findtext(f".//{D}getetag")
        if etag:
            found[str(node.findtext(f"{D}href"))] = etag
    return found


async def test_a_wrong_password_is_401_with_a_basic_challenge(http: httpx.AsyncClient, owner: DavUser) -> None:
    response = await http.request("PROPFIND", "/dav/", auth=(owner.email, "plmail_" + "0" * 64))
    assert response.status_code == 401
    assert response.headers["www-authenticate"].startswith("Basic")
    # RFC 6764 §5: the well-known URI leads to the context path, for a client that has not signed in yet.
    redirect = await http.request("PROPFIND", "/.well-known/caldav")
    assert (redirect.status_code, redirect.headers["location"]) == (301, "/dav/")


async def test_another_users_paths_are_refused(http: httpx.AsyncClient, owner: DavUser, stranger: DavUser,
                                              services: Services) -> None:
    theirs = await calendar_path(services, stranger)
    response = await http.request("PROPFIND", theirs, auth=owner.auth, headers={"Depth": "1"})
    assert response.status_code == 403
    put = await http.put(theirs + "x.ics", content=EVENT.format(uid="x@x", title="Sneaky"), auth=owner.auth)
    assert put.status_code == 403
    # Their calendar's id under the owner's own principal names nothing the owner has.
    their_id = theirs.rstrip("/").rsplit("/", 1)[-1]
    mine = await http.request("PROPFIND", f"/dav/{owner.user.id}/calendars/{their_id}/", auth=owner.auth)
    assert mine.status_code == 404
    assert await services.calendar.objects.events_of(stranger.user.id, None, limit=5) == []


async def test_stale_etags_are_412_and_the_current_one_writes(http: httpx.AsyncClient, owner: DavUser,
                                                              services: Services) -> None:
    path = await calendar_path(services, owner) + "dentist.ics"
    created = await http.put(path, content=EVENT.format(uid="d@x", title="Dentist"), auth=owner.auth,
                             headers={"If-None-Match": "*", "Content-Type": "text/calendar"})
    assert created.status_code == 201
    first = created.headers["etag"]
    got = await http.get(path, auth=owner.auth)
    # The bytes sent come back until the event changes, the alarm plmail does not model included.
    assert got.headers["etag"] == first and "BEGIN:VALARM" in got.text

    again = await http.put(path, content=EVENT.format(uid="d@x", title="Dentist"), auth=owner.auth,
                           headers={"If-None-Match": "*"})
    assert again.status_code == 412  # RFC 9110 §13.1.2: it exists
    changed = await http.put(path, content=EVENT.format(uid="d@x", title="Dentist at 10"), auth=owner.auth,
                             headers={"If-Match": first})
    assert changed.status_code == 204 and changed.headers["etag"] != first
    stale = await http.put(path, content=EVENT.format(uid="d@x", title="Lost update"), auth=owner.auth,
                           headers={"If-Match": first})
    assert stale.status_code == 412
    assert (await http.delete(path, auth=owner.auth, headers={"If-Match": first})).status_code == 412
    [event] = await services.calendar.objects.events_of(owner.user.id, None, limit=5)
    assert event.values.title == "Dentist at 10"
    assert (await http.delete(path, auth=owner.auth, headers={"If-Match": changed.headers["etag"]})).status_code == 204
    assert (await http.get(path, auth=owner.auth)).status_code == 404


async def test_bodies_are_bounded(http: httpx.AsyncClient, owner: DavUser, services: Services) -> None:
    path = await calendar_path(services, owner) + "big.ics"
    huge = EVENT.format(uid="big@x", title="x" * (3 * 1024 * 1024))
    assert (await http.put(path, content=huge, auth=owner.auth)).status_code == 413
    large = EVENT.format(uid="big@x", title="x" * (1536 * 1024))
    refused = await http.put(path, content=large, auth=owner.auth)
    # RFC 4791 §5.3.2.1: larger than the calendar's max-resource-size.
    assert refused.status_code == 403 and b"max-resource-size" in refused.content
    assert await services.calendar.objects.events_of(owner.user.id, None, limit=5) == []


async def test_preconditions_name_what_was_refused(http: httpx.AsyncClient, owner: DavUser,
                                                   services: Services) -> None:
    collection = await calendar_path(services, owner)
    todo = EVENT.replace("VEVENT", "VTODO")
    refused = await http.put(collection + "todo.ics", content=todo.format(uid="t@x", title="Buy milk"),
                             auth=owner.auth)
    assert refused.status_code == 403 and b"supported-calendar-component" in refused.content
    await http.put(collection + "a.ics", content=EVENT.format(uid="same@x", title="A"), auth=owner.auth)
    twin = await http.put(collection + "b.ics", content=EVENT.format(uid="same@x", title="B"), auth=owner.auth)
    assert twin.status_code == 403 and b"no-uid-conflict" in twin.content
    body = (b'<?xml version="1.0"?><d:sync-collection xmlns:d="DAV:"><d:sync-token>http://example.org/other/9'
            b'</d:sync-token><d:sync-level>1</d:sync-level><d:prop><d:getetag/></d:prop></d:sync-collection>')
    report = await http.request("REPORT", collection, content=body, auth=owner.auth)
    assert report.status_code == 403 and b"valid-sync-token" in report.content


async def test_untrusted_and_declined_events_stay_off_the_phone(http: httpx.AsyncClient, owner: DavUser,
                                                                 services: Services) -> None:
    calendar = await services.calendar.objects.calendars_of(owner.user.id)
    guess = await services.calendar.writer.create(
        calendar[0].id, owner.user.id,
        EventDraft(uid="guess@x", start=datetime(2026, 12, 20, 9, tzinfo=UTC), title="Model's guess",
                   source=EventSource.LLM),
        user_zone="Europe/Berlin", reference=datetime(2026, 12, 1, tzinfo=UTC))
    declined = await services.calendar.writer.create(
        calendar[0].id, owner.user.id,
        EventDraft(uid="declined@x", start=datetime(2026, 12, 22, 9, tzinfo=UTC), title="Said no",
                   source=EventSource.ICS, my_participation="declined"),
        user_zone="Europe/Berlin", reference=datetime(2026, 12, 1, tzinfo=UTC))
    mine = await services.calendar.editor.create(owner.user.id, EventForm(
        title="Mine", start=date(2026, 12, 21), end=date(2026, 12, 22), all_day=True), user_zone="Europe/Berlin")
    collection = await calendar_path(services, owner)
    response = await http.request("PROPFIND", collection, auth=owner.auth, headers={"Depth": "1"},
                                  content=b'<d:propfind xmlns:d="DAV:"><d:prop><d:getetag/></d:prop></d:propfind>')
    assert list(listed(response)) == [f"{collection}{mine}.ics"]
    assert (await http.get(f"{collection}{guess}.ics", auth=owner.auth)).status_code == 404
    assert (await http.get(f"{collection}{declined}.ics", auth=owner.auth)).status_code == 404


async def test_extracted_events_carry_provenance_and_a_phone_edit_is_not_rewritten_by_mail(
        http: httpx.AsyncClient, owner: DavUser, services: Services, base_url: str) -> None:
    start = datetime(2026, 12, 9, 9, tzinfo=UTC)
    account_id = await account_rows(services).create(user_id=owner.user.id, provider_kind=ProviderKind.LOCAL,
                                                     name="Archive", email=owner.email)
    roles = await services.labels.role_ids(owner.user.id)

    async def deliver(raw: bytes, received: datetime) -> int:
        result = await services.pipeline.ingest([parse_message(raw, account_id=account_id, received_at=received,
                                                               label_ids=(roles[LabelRole.INBOX],))])
        await services.calendar.extraction.run(owner.user.id, [m.id for m in result.messages])
        return int(result.messages[0].thread_id or 0)

    thread = await deliver(invite("review@x", title="Review", start=start, attendee=owner.email),
                           start - timedelta(days=3))
    collection = await calendar_path(services, owner)
    [href] = list(listed(await http.request("PROPFIND", collection, auth=owner.auth, headers={"Depth": "1"})))
    got = await http.get(href, auth=owner.auth)
    assert "X-PLMAIL-SOURCE:ics" in got.text
    assert f"URL:{base_url}/thread/{thread}" in got.text.replace("\r\n ", "")

    moved = got.text.replace("SUMMARY:Review", "SUMMARY:Review (my notes)")
    assert (await http.put(href, content=moved, auth=owner.auth,
                           headers={"If-Match": got.headers["etag"]})).status_code == 204
    # The organiser's next revision renames it; the person's edit on the phone stands (the seed's rule 5).
    await deliver(invite("review@x", title="Quarterly review", sequence=1, start=start, attendee=owner.email),
                  start - timedelta(days=2))
    [event] = await services.calendar.objects.events_of(owner.user.id, None, limit=5)
    assert event.is_user_edited and event.values.title == "Review (my notes)"


async def test_an_event_put_over_caldav_is_a_jmap_change_at_once(http: httpx.AsyncClient, owner: DavUser,
                                                                 services: Services) -> None:
    """Two-way across the fronts: the phone's event is in JMAP's CalendarEvent/changes and /get right away."""
    jmap = {"Authorization": f"Bearer {owner.password}"}
    using = ["urn:ietf:params:jmap:core", "urn:ietf:params:jmap:calendars"]
    account = f"u{owner.user.id}"

    async def call(name: str, arguments: dict[str, object]) -> dict[str, object]:
        response = await http.post("/jmap/api", headers=jmap, json={
            "using": using, "methodCalls": [[name, {"accountId": account, **arguments}, "c0"]]})
        assert response.status_code == 200, response.text
        result_name, result, _ = response.json()["methodResponses"][0]
        assert result_name == name, result
        return dict(result)

    state = (await call("CalendarEvent/get", {"ids": []}))["state"]
    path = await calendar_path(services, owner) + "phone.ics"
    assert (await http.put(path, content=EVENT.format(uid="phone@x", title="From the phone"),
                           auth=owner.auth)).status_code == 201
    changes = await call("CalendarEvent/changes", {"sinceState": state})
    created = changes["created"]
    assert isinstance(created, list) and len(created) == 1
    got = await call("CalendarEvent/get", {"ids": created})
    events = got["list"]
    assert isinstance(events, list) and events[0]["title"] == "From the phone" and events[0]["uid"] == "phone@x"


async def test_a_proposal_appears_on_the_phone_only_once_accepted(http: httpx.AsyncClient, owner: DavUser,
                                                                  services: Services) -> None:
    """The seed: a proposal is not an event until the person accepts it."""
    account_id = await account_rows(services).create(user_id=owner.user.id, provider_kind=ProviderKind.LOCAL,
                                                     name="Archive", email=owner.email)
    roles = await services.labels.role_ids(owner.user.id)
    raw = make_message(subject="Meeting", sender="Anna <anna@example.org>", to=(owner.email,),
                       date=datetime(2022, 3, 1, 8, tzinfo=UTC),
                       body="Hi,\n\nCan we meet on March 10, 2022 at 3pm?\n\nAnna\n")
    result = await services.pipeline.ingest([parse_message(raw, account_id=account_id,
                                                           received_at=datetime(2022, 3, 1, 8, tzinfo=UTC),
                                                           label_ids=(roles[LabelRole.INBOX],))])
    await services.calendar.proposals.run(owner.user.id, [m.id for m in result.messages])
    [proposal] = await services.db.fetch("SELECT id FROM event_proposal WHERE user_id = $1", owner.user.id)
    collection = await calendar_path(services, owner)
    body = b'<d:propfind xmlns:d="DAV:"><d:prop><d:getetag/></d:prop></d:propfind>'
    before = await http.request("PROPFIND", collection, auth=owner.auth, headers={"Depth": "1"}, content=body)
    assert listed(before) == {}

    await services.calendar.proposals.accept(owner.user.id, int(proposal["id"]), user_zone="Europe/Berlin")
    after = listed(await http.request("PROPFIND", collection, auth=owner.auth, headers={"Depth": "1"},
                                      content=body))
    assert len(after) == 1
    got = await http.get(next(iter(after)), auth=owner.auth)
    assert "X-PLMAIL-SOURCE:accepted_proposal" in got.text
