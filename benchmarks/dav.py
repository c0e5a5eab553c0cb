"""CalDAV and CardDAV over HTTP: sync-collection of a calendar with 5,000 events and of an address book with 5,000
cards (the initial sync, then an incremental one after ten changes), and calendar-query for one month.

Usage: .venv/bin/python benchmarks/dav.py [--events 5000] [--cards 5000] [--runs 100]

Starts a private PostgreSQL cluster (plmail's embedded settings), writes the events through the calendar's writer
(a tenth of them weekly series of 20, the rest single events over two years) and the cards through the contacts
store, starts a real `plmail serve` on loopback and times the requests DAVx⁵ makes, end to end over HTTP with an
app password: sync-collection asking for getetag (what DAVx⁵ asks before a multiget), the same after ten events or
cards changed, and calendar-query with a month's time range asking for getetag and for calendar-data.
Prints p50/p95 per request (ms) and the load average beside them.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.cluster import private_cluster
from benchmarks.scale import rss_mib, serve, wait_healthy
from plmail.calendar.recurrence import rrule_to_jscalendar
from plmail.calendar.writer import EventDraft
from plmail.config import Settings
from plmail.services import open_services

SYNC = ('<d:sync-collection xmlns:d="DAV:"><d:sync-token>{token}</d:sync-token><d:sync-level>1</d:sync-level>'
        '<d:prop><d:getetag/></d:prop></d:sync-collection>')
QUERY = ('<c:calendar-query xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav"><d:prop><d:getetag/>{data}'
         '</d:prop><c:filter><c:comp-filter name="VCALENDAR"><c:comp-filter name="VEVENT"><c:time-range '
         'start="{start}" end="{end}"/></c:comp-filter></c:comp-filter></c:filter></c:calendar-query>')
START = datetime(2027, 1, 4, 8, tzinfo=UTC)


async def fill(settings: Settings, dsn: str, events: int, cards: int) -> tuple[int, str, str, str]:
    """(user id, app password, calendar path, address book path)."""
    services = await open_services(settings, dsn)
    try:
        user = await services.users.create_user("bench@example.org", "correct horse", time_zone="Europe/Berlin")
        password = (await services.app_passwords.create(user.id, "Phone")).token
        [calendar] = await services.calendar.objects.calendars_of(user.id)
        writer = services.calendar.writer
        for index in range(events):
            start = START + timedelta(hours=7 * index)
            rule = rrule_to_jscalendar("FREQ=WEEKLY;COUNT=20", start=start, time_zone=None) if index % 10 == 0 \
                else None
            await writer.create(calendar.id, user.id, EventDraft(
                uid=f"bench-{index}@example.org", start=start, end=start + timedelta(hours=1), title=f"Event {index}",
                recurrence_rules=(rule,) if rule else ()), user_zone="Europe/Berlin", reference=start)
        books = services.address_books
        [personal, *_] = await books.collections(user.id)
        for index in range(cards):
            card = (f"BEGIN:VCARD\r\nVERSION:3.0\r\nUID:card-{index}\r\nFN:Person {index}\r\n"
                    f"EMAIL:person{index}@example.net\r\nEND:VCARD\r\n")
            await books.put(user.id, personal.key, f"card-{index}.vcf", card.encode(), if_match=None,
                            if_none_match=True)
        return (user.id, password, f"/dav/{user.id}/calendars/{calendar.id}/",
                f"/dav/{user.id}/addressbooks/{personal.key}/")
    finally:
        await services.close()


async def change(settings: Settings, dsn: str, user_id: int, count: int) -> None:
    """Ten events renamed in plmail and ten cards rewritten, as a day's changes."""
    services = await open_services(settings, dsn)
    try:
        events = await services.calendar.objects.events_of(user_id, None, limit=count)
        for event in events:
            await services.calendar.writer.mark_user_edited(user_id, event.id)
        for index in range(count):
            card = (f"BEGIN:VCARD\r\nVERSION:3.0\r\nUID:card-{index}\r\nFN:Person {index} (new)\r\n"
                    f"EMAIL:person{index}@example.net\r\nEND:VCARD\r\n")
            await services.address_books.put(user_id, "personal", f"card-{index}.vcf", card.encode(),
                                             if_match=None, if_none_match=False)
    finally:
        await services.close()


def timed(http: httpx.Client, runs: int, path: str, body: str, depth: str = "1") -> tuple[float, float, str]:
    samples: list[float] = []
    text = ""
    for _ in range(runs):
        started = time.perf_counter()
        response = http.request("REPORT", path, content=body.encode(), headers={"Depth": depth})
        samples.append((time.perf_counter() - started) * 1000)
        if response.status_code != 207:
            raise SystemExit(f"REPORT {path}: {response.status_code} {response.text[:500]}")
        text = response.text
    samples.sort()
    return statistics.median(samples), samples[max(int(len(samples) * 0.95) - 1, 0)], text


def token_of(text: str) -> str:
    return text.rsplit("<d:sync-token>", 1)[1].split("<", 1)[0]


def run(settings: Settings, dsn: str, events: int, cards: int, runs: int) -> None:
    started = time.perf_counter()
    user_id, password, calendar, book = asyncio.run(fill(settings, dsn, events, cards))
    print(f"({events} events and {cards} cards written in {time.perf_counter() - started:.1f} s)")
    port = 18_000 + os.getpid() % 1000
    log = settings.data_dir.parent / "serve.log"
    process = serve(settings, dsn, port, log)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(url, process, log)
        with httpx.Client(base_url=url, auth=("bench@example.org", password), timeout=120) as http:
            print(f"{'request':<58}{'p50 ms':>10}{'p95 ms':>10}   responses")
            tokens = {}
            for label, path in (("calendar", calendar), ("address book", book)):
                p50, p95, text = timed(http, max(runs // 10, 5), path, SYNC.format(token=""))
                tokens[path] = token_of(text)
                print(f"{'sync-collection, initial, ' + label:<58}{p50:>10.1f}{p95:>10.1f}   "
                      f"{text.count('<d:response>')}")
            asyncio.run(change(settings, dsn, user_id, 10))
            for label, path in (("calendar", calendar), ("address book", book)):
                p50, p95, text = timed(http, runs, path, SYNC.format(token=tokens[path]))
                print(f"{'sync-collection after 10 changes, ' + label:<58}{p50:>10.1f}{p95:>10.1f}   "
                      f"{text.count('<d:response>')}")
            month = {"start": "20270301T000000Z", "end": "20270401T000000Z"}
            for label, data in (("getetag", ""), ("calendar-data", "<c:calendar-data/>")):
                p50, p95, text = timed(http, runs, calendar, QUERY.format(data=data, **month))
                print(f"{'calendar-query, one month, ' + label:<58}{p50:>10.1f}{p95:>10.1f}   "
                      f"{text.count('<d:response>')}")
        print(f"plmail serve RSS after the runs: {rss_mib(process.pid):.0f} MiB; load average "
              f"{' '.join(f'{v:.2f}' for v in os.getloadavg())}")
    finally:
        process.terminate()
        process.wait(30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--events", type=int, default=5_000)
    parser.add_argument("--cards", type=int, default=5_000)
    parser.add_argument("--runs", type=int, default=100)
    args = parser.parse_args()
    with private_cluster("dav") as cluster:
        run(cluster.settings, cluster.dsn, args.events, args.cards, args.runs)


if __name__ == "__main__":
    main()
