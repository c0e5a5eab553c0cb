"""Latency of the web pages over HTTP, signed in through the real form, on a filled mailbox.

Usage: .venv/bin/python benchmarks/pages.py [--messages 100000] [--runs 200]

Fills a private cluster with benchmarks/scale.py's fill (messages / 2.5 threads, 3 accounts), starts a
real `plmail serve` on loopback, signs in through /login and times, end to end, every page a signed-in user
opens (page_cases: the inbox and its tabs, labels for all accounts and for one, the walked views, each kind of
search, a thread, the composer, settings, calendar, ...). Prints p50/p95 per page and the server's resident
memory after the runs. benchmarks/scale.py runs the same and more (the lists right after a change, JMAP) in
one table. Targets (issue 36): p95 < 15 ms at 1M for every page.
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
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.cluster import private_cluster
from benchmarks.scale import EMAIL, PASSWORD, WORDS, Case, Changes, Figure, Filled, fill, rss_mib, serve, wait_healthy
from plmail.domain.enums import Category

_CSRF = re.compile(r'name="_csrf_token" value="([^"]+)"')


def sign_in(http: httpx.Client) -> None:
    page = http.get("/login")
    match = _CSRF.search(page.text)
    token = match.group(1) if match else http.cookies.get("plmail_csrf")
    response = http.post("/login", data={"email": EMAIL, "password": PASSWORD, "_csrf_token": token or ""})
    if response.status_code >= 400 or "/login" in str(response.url):
        raise SystemExit(f"sign-in failed: {response.status_code} {response.url}")


def measure(http: httpx.Client, runs: int, path: Callable[[int], str], before: Callable[[int], None] | None = None
            ) -> tuple[float, float]:
    for i in range(5):  # warm plans, caches and the connection
        http.get(path(i))
    samples = []
    for i in range(runs):
        if before is not None:
            before(i)  # untimed: the change the page is measured right after
        target = path(i)
        started = time.perf_counter()
        response = http.get(target)
        samples.append((time.perf_counter() - started) * 1000)
        if response.status_code != 200:
            raise SystemExit(f"{target}: {response.status_code}")
    samples.sort()
    return statistics.median(samples), samples[max(int(len(samples) * 0.95) - 1, 0)]


def _team(n: int) -> str:
    return f"/search?q=to:team{n}@corp{n % 25}.com"  # the fill's recipient of thread n (tests/support/bulk_mail.py)


def _fixed(path: str) -> Callable[[int], str]:
    return lambda i: path


def page_cases(filled: Filled, changes: Changes | None = None) -> list[Case]:
    """Every page a signed-in user opens (the mail views, each search operator's kind, the thread, the composer and
    its address suggestions, labels, rules, accounts, calendar, settings, the offline copy; not the admin's pages),
    then the mail lists again right after a change: a new message arriving through the pipeline, a star set or
    cleared."""
    rng = random.Random(7)
    labels, one_account = filled.labels, filled.accounts[0]
    work, inbox = labels["work"], labels["inbox"]
    # A read thread (every fifth one is unread; opening an unread thread would write).
    read_threads = [t for t in range(1, min(filled.threads, 5000)) if t % 5 and t % 100 != 99]
    cases: list[Case] = [
        Case("floor: /healthz (SELECT 1, no page)", _fixed("/healthz")),
        Case("inbox, page 1", _fixed("/")),
        Case("inbox, page 5", _fixed("/?page=5")),
        *[Case(f"inbox, {tab.value} tab", _fixed(f"/?tab={tab.value}")) for tab in Category],
        Case("inbox, one account", _fixed(f"/label/{inbox}?account={one_account}")),
        Case("label page (Work), all accounts", _fixed(f"/label/{work}")),
        Case("label page (Work), one account", _fixed(f"/label/{work}?account={one_account}")),
        Case("trash", _fixed(f"/label/{labels['trash']}")),
        Case("starred", _fixed("/starred")),
        Case("all mail", _fixed("/all")),
        Case("archive", _fixed("/archive")),
        Case("search, two words", lambda i: "/search?q=" + "+".join(rng.sample(WORDS, 2))),
        Case("search from: a domain (2.5 %)", lambda i: f"/search?q=from:example{rng.randint(0, 39)}.org"),
        Case("search from: a person (0.2 %)", lambda i: f"/search?q=from:person{rng.randint(0, 499)}"),
        # to: matches whole words and addresses (issue 22): the whole address, as a user types it.
        Case("search to: an address (0.3 %)", lambda i: _team(rng.randint(0, 299))),
        Case("search box suggestions", lambda i: f"/search/suggest?q=from:person{rng.randint(10, 99)}"),
        Case("thread page", lambda i: f"/thread/{rng.choice(read_threads)}"),
        Case("compose", _fixed("/compose/")),
        Case("compose: address suggestions", lambda i: f"/compose/contacts?to=person{rng.randint(10, 99)}"),
        Case("outbox", _fixed("/compose/outbox")),
        Case("labels", _fixed("/labels/")),
        Case("rules", _fixed("/rules/")),
        Case("rules: new", _fixed("/rules/new")),
        Case("accounts", _fixed("/accounts/")),
        Case("account detail", _fixed(f"/accounts/{one_account}")),
        Case("calendar (week)", _fixed("/calendar/")),
        Case("calendar (month)", _fixed("/calendar/?view=month")),
        Case("calendar: coming up", _fixed("/calendar/soon")),
        Case("calendar: new event", _fixed("/calendar/new")),
        Case("calendar: sharing", _fixed("/calendar/sharing")),
        Case("settings", _fixed("/settings/")),
        Case("settings: sorting", _fixed("/settings/sorting")),
        Case("settings: security", _fixed("/settings/security")),
        Case("settings: sending", _fixed("/settings/sending")),
        Case("settings: notifications", _fixed("/settings/notifications")),
        Case("settings: devices", _fixed("/settings/devices")),
        Case("settings: sessions", _fixed("/settings/sessions")),
        Case("settings: two-factor", _fixed("/settings/two-factor")),
        Case("offline copy of the inbox (JSON)", _fixed("/offline/inbox.json")),
    ]
    if changes is not None:
        after_new, after_star = changes.new_message, changes.toggle_star
        cases += [
            Case("inbox, page 1, after a new message", _fixed("/"), after_new),
            Case("inbox, page 1, after a star", _fixed("/"), after_star),
            Case("inbox, one account, after a new message", _fixed(f"/label/{inbox}?account={one_account}"),
                 after_new),
            Case("inbox, one account, after a star", _fixed(f"/label/{inbox}?account={one_account}"), after_star),
            Case("label page (Work), after a star", _fixed(f"/label/{work}"), after_star),
            Case("starred, after a star", _fixed("/starred"), after_star),
        ]
    return cases


def measure_pages(url: str, filled: Filled, runs: int, changes: Changes | None = None,
                  only: re.Pattern[str] | None = None, sink: Callable[[Figure], None] | None = None) -> list[Figure]:
    figures: list[Figure] = []
    with httpx.Client(base_url=url, timeout=60, follow_redirects=True) as http:
        sign_in(http)
        print(Figure.HEADER)
        for case in page_cases(filled, changes):
            name = f"page: {case.name}"
            if only is not None and not only.search(name):
                continue
            p50, p95 = measure(http, runs, case.path, case.before)
            figures.append(Figure(name, p50, p95))
            print(figures[-1].row(), flush=True)
            if sink is not None:
                sink(figures[-1])
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=200)
    args = parser.parse_args()
    with private_cluster("pages") as cluster:
        filled = asyncio.run(fill(cluster.settings, cluster.dsn, args.messages))
        log = cluster.base / "serve.log"
        port = 18_000 + os.getpid() % 1000
        process = serve(cluster.settings, cluster.dsn, port, log)
        url = f"http://127.0.0.1:{port}"
        try:
            wait_healthy(url, process, log)
            print(f"plmail serve RSS before the runs: {rss_mib(process.pid):.0f} MiB")
            measure_pages(url, filled, args.runs)
            print(f"plmail serve RSS after the runs: {rss_mib(process.pid):.0f} MiB (target < 300)")
        finally:
            process.terminate()
            process.wait(30)


if __name__ == "__main__":
    main()
