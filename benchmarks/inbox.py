"""Latency of the list pages: inbox tab, a label view and full-text search over 100,000 threads.

Usage: .venv/bin/python benchmarks/inbox.py [--threads 100000] [--runs 200]

Fills a private PostgreSQL cluster (plmail's embedded settings) with threads in two accounts through
SQL, then times the exact queries the pages run (MailReader) and prints p50/p95 per page kind.
Target: p95 under 50 ms for list pages.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.cluster import private_cluster
from plmail.config import Settings
from plmail.domain.enums import Category, LabelRole, ProviderKind
from plmail.services import Services, open_services
from tests.support.repos import account_rows

WORDS = [
    "invoice",
    "meeting",
    "project",
    "budget",
    "travel",
    "flight",
    "hotel",
    "report",
    "quarterly",
    "review",
    "design",
    "contract",
    "offer",
    "schedule",
    "dinner",
    "weekend",
    "family",
    "photos",
    "update",
    "release",
    "server",
    "backup",
    "payment",
    "order",
    "delivery",
    "account",
    "security",
    "password",
    "newsletter",
    "discount",
    "event",
    "ticket",
    "concert",
    "museum",
    "garden",
    "recipe",
    "holiday",
    "insurance",
    "doctor",
    "appointment",
    "school",
    "homework",
    "football",
    "training",
    "cinema",
    "library",
]

FILL = """
WITH params AS (SELECT $1::int AS n, $2::int AS acc1, $3::int AS acc2)
INSERT INTO message_thread (id, account_id, subject, normalized_subject, last_message_at, message_count, unread_count,
                            attachment_count, category, category_pinned, threading_method, binned, created_at,
                            updated_at)
SELECT g, CASE WHEN g % 2 = 0 THEN p.acc1 ELSE p.acc2 END, 'Thread ' || g, 'thread ' || g,
       now() - make_interval(mins => g * 7), 1 + (g % 3), CASE WHEN g % 5 = 0 THEN 1 ELSE 0 END, 0,
       (ARRAY['primary','primary','primary','promotions','updates','social','forums'])[1 + g % 7],
       false, 'references', false, now(), now()
  FROM params p, generate_series(1, (SELECT n FROM params)) AS g
"""
FILL_MESSAGES = """
INSERT INTO message (account_id, thread_id, subject, from_address, from_name, received_at, sent_at, seen_at,
                     body_text, preview, category, size, has_attachments, created_at, updated_at)
SELECT t.account_id, t.id, t.subject, 'person' || (t.id % 500) || '@example' || (t.id % 40) || '.org',
       'Person ' || (t.id % 500), t.last_message_at - make_interval(mins => k),
       t.last_message_at - make_interval(mins => k),
       CASE WHEN t.unread_count > 0 AND k = 0 THEN NULL ELSE now() END,
       (SELECT string_agg(w, ' ') FROM (SELECT ($3::text[])[1 + ((t.id * 31 + k * 17 + i * 7) % $4)] AS w
                                          FROM generate_series(1, 60) AS i) words),
       'Preview of thread ' || t.id, t.category, 3000, false, now(), now()
  FROM message_thread t, generate_series(0, t.message_count - 1) AS k
 WHERE t.id BETWEEN $1 AND $2
"""
LABELS = """
INSERT INTO message_label (message_id, label_id)
SELECT m.id, CASE WHEN m.thread_id % 10 < 7 THEN $1 ELSE $2 END FROM message m;
INSERT INTO message_label (message_id, label_id) SELECT m.id, $3 FROM message m WHERE m.thread_id % 10 = 3;
INSERT INTO thread_label (thread_id, label_id)
SELECT DISTINCT m.thread_id, ml.label_id FROM message m JOIN message_label ml ON ml.message_id = m.id;
"""


async def fill(services: Services, threads: int) -> tuple[int, int, int]:
    user = await services.users.create_user("bench@example.org", "benchmark password")
    acc1 = await account_rows(services).create(
        user_id=user.id, provider_kind=ProviderKind.LOCAL, name="One", email="bench@example.org"
    )
    acc2 = await account_rows(services).create(
        user_id=user.id, provider_kind=ProviderKind.LOCAL, name="Two", email="bench2@example.org"
    )
    work = await fill_threads(services, user.id, acc1, acc2, threads)
    return user.id, work, acc1


async def fill_threads(services: Services, user_id: int, acc1: int, acc2: int, threads: int) -> int:
    """`threads` threads (ids 1..threads, so before any other) of 1-3 messages in two accounts, 70 % in the
    Inbox, 10 % also labelled Work; returns the Work label's id."""
    roles = await services.labels.role_ids(user_id)
    work = await services.labels.find_or_create(user_id, "Work")
    db = services.db
    await db.execute(FILL, threads, acc1, acc2)
    await db.execute("SELECT setval('message_thread_id_seq', $1)", threads)
    step = 10_000
    for start in range(1, threads + 1, step):
        await db.execute(FILL_MESSAGES, start, start + step - 1, list(WORDS), len(WORDS))
    async with db.connection() as conn:
        await conn.execute(
            LABELS.replace("$1", str(roles[LabelRole.INBOX]))
            .replace("$2", str(roles[LabelRole.ARCHIVE]))
            .replace("$3", str(work))
        )
        await conn.execute("ANALYZE")
    return work


async def measure(runs: int, call: Callable[[int], Awaitable[object]]) -> tuple[float, float]:
    await call(0)  # warm the plan and the cache
    samples = []
    for i in range(runs):
        started = time.perf_counter()
        await call(i)
        samples.append((time.perf_counter() - started) * 1000)
    samples.sort()
    return statistics.median(samples), samples[int(len(samples) * 0.95) - 1]


async def run(settings: Settings, dsn: str, threads: int, runs: int) -> None:
    services = await open_services(settings, dsn)
    try:
        started = time.perf_counter()
        user_id, work, account = await fill(services, threads)
        messages = await services.db.fetchval("SELECT count(*) FROM message")
        print(
            f"filled {threads:,} threads / {messages:,} messages in 2 accounts in {time.perf_counter() - started:.0f} s"
        )
        reader = services.reader
        rng = random.Random(3)
        cases: list[tuple[str, Callable[[int], Awaitable[object]]]] = [
            ("inbox, General tab, page 1", lambda i: reader.inbox(user_id, Category.GENERAL, 1)),
            (
                "inbox, random tab and page 1-5",
                lambda i: reader.inbox(user_id, rng.choice(list(Category)), rng.randint(1, 5)),
            ),
            ("label view (Work), page 1", lambda i: reader.label(user_id, work, 1)),
            ("label view, one account", lambda i: reader.label(user_id, work, 1, account_id=account)),
            ("full-text search, two words", lambda i: reader.search(user_id, " ".join(rng.sample(WORDS, 2)))),
            ("search with from: operator", lambda i: reader.search(user_id, f"from:example{rng.randint(0, 39)}.org")),
        ]
        print(f"{'page':<36}{'p50 ms':>10}{'p95 ms':>10}")
        for name, call in cases:
            p50, p95 = await measure(runs, call)
            print(f"{name:<36}{p50:>10.1f}{p95:>10.1f}")
    finally:
        await services.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--threads", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=200)
    args = parser.parse_args()
    with private_cluster("inbox") as cluster:
        asyncio.run(run(cluster.settings, cluster.dsn, args.threads, args.runs))

if __name__ == "__main__":
    main()
