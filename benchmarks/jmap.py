"""JMAP latency over HTTP: Email/query (Inbox, 50, collapseThreads) chained into Email/get of those 50 (also right
after a change: a star, or with benchmarks/scale.py a new message), Mailbox/get with its counts, and Email/changes
after 1,000 new messages.

Usage: .venv/bin/python benchmarks/jmap.py [--messages 100000] [--runs 300]

Fills a private PostgreSQL cluster (plmail's embedded settings) with benchmarks/scale.py's fill (messages /
2.5 threads in 3 accounts, 70 % of them in the Inbox), starts a real `plmail serve` on loopback, and times
the requests a phone makes, end to end over HTTP with an app password, in the user's unified account (every
account's mail behind the user's labels: the primary account a phone uses) and in each connected account.
Prints p50/p95 per request. Targets: issue 36 (at 1M), Email/query + get p95 < 10 ms, unified and per account,
also right after a change; issue 22, Mailbox/get with counts p95 < 10 ms, Email/changes after 1,000 new messages
p95 < 30 ms.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import re
import statistics
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.cluster import private_cluster
from benchmarks.scale import Changes, Figure, Filled, fill, rss_mib, serve, wait_healthy
from plmail.config import Settings
from plmail.domain.enums import LabelRole
from plmail.mail.ingest import parse_message
from plmail.services import open_services
from tests.support.mail import make_message


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


def ingest_new(settings: Settings, dsn: str, account_id: int, count: int) -> None:
    """`count` new messages through the pipeline (change log and all), as a sync would store them."""
    async def run() -> None:
        services = await open_services(settings, dsn)
        try:
            user_id = int(await services.db.fetchval("SELECT user_id FROM account WHERE id = $1", account_id))
            inbox = (await services.labels.role_ids(user_id))[LabelRole.INBOX]
            for start in range(0, count, 50):
                batch = [parse_message(make_message(message_id=f"new{n}@bench.example", subject=f"New {n}",
                                                    date=datetime.now(UTC)),
                                       account_id=account_id, label_ids=(inbox,))
                         for n in range(start, min(start + 50, count))]
                await services.pipeline.ingest(batch)
        finally:
            await services.close()
    asyncio.run(run())


def measure_jmap(url: str, filled: Filled, runs: int, settings: Settings, dsn: str, changes: Changes | None = None,
                 only: re.Pattern[str] | None = None, sink: Callable[[Figure], None] | None = None) -> list[Figure]:
    """The phone's requests in the user's unified account (the primary one, issue 20) and in each connected
    account, each also right after a change (a star set or cleared, a new message through the pipeline)."""
    using = ["urn:ietf:params:jmap:core", "urn:ietf:params:jmap:mail"]
    figures: list[Figure] = []

    def wanted(name: str) -> bool:
        return only is None or bool(only.search(name))

    with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {filled.token}"}, timeout=60) as http:
        unified = http.get("/jmap/session").json()["primaryAccounts"]["urn:ietf:params:jmap:mail"]
        scopes = ((unified, "unified"), *[(str(a), f"account {n + 1}") for n, a in enumerate(filled.accounts)])
        print(Figure.HEADER)
        for account, label in scopes:
            mailboxes = http.post("/jmap/api", json={"using": using, "methodCalls": [
                ["Mailbox/get", {"accountId": account}, "m"]]})
            boxes = mailboxes.json()["methodResponses"][0][1]["list"]
            inbox = next(m for m in boxes if m["role"] == "inbox")
            print(f"[{label}] Inbox: {inbox['totalEmails']:,} emails in {inbox['totalThreads']:,} threads, "
                  f"{inbox['unreadEmails']:,} unread")
            rng = random.Random(5)
            first = list_view(account, inbox["id"], properties=LIST_PROPERTIES)
            newest = http.post("/jmap/api", json=first).json()["methodResponses"][0][1]["ids"][-1]

            def change_state(run: int, account: str = account, newest: str = newest) -> None:
                """A write between requests: remembered results no longer apply, everything is computed."""
                http.post("/jmap/api", json={"using": using, "methodCalls": [["Email/set", {
                    "accountId": account, "update": {newest: {"keywords/$flagged": True if run % 2 else None}}},
                    "s"]]})

            mailbox_get = {"using": using, "methodCalls": [["Mailbox/get", {"accountId": account}, "m"]]}
            cases: list[tuple[str, Any, Callable[[int], None] | None]] = [
                ("query inbox 50 collapsed + get (list view)", first, None),
                ("  the same after a star each time", first, change_state),
                ("same, with calculateTotal", list_view(account, inbox["id"], total=True,
                                                        properties=LIST_PROPERTIES), None),
                ("same, random page 1-20", lambda account=account, inbox=inbox, rng=rng: list_view(
                    account, inbox["id"], position=50 * rng.randint(0, 19), properties=LIST_PROPERTIES), None),
                ("Mailbox/get with counts", mailbox_get, None),
                ("Mailbox/get with counts (after a star)", mailbox_get, change_state),
            ]
            if changes is not None:  # a new message in this account (the first one for the unified account)
                arrival = changes.arrival_in(int(account) if account.isdigit() else filled.accounts[0])
                cases[2:2] = [("  the same after a new message each time", first, arrival)]
                cases[4:4] = [("same with calculateTotal, after a new message", list_view(
                    account, inbox["id"], total=True, properties=LIST_PROPERTIES), arrival)]
                cases.append(("Mailbox/get with counts (after a new message)", mailbox_get, arrival))
            for name, body, before in cases:
                name = f"jmap [{label}]: {name.strip()}"
                if not wanted(name):
                    continue
                p50, p95 = measure(http, runs, body, before)
                figures.append(Figure(name, p50, p95))
                print(figures[-1].row(), flush=True)
                if sink is not None:
                    sink(figures[-1])
        if not wanted("jmap [unified]: Email/changes after 1,000 new messages"):
            return figures
        states = {account: http.post("/jmap/api", json={"using": using, "methodCalls": [
            ["Email/get", {"accountId": account, "ids": []}, "g"]]}).json()["methodResponses"][0][1]["state"]
            for account, _ in scopes[:2]}
        started = time.perf_counter()
        if changes is not None:  # one services at a time: the database engine is the process's
            changes.arrive(1000)
        else:
            ingest_new(settings, dsn, filled.accounts[0], 1000)
        print(f"(1,000 new messages stored through the pipeline in {time.perf_counter() - started:.1f} s)")
        for account, label in scopes[:2]:
            changed = {"using": using, "methodCalls": [
                ["Email/changes", {"accountId": account, "sinceState": states[account]}, "c"]]}
            probe = http.post("/jmap/api", json=changed).json()["methodResponses"][0]
            if probe[0] != "Email/changes" or not probe[1]["created"]:
                raise SystemExit(f"Email/changes did not list the new messages in {label}: {probe}")
            print(f"([{label}] Email/changes lists {len(probe[1]['created'])} created, hasMoreChanges "
                  f"{probe[1]['hasMoreChanges']})")
            p50, p95 = measure(http, runs, changed)
            figures.append(Figure(f"jmap [{label}]: Email/changes after 1,000 new messages", p50, p95))
            print(figures[-1].row(), flush=True)
            if sink is not None:
                sink(figures[-1])
    return figures


def run(settings: Settings, dsn: str, count: int, runs: int) -> None:
    filled = asyncio.run(fill(settings, dsn, count))
    port = 18_000 + os.getpid() % 1000
    log = settings.data_dir.parent / "serve.log"
    process = serve(settings, dsn, port, log)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(url, process, log)
        measure_jmap(url, filled, runs, settings, dsn)
        print(f"plmail serve RSS after the runs: {rss_mib(process.pid):.0f} MiB")
    finally:
        process.terminate()
        process.wait(30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=300)
    args = parser.parse_args()
    with private_cluster("jmap") as cluster:
        run(cluster.settings, cluster.dsn, args.messages, args.runs)


if __name__ == "__main__":
    main()
