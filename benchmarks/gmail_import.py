"""Wall time of a Gmail first import against the floor Gmail's quota allows.

Usage: .venv/bin/python benchmarks/gmail_import.py [--messages 10000] [--limit 6000] [--fetch-units 60]

A private PostgreSQL cluster, the real app services and saq workers (ingest, ingest_backlog), and the fake
Gmail on loopback with a per-user quota of `--limit` units a minute (a project created since May 2026 has
6,000), charging `--fetch-units` per message fetched in format=raw (plmail measured 60). Everything runs in
real time: the account is connected, one sync is asked for, and the clock runs until every message is stored.

The floor is the units the import cannot avoid (every message fetched once, plus its listing and label calls)
divided by the limit. plmail's pacer starts at 15,000 units a minute, learns the real limit from the first
refusal and then runs at 85 % of it, so the expected ratio is a little above 1 / 0.85 ≈ 1.18.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import math
import random
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.cluster import private_cluster
from plmail.config import Settings
from plmail.domain.account_services import OAuthProvider
from plmail.domain.enums import QueueName
from plmail.jobs.catalog import default_catalog
from plmail.jobs.workers import WorkerSupervisor
from plmail.providers.oauth import ConnectedIdentity, TokenSet
from plmail.providers.oauth_accounts import OAuthServices
from plmail.services import open_services
from tests.support.fakes import FakeServer, GmailFake, rfc822
from tests.support.fakes.gmail import DEFAULT_COSTS
from tests.support.repos import account_admin

CATEGORIES = ("CATEGORY_PERSONAL", "CATEGORY_SOCIAL", "CATEGORY_PROMOTIONS", "CATEGORY_UPDATES", "CATEGORY_FORUMS")


def seed(fake: GmailFake, messages: int) -> None:
    rng = random.Random(1)
    work = fake.mailbox.add_label("Work/Projects")
    made = thread_no = 0
    while made < messages:
        thread_no += 1
        category = rng.choice(CATEGORIES)
        place = rng.choices(["INBOX", None, "SENT", "SPAM", "TRASH", work.id], weights=[40, 35, 10, 5, 5, 5])[0]
        thread_id: str | None = None
        for n in range(min(rng.randint(1, 4), messages - made)):
            labels = [category, *([place] if place else []), *(["UNREAD"] if rng.random() < 0.3 else [])]
            root = f"<b{thread_no}@bench.example>"
            raw = rfc822(f"Thread {thread_no}" if n == 0 else f"Re: Thread {thread_no}",
                         message_id=root if n == 0 else f"<b{thread_no}.{n}@bench.example>",
                         in_reply_to=root if n else None, body=f"Message {made} " + "lorem ipsum " * 40)
            added = fake.mailbox.add_message(raw, label_ids=labels, thread_id=thread_id)
            thread_id = thread_id or added.thread_id
            made += 1


async def run(settings: Settings, dsn: str, messages: int, limit: int, fetch_units: int) -> None:
    fake = GmailFake(units_per_minute=limit)
    fake.quota.set_fetch_units(fetch_units)
    seeded = time.perf_counter()
    seed(fake, messages)
    print(f"fake Gmail: {messages} messages in {fake.mailbox.thread_count()} threads "
          f"(seeded in {time.perf_counter() - seeded:.1f} s); limit {limit} units/min, {fetch_units} units/fetch")
    async with FakeServer(fake) as server:
        settings = dataclasses.replace(settings, google_base_url=server.url, google_client_id=fake.client_id,
                                       google_client_secret=fake.client_secret)
        services = await open_services(settings, dsn)
        supervisor = WorkerSupervisor(services, default_catalog(), [QueueName.INGEST, QueueName.INGEST_BACKLOG],
                                      grace_seconds=2)
        try:
            user = await services.users.create_user("bench@example.org", "correct horse")
            pair = fake.oauth.issue(fake.mailbox.email)
            tokens = TokenSet(pair.access_token, pair.refresh_token,
                              datetime.now(UTC) + timedelta(seconds=pair.expires_in), pair.scope)
            supervisor.start()
            started = time.perf_counter()
            outcome = await services.providers.get(OAuthServices).connect.connect(
                user.id, ConnectedIdentity(OAuthProvider.GOOGLE, fake.mailbox.email, "Bench", tokens))
            account_id = outcome.account_id  # connecting asks for the first sync; the workers do the rest
            last_print = 0.0
            while True:
                await asyncio.sleep(2)
                progress = await services.importer.progress(account_id)
                stored = int(await services.db.fetchval(
                    "SELECT count(*) FROM message WHERE account_id = $1", account_id))
                elapsed = time.perf_counter() - started
                if elapsed - last_print >= 60:
                    last_print = elapsed
                    print(f"  {elapsed / 60:6.1f} min  {stored:>6} stored  "
                          f"{len(fake.quota.rejections)} refusals", flush=True)
                if stored >= messages and progress is not None and not progress.importing:
                    break
            wall = time.perf_counter() - started
            record = await account_admin(services).for_job(account_id)
        finally:
            await supervisor.stop()
            await services.close()
    calls = list(fake.calls)
    fetches = sum(1 for c in calls if c.method == "users.messages.get" and c.status == 200)
    needed = messages * fetch_units + sum(
        DEFAULT_COSTS.get(c.method, 1) for c in calls if c.status == 200 and c.method != "users.messages.get")
    floor = needed / limit * 60
    spent: dict[int, int] = {}
    for call in calls:
        spent[int(call.at // 60)] = spent.get(int(call.at // 60), 0) + call.units
    print(f"stored {messages} messages with {fetches} fetches; refused requests (429): {len(fake.quota.rejections)}; "
          f"busiest minute {max(spent.values())} units; account status {record.status.value if record else '?'}")
    if fake.quota.rejections:
        after = [c for c in calls if c.at > fake.quota.rejections[-1].at and c.units]
        if len(after) > 1:
            span = after[-1].at - after[0].at
            print(f"pace after the last refusal: {sum(c.units for c in after) / span * 60:,.0f} units/min "
                  f"({sum(c.units for c in after) / span * 60 / limit:.1%} of the limit)")
    print(f"wall time        {wall / 60:8.2f} min ({wall:.0f} s)")
    print(f"theoretical min  {floor / 60:8.2f} min ({math.ceil(floor)} s: {needed} units at {limit}/min)")
    print(f"ratio            {wall / floor:8.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--messages", type=int, default=10_000)
    parser.add_argument("--limit", type=int, default=6_000, help="the fake's per-user units per minute")
    parser.add_argument("--fetch-units", type=int, default=60, help="units the fake charges per format=raw fetch")
    args = parser.parse_args()
    with private_cluster("gmail") as cluster:
        asyncio.run(run(cluster.settings, cluster.dsn, args.messages, args.limit, args.fetch_units))


if __name__ == "__main__":
    main()
