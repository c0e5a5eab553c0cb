"""What an untrusted event source implies (seed: "eine nicht vertrauenswürdige Quelle ist dokumentiert als eine,
die nie nach außen … geschoben wird, in der Konfidenz gedeckelt ist und mit einer ausdrücklichen Bestätigung
angezeigt wird"), for every source `is_trusted()` calls untrusted, and that method staying an exhaustive match."""

from __future__ import annotations

import ast
import inspect
import re
import textwrap
from datetime import timedelta

import httpx
from icalendar import Calendar

from plmail.calendar import sources
from plmail.calendar.sources import EventSource
from plmail.calendar.writer import EventDraft
from plmail.domain.calendar import EventStatus
from tests.integration.calendar.conftest import Diary, utc
from tests.integration.calendar.test_feeds import subscribe
from tests.support.repos import calendar_rows
from tests.support.web import sign_in

# The seed's confidences of the parsed sources: an invitation 100, schema.org markup 90 ("statt der 100").
MARKUP_CONFIDENCE = 90


async def test_an_untrusted_source_writes_a_tentative_capped_event_shown_as_unconfirmed(
    client: httpx.AsyncClient, diary: Diary,
) -> None:
    services = diary.services
    calendar_id = await calendar_rows(services).ensure_default(diary.user_id, "Calendar")
    start = utc(2022, 3, 16, 10)
    written: dict[EventSource, int] = {}
    for n, source in enumerate(EventSource):
        begin = start + timedelta(hours=n)
        draft = EventDraft(uid=f"{source.value}@x", start=begin, end=begin + timedelta(minutes=30),
                           title=f"From {source.value}", source=source, confidence=100, status=EventStatus.CONFIRMED)
        event_id = await services.calendar.writer.create(calendar_id, diary.user_id, draft, user_zone="UTC",
                                                         reference=start)
        assert event_id is not None
        written[source] = event_id
    rows = {r["id"]: r for r in await services.db.fetch("SELECT id, status, confidence FROM calendar_event")}
    untrusted = [s for s in EventSource if not s.is_trusted()]
    assert untrusted == [EventSource.LLM]  # the seed: isTrusted() answers false for Llm alone
    for source, event_id in written.items():
        row = rows[event_id]
        if source.is_trusted():
            assert (row["status"], row["confidence"]) == ("confirmed", 100), source
        else:
            assert row["status"] == "tentative", source
            assert row["confidence"] < MARKUP_CONFIDENCE, source  # capped below every parsed source

    assert (await sign_in(client, "reader@example.org", "correct horse")).status_code == 200
    week = await client.get("/calendar?view=week&day=2022-03-16")
    entries = dict(re.findall(r'data-event-id="(\d+)"[^>]*>(.*?)</a>', week.text, re.DOTALL))  # the time grid
    assert {int(event_id) for event_id in entries} == set(written.values())
    marked = {int(event_id) for event_id, html in entries.items() if "unconfirmed" in html}
    assert marked == {written[s] for s in untrusted}
    page = await client.get(f"/calendar/event/{written[EventSource.LLM]}")
    assert 'class="badge unconfirmed"' in page.text
    trusted_page = await client.get(f"/calendar/event/{written[EventSource.ICS]}")
    assert "unconfirmed" not in trusted_page.text


async def test_a_subscription_feed_never_carries_an_untrusted_sources_event(
    client: httpx.AsyncClient, diary: Diary,
) -> None:
    """The seed: an untrusted source is "nie nach außen ... geschoben"; a feed is what other calendars read."""
    services = diary.services
    calendar_id = await calendar_rows(services).ensure_default(diary.user_id, "Calendar")
    start = utc(2022, 3, 16, 10)
    for n, source in enumerate(EventSource):
        begin = start + timedelta(hours=n)
        draft = EventDraft(uid=f"{source.value}@x", start=begin, end=begin + timedelta(minutes=30),
                           title=f"From {source.value}", source=source, confidence=100)
        assert await services.calendar.writer.create(calendar_id, diary.user_id, draft, user_zone="UTC",
                                                     reference=start) is not None
    assert (await sign_in(client, "reader@example.org", "correct horse")).status_code == 200
    feed = await client.get("/" + await subscribe(client, calendar_id))
    assert feed.status_code == 200
    uids = {str(c["uid"]) for c in Calendar.from_ical(feed.content).walk("VEVENT")}
    assert uids == {f"{s.value}@x" for s in EventSource} - {"llm@x"}  # the seed names Llm as the one untrusted


def test_is_trusted_is_an_exhaustive_match_without_a_default() -> None:
    """A new source must be classified by hand; a wildcard case would let it inherit calendar-write permission."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(sources.EventSource.is_trusted)))
    matches = [node for node in ast.walk(tree) if isinstance(node, ast.Match)]
    assert len(matches) == 1
    named: set[str] = set()
    for case in matches[0].cases:
        assert not (isinstance(case.pattern, ast.MatchAs) and case.pattern.pattern is None), "a default case"
        assert case.guard is None
        named |= {node.attr for node in ast.walk(case.pattern) if isinstance(node, ast.Attribute)}
    assert named == {member.name for member in EventSource}
    assert any(isinstance(node, ast.Call) and getattr(node.func, "id", "") == "assert_never" for node in ast.walk(tree))


async def test_an_ics_file_over_a_models_event_keeps_it_capped_and_unconfirmed(
    client: httpx.AsyncClient, diary: Diary,
) -> None:
    """Issue 30: the untrusted-source rule holds when a file restates the event: importing an .ics whose UID is a
    model-written event updates its fields, but the source, the confidence cap and the "unconfirmed" marking stay
    until a person confirms it."""
    services = diary.services
    calendar_id = await calendar_rows(services).ensure_default(diary.user_id, "Calendar")
    start = utc(2022, 3, 16, 10)
    draft = EventDraft(uid="guess@x", start=start, end=start + timedelta(minutes=30), title="Dentist (guessed)",
                       source=EventSource.LLM, confidence=100, status=EventStatus.CONFIRMED)
    event_id = await services.calendar.writer.create(calendar_id, diary.user_id, draft, user_zone="UTC",
                                                     reference=start)
    assert event_id is not None
    ics = (b"BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//test//EN\r\nBEGIN:VEVENT\r\nUID:guess@x\r\nSEQUENCE:1\r\n"
           b"DTSTAMP:20220301T000000Z\r\nDTSTART:20220316T110000Z\r\nDTEND:20220316T113000Z\r\n"
           b"SUMMARY:Dentist\r\nSTATUS:CONFIRMED\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n")
    report = await services.calendar.importer.run(diary.user_id, calendar_id, ics, user_zone="UTC")
    assert (report.added, report.updated, report.skipped) == (0, 1, 0), report.reasons
    row = await services.db.fetchrow("SELECT title, source, status, confidence FROM calendar_event WHERE id = $1",
                                     event_id)
    assert row["title"] == "Dentist"  # the file's fields were taken
    assert row["source"] == "llm" and row["status"] == "tentative"
    assert row["confidence"] < MARKUP_CONFIDENCE  # still capped below every parsed source
    assert (await sign_in(client, "reader@example.org", "correct horse")).status_code == 200
    page = await client.get(f"/calendar/event/{event_id}")
    assert 'class="badge unconfirmed"' in page.text
    again = await services.calendar.importer.run(diary.user_id, calendar_id, ics, user_zone="UTC")
    assert again.reasons == ["guess@x: unchanged"]  # the capped copy is what the file says, for this source
