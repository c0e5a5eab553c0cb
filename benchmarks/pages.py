"""Latency of the web pages over HTTP, signed in through the real form, on a filled mailbox.

Usage: .venv/bin/python benchmarks/pages.py [--messages 100000] [--runs 200]

Fills a private cluster with benchmarks/scale.py's fill (messages / 2.5 threads, 3 accounts), starts a
real `plmail serve` on loopback, signs in through /login and times, end to end: the inbox page 1 and 5,
every tab, a label page for all accounts and for one, a two-word search, from: and to: searches, a
thread page. Prints p50/p95 per page and the server's resident memory after the runs.
Targets (issue 22): p95 < 25 ms at 100k and < 40 ms at 1M for every page.
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
from benchmarks.scale import EMAIL, PASSWORD, WORDS, Filled, fill, rss_mib, serve, wait_healthy
from plmail.domain.enums import Category

_CSRF = re.compile(r'name="_csrf_token" value="([^"]+)"')


def sign_in(http: httpx.Client) -> None:
    page = http.get("/login")
    match = _CSRF.search(page.text)
    token = match.group(1) if match else http.cookies.get("plmail_csrf")
    response = http.post("/login", data={"email": EMAIL, "password": PASSWORD, "_csrf_token": token or ""})
    if response.status_code >= 400 or "/login" in str(response.url):
        raise SystemExit(f"sign-in failed: {response.status_code} {response.url}")


def measure(http: httpx.Client, runs: int, path: Callable[[int], str]) -> tuple[float, float]:
    for i in range(5):  # warm plans, caches and the connection
        http.get(path(i))
    samples = []
    for i in range(runs):
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


def measure_pages(url: str, filled: Filled, runs: int) -> dict[str, tuple[float, float]]:
    rng = random.Random(7)
    work, one_account = filled.labels["work"], filled.accounts[0]
    # A read thread (every fifth one is unread; opening an unread thread would write).
    read_threads = [t for t in range(1, min(filled.threads, 5000)) if t % 5 and t % 100 != 99]
    cases: list[tuple[str, Callable[[int], str]]] = [
        ("floor: /healthz (SELECT 1, no page)", lambda i: "/healthz"),
        ("inbox, page 1", lambda i: "/"),
        ("inbox, page 5", lambda i: "/?page=5"),
        *[(f"inbox, {tab.value} tab", _fixed(f"/?tab={tab.value}")) for tab in Category],
        ("label page (Work), all accounts", lambda i: f"/label/{work}"),
        ("label page (Work), one account", lambda i: f"/label/{work}?account={one_account}"),
        ("search, two words", lambda i: "/search?q=" + "+".join(rng.sample(WORDS, 2))),
        ("search from: a domain (2.5 %)", lambda i: f"/search?q=from:example{rng.randint(0, 39)}.org"),
        ("search from: a person (0.2 %)", lambda i: f"/search?q=from:person{rng.randint(0, 499)}"),
        # to: matches whole words and addresses (issue 22): the whole address, as a user types it.
        ("search to: an address (0.3 %)", lambda i: _team(rng.randint(0, 299))),
        ("thread page", lambda i: f"/thread/{rng.choice(read_threads)}"),
    ]
    results: dict[str, tuple[float, float]] = {}
    with httpx.Client(base_url=url, timeout=60, follow_redirects=True) as http:
        sign_in(http)
        print(f"{'page (HTTP, signed in)':<40}{'p50 ms':>10}{'p95 ms':>10}")
        for name, path in cases:
            p50, p95 = measure(http, runs, path)
            results[name] = (p50, p95)
            print(f"{name:<40}{p50:>10.1f}{p95:>10.1f}", flush=True)
    return results


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
