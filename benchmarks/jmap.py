"""JMAP latency over HTTP: Email/query (Inbox, 50, collapseThreads) chained into Email/get of those 50.

Usage: .venv/bin/python benchmarks/jmap.py [--messages 100000] [--accounts 3] [--runs 300]

Fills a private PostgreSQL cluster (plmail's embedded settings) with the mail of one user's accounts through
SQL (threads of two or three messages, each thread in one account, 70 % of them in the Inbox), starts a real
`plmail serve` on loopback, and times the request a phone's list view makes, end to end over HTTP with an app
password: in the user's unified account (every account's mail behind the user's labels, the primary account
a phone uses) and in one connected account. Then 1,000 new messages arrive (with their change-log rows, as the
pipeline writes them) and the catch-up a phone makes, Email/changes from the state before them, is timed.
Prints p50/p95 per variant. Targets (issue 20): p95 under 50 ms for the unified list view and for /changes.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.cluster import private_cluster
from plmail.config import Settings
from plmail.domain.enums import LabelRole, ProviderKind
from plmail.services import open_services
from tests.support.repos import account_rows

WORDS = ["invoice", "meeting", "project", "budget", "travel", "flight", "hotel", "report", "quarterly", "review",
         "design", "contract", "offer", "schedule", "dinner", "weekend", "family", "photos", "update", "release"]

THREADS = """
INSERT INTO message_thread (id, account_id, subject, normalized_subject, last_message_at, message_count, unread_count,
                            attachment_count, category, category_pinned, threading_method, binned, created_at,
                            updated_at)
SELECT g, ($2::int[])[1 + g % cardinality($2::int[])], 'Thread ' || g, 'thread ' || g, now(), 0, 0, 0, 'primary',
       false, 'references', false, now(), now()
  FROM generate_series(1, $1) AS g
"""
# Message i belongs to thread 1 + i*2/5 (two or three messages, close in time), newest first by id; the thread's
# account is its message's.
MESSAGES = """
INSERT INTO message (id, account_id, thread_id, subject, from_address, from_name, to_addresses, cc_addresses,
                     bcc_addresses, reply_to, in_reply_to, thread_references, headers, flags, received_at, sent_at,
                     seen_at, body_text, preview, category, size, has_attachments, rfc_message_id, created_at,
                     updated_at)
SELECT i, ($3::int[])[1 + (1 + (i * 2) / 5) % cardinality($3::int[])], 1 + (i * 2) / 5,
       'Thread ' || (1 + (i * 2) / 5),
       'person' || (i % 500) || '@example' || (i % 40) || '.org', 'Person ' || (i % 500),
       '[{"name": "Me", "address": "bench@example.org"}]'::jsonb, '[]'::jsonb, '[]'::jsonb,
       '[]'::jsonb, '[]'::jsonb, '[]'::jsonb, '{"Subject": "Thread"}'::jsonb, '[]'::jsonb,
       now() - make_interval(mins => ($4 - i)::int), now() - make_interval(mins => ($4 - i)::int),
       CASE WHEN i % 4 = 0 THEN NULL ELSE now() END,
       (SELECT string_agg(w, ' ') FROM (SELECT ($5::text[])[1 + ((i * 31 + k * 7) % 20)] AS w
                                          FROM generate_series(1, 40) AS k) words),
       'Preview of message ' || i, 'primary', 3000 + i % 997, i % 9 = 0, 'm' || i || '@bench.example', now(), now()
  FROM generate_series($1::bigint, $2::bigint) AS i
"""
LABELS = """
INSERT INTO message_label (message_id, label_id)
SELECT m.id, CASE WHEN m.thread_id % 10 < 7 THEN $1::int ELSE $2::int END FROM message m;
INSERT INTO thread_label (thread_id, label_id)
SELECT DISTINCT m.thread_id, ml.label_id FROM message m JOIN message_label ml ON ml.message_id = m.id;
"""


# What the pipeline logs for new mail: the Email created, its Thread updated (RFC 8620 §5.2).
NEW_MAIL_LOG = """
INSERT INTO jmap_change_log (account_id, object_type, entity_id, change_type, created_at)
SELECT m.account_id, x.kind, CASE WHEN x.kind = 'Email' THEN m.id ELSE m.thread_id END::text, x.change, now()
  FROM message m CROSS JOIN (VALUES (1, 'Email', 'created'), (2, 'Thread', 'updated')) AS x(o, kind, change)
 WHERE m.id BETWEEN $1 AND $2 ORDER BY m.id, x.o
"""


async def fill(settings: Settings, dsn: str, count: int, account_count: int) -> tuple[str, int, list[int]]:
    services = await open_services(settings, dsn)
    try:
        user = await services.users.create_user("bench@example.org", "benchmark password")
        accounts = [await account_rows(services).create(user_id=user.id, provider_kind=ProviderKind.LOCAL,
                                                        name=f"Bench {n}", email=f"bench{n}@example.org")
                    for n in range(account_count)]
        roles = await services.labels.role_ids(user.id)
        db = services.db
        threads = 1 + (count * 2) // 5
        await db.execute(THREADS, threads, accounts)
        step = 20_000
        for start in range(1, count + 1, step):
            await db.execute(MESSAGES, start, min(start + step - 1, count), accounts, count, WORDS)
        async with db.connection() as conn:
            await conn.execute(LABELS.replace("$1::int", str(roles[LabelRole.INBOX]))
                               .replace("$2::int", str(roles[LabelRole.ARCHIVE])))
        await db.execute("SELECT setval('message_id_seq', $1)", count)
        await db.execute("SELECT setval('message_thread_id_seq', $1)", threads)
        async with db.connection() as conn:
            await conn.execute("VACUUM ANALYZE")
        token = (await services.app_passwords.create(user.id, "Benchmark")).token
        return token, user.id, accounts
    finally:
        await services.close()


async def arrive(settings: Settings, dsn: str, first: int, count: int, accounts: list[int], roles_of: int) -> None:
    """`count` new messages (ids from `first`) in the Inbox, with the change-log rows the pipeline writes."""
    services = await open_services(settings, dsn)
    try:
        db = services.db
        inbox = (await services.labels.role_ids(roles_of))[LabelRole.INBOX]
        last = first + count - 1
        threads = 1 + (last * 2) // 5
        await db.execute(THREADS.replace("FROM generate_series(1, $1) AS g",
                                         "FROM generate_series($3::bigint, $1::bigint) AS g")
                         + " ON CONFLICT (id) DO NOTHING", threads, accounts, 1 + (first * 2) // 5)
        async with db.transaction():
            await db.execute(MESSAGES, first, last, accounts, last, WORDS)
            await db.execute("INSERT INTO message_label (message_id, label_id) SELECT g, $3 "
                             "FROM generate_series($1::bigint, $2::bigint) g", first, last, inbox)
            await db.execute(NEW_MAIL_LOG, first, last)
        await db.execute("SELECT setval('message_id_seq', $1)", last)
        await db.execute("SELECT setval('message_thread_id_seq', greatest($1, (SELECT max(id) FROM message_thread)))",
                         threads)
        async with db.connection() as conn:
            await conn.execute("ANALYZE message; ANALYZE jmap_change_log")
    finally:
        await services.close()


def serve(settings: Settings, dsn: str, port: int, log: Path) -> subprocess.Popen[bytes]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PLMAIL_")}
    env.update({"PLMAIL_DATABASE_URL": dsn, "PLMAIL_DATA_DIR": str(settings.data_dir), "PLMAIL_PORT": str(port),
                "PLMAIL_LOG_LEVEL": "WARNING"})
    with log.open("wb") as out:
        return subprocess.Popen([sys.executable, "-m", "plmail.cli", "serve", "--queues", ""], env=env, stdout=out,
                                stderr=subprocess.STDOUT)


def wait_healthy(url: str, process: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"plmail serve exited:\n{log.read_text()[-3000:]}")
        try:
            if httpx.get(f"{url}/healthz", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    raise SystemExit("plmail serve did not become healthy")


def list_view(account: str, inbox: str, *, position: int = 0, total: bool = False,
              properties: list[str] | None = None) -> dict[str, Any]:
    """None asks Email/get for its default properties (bodies' parts included)."""
    get: dict[str, Any] = {"accountId": account, "#ids": {"resultOf": "q", "name": "Email/query", "path": "/ids"}}
    if properties is not None:
        get["properties"] = properties
    return {"using": ["urn:ietf:params:jmap:core", "urn:ietf:params:jmap:mail"], "methodCalls": [
        ["Email/query", {"accountId": account, "filter": {"inMailbox": inbox}, "collapseThreads": True,
                         "position": position, "limit": 50, "calculateTotal": total}, "q"],
        ["Email/get", get, "g"]]}


LIST_PROPERTIES = ["threadId", "mailboxIds", "keywords", "from", "subject", "receivedAt", "preview", "hasAttachment",
                   "size"]


def measure(http: httpx.Client, runs: int, body: Any, before: Callable[[int], None] | None = None
            ) -> tuple[float, float]:
    for _ in range(10):  # warm plans, the database's cache and the connection
        http.post("/jmap/api", json=body() if callable(body) else body)
    samples = []
    for run in range(runs):
        if before is not None:
            before(run)  # untimed
        payload = body() if callable(body) else body
        started = time.perf_counter()
        response = http.post("/jmap/api", json=payload)
        samples.append((time.perf_counter() - started) * 1000)
        calls = response.json()["methodResponses"]
        assert all(c[0] != "error" for c in calls), calls
        if calls[0][0] == "Email/query":
            assert len(calls[1][1]["list"]) == len(calls[0][1]["ids"])
    samples.sort()
    return statistics.median(samples), samples[max(int(len(samples) * 0.95) - 1, 0)]


def catch_up(http: httpx.Client, account: str, since: str) -> int:
    """Email/changes from `since` until nothing more (the server answers at most 500 ids a call)."""
    using = ["urn:ietf:params:jmap:core", "urn:ietf:params:jmap:mail"]
    seen = 0
    while True:
        answer = http.post("/jmap/api", json={"using": using, "methodCalls": [
            ["Email/changes", {"accountId": account, "sinceState": since}, "c"]]}).json()["methodResponses"][0]
        assert answer[0] == "Email/changes", answer
        seen += len(answer[1]["created"]) + len(answer[1]["updated"])
        since = answer[1]["newState"]
        if not answer[1]["hasMoreChanges"]:
            return seen


def timed(samples: list[float]) -> tuple[float, float]:
    samples.sort()
    return statistics.median(samples), samples[max(int(len(samples) * 0.95) - 1, 0)]


def run(settings: Settings, dsn: str, count: int, account_count: int, runs: int, *, lists: bool = True
        ) -> None:
    started = time.perf_counter()
    token, user_id, accounts = asyncio.run(fill(settings, dsn, count, account_count))
    print(f"filled {count:,} messages over {account_count} accounts in {time.perf_counter() - started:.0f} s")
    port = 18_000 + random.Random().randint(0, 999)
    log = settings.data_dir.parent / "serve.log"
    process = serve(settings, dsn, port, log)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(url, process, log)
        with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {token}"}, timeout=30) as http:
            using = ["urn:ietf:params:jmap:core", "urn:ietf:params:jmap:mail"]
            session = http.get("/jmap/session").json()
            unified = session["primaryAccounts"]["urn:ietf:params:jmap:mail"]
            assert unified == f"u{user_id}", session["primaryAccounts"]
            print(f"{'request':<52}{'p50 ms':>10}{'p95 ms':>10}")
            for account, label in ((unified, "unified"), (str(accounts[0]), "one account")) if lists else ():
                mailboxes = http.post("/jmap/api", json={"using": using, "methodCalls": [
                    ["Mailbox/get", {"accountId": account}, "m"]]})
                boxes = mailboxes.json()["methodResponses"][0][1]["list"]
                inbox = next(m for m in boxes if m["role"] == "inbox")
                print(f"[{label}] Inbox: {inbox['totalEmails']:,} emails in {inbox['totalThreads']:,} threads")
                rng = random.Random(5)
                first = list_view(account, inbox["id"], properties=LIST_PROPERTIES)
                newest = http.post("/jmap/api", json=first).json()["methodResponses"][0][1]["ids"][-1]

                def change_state(run: int, account: str = account, newest: str = newest) -> None:
                    """A write between requests: remembered results no longer apply, everything is computed."""
                    http.post("/jmap/api", json={"using": using, "methodCalls": [["Email/set", {
                        "accountId": account, "update": {newest: {"keywords/$flagged": True if run % 2 else None}}},
                        "s"]]})

                cases: list[tuple[str, Any, Callable[[int], None] | None]] = [
                    ("query inbox 50 collapsed + get (list view)", first, None),
                    ("  the same after a change each time", first, change_state),
                    ("same, Email/get default properties", list_view(account, inbox["id"]), None),
                    ("same, with calculateTotal", list_view(account, inbox["id"], total=True,
                                                            properties=LIST_PROPERTIES), None),
                    ("  the same after a change each time", list_view(account, inbox["id"], total=True,
                                                                      properties=LIST_PROPERTIES), change_state),
                    ("same, random page 1-20", lambda account=account, inbox=inbox, rng=rng: list_view(
                        account, inbox["id"], position=50 * rng.randint(0, 19), properties=LIST_PROPERTIES), None),
                    ("Mailbox/get with counts (after a change)", {"using": using, "methodCalls": [
                        ["Mailbox/get", {"accountId": account}, "m"]]}, change_state),
                ]
                for name, body, before in cases:
                    p50, p95 = measure(http, runs, body, before)
                    print(f"[{label}] {name:<44}{p50:>10.1f}{p95:>10.1f}")

            states_before = {account: http.post("/jmap/api", json={"using": using, "methodCalls": [
                ["Email/get", {"accountId": account, "ids": []}, "g"]]}).json()["methodResponses"][0][1]["state"]
                for account in (unified, str(accounts[0]))}
            asyncio.run(arrive(settings, dsn, count + 1, 1000, accounts, user_id))
            assert catch_up(http, unified, states_before[unified]) == 1000
            for account, label in ((unified, "unified"), (str(accounts[0]), "one account")):
                since = states_before[account]
                single: list[float] = []
                whole: list[float] = []
                body = {"using": using, "methodCalls": [["Email/changes", {"accountId": account, "sinceState": since},
                                                          "c"]]}
                for _ in range(10):
                    http.post("/jmap/api", json=body)
                for _ in range(runs):
                    began = time.perf_counter()
                    http.post("/jmap/api", json=body).raise_for_status()
                    single.append((time.perf_counter() - began) * 1000)
                    began = time.perf_counter()
                    catch_up(http, account, since)
                    whole.append((time.perf_counter() - began) * 1000)
                p50, p95 = timed(single)
                print(f"[{label}] {'Email/changes after 1,000 new (first 500)':<44}{p50:>10.1f}{p95:>10.1f}")
                p50, p95 = timed(whole)
                print(f"[{label}] {'  the whole catch-up (until hasMoreChanges false)':<44}{p50:>10.1f}{p95:>10.1f}")
    finally:
        process.terminate()
        process.wait(30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--accounts", type=int, default=3)
    parser.add_argument("--runs", type=int, default=300)
    parser.add_argument("--changes-only", action="store_true", help="time only Email/changes after new mail")
    args = parser.parse_args()
    with private_cluster("jmap") as cluster:
        run(cluster.settings, cluster.dsn, args.messages, args.accounts, args.runs, lists=not args.changes_only)


if __name__ == "__main__":
    main()
