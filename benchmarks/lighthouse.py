"""Lighthouse's accessibility and best-practices scores of the main pages, signed in, on a filled mailbox.

Usage: .venv/bin/python benchmarks/lighthouse.py [--messages 2000] [--pages inbox,thread,...]

Fills a private cluster with benchmarks/scale.py's fill, starts a real `plmail serve` on loopback, signs in
through /login, then runs npm's `lighthouse` (installed into .cache/npm on first use) with the system Chromium
against the inbox, a thread, the composer, the calendar's day, week and month, and settings, once with
Lighthouse's phone emulation and once with its desktop preset. Prints each page's scores and the lowest.
Target (issue 32): accessibility >= 95 and best practices >= 95 on each.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.cluster import private_cluster
from benchmarks.pages import sign_in
from benchmarks.scale import fill, serve, wait_healthy

ROOT = Path(__file__).resolve().parents[1]
NPM_PREFIX = ROOT / ".cache" / "npm"
LIGHTHOUSE = NPM_PREFIX / "node_modules" / ".bin" / "lighthouse"
CATEGORIES = ("accessibility", "best-practices")
TARGET = 95


def chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    raise SystemExit("no Chromium found: tools/test installs the chromium package")


def ensure_lighthouse() -> Path:
    if not LIGHTHOUSE.exists():
        subprocess.run(["npm", "install", "--silent", "--no-audit", "--no-fund", "--prefix", str(NPM_PREFIX),
                        "lighthouse@12"], check=True)
    return LIGHTHOUSE


def pages(http: httpx.Client) -> dict[str, str]:
    answer = http.get("/")
    if answer.url.path != "/":
        raise SystemExit(f"not signed in: / led to {answer.url}")
    inbox = answer.text
    thread = inbox.split('href="/thread/', 1)[1].split('"', 1)[0] if 'href="/thread/' in inbox else None
    found = {"inbox": "/", "composer": "/compose", "calendar-day": "/calendar?view=day",
             "calendar-week": "/calendar?view=week", "calendar-month": "/calendar?view=month", "settings": "/settings"}
    if thread:
        found["thread"] = f"/thread/{thread}"
    return found


def audit(url: str, cookie: str, desktop: bool) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as profile:
        command = [str(LIGHTHOUSE), url, "--output=json", "--quiet", f"--only-categories={','.join(CATEGORIES)}",
                   f"--chrome-flags=--headless=new --no-sandbox --user-data-dir={profile}",
                   f"--extra-headers={json.dumps({'Cookie': cookie})}"]
        if desktop:
            command.append("--preset=desktop")
        done = subprocess.run(command, capture_output=True, text=True, timeout=300,
                              env={**os.environ, "CHROME_PATH": chromium()}, check=False)
    if done.returncode != 0:
        raise SystemExit(f"lighthouse failed on {url}: {done.stderr[-2000:]}")
    report = json.loads(done.stdout)
    if report.get("finalDisplayedUrl", url).split("?")[0].endswith("/login"):
        raise SystemExit(f"{url} led to the sign-in page: the session cookie was not taken")
    return {name: round(report["categories"][name]["score"] * 100) for name in CATEGORIES}


def failing_audits(url: str, cookie: str) -> list[str]:
    """The audits that cost points, for a page under the target (what to fix)."""
    with tempfile.TemporaryDirectory() as profile:
        done = subprocess.run(
            [str(LIGHTHOUSE), url, "--output=json", "--quiet", f"--only-categories={','.join(CATEGORIES)}",
             f"--chrome-flags=--headless=new --no-sandbox --user-data-dir={profile}",
             f"--extra-headers={json.dumps({'Cookie': cookie})}"],
            capture_output=True, text=True, timeout=300, env={**os.environ, "CHROME_PATH": chromium()}, check=False)
    report = json.loads(done.stdout)
    return [f"{a['id']}: {a['title']}" for a in report["audits"].values()
            if a.get("score") is not None and a["score"] < 1 and a.get("scoreDisplayMode") == "binary"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--messages", type=int, default=2_000)
    parser.add_argument("--pages", default="", help="comma-separated subset of the page names")
    args = parser.parse_args()
    ensure_lighthouse()
    with private_cluster("lighthouse") as cluster:
        asyncio.run(fill(cluster.settings, cluster.dsn, args.messages))
        log = cluster.base / "serve.log"
        port = 18_500 + os.getpid() % 1000
        process = serve(cluster.settings, cluster.dsn, port, log)
        url = f"http://127.0.0.1:{port}"
        try:
            wait_healthy(url, process, log)
            with httpx.Client(base_url=url, follow_redirects=True, timeout=30) as http:
                sign_in(http)
                cookie = "; ".join(f"{name}={value}" for name, value in http.cookies.items())
                chosen = pages(http)
            wanted = [p for p in args.pages.split(",") if p] or list(chosen)
            lowest = 100.0
            print(f"{'page':<16} {'form':<8} {'accessibility':>13} {'best practices':>15}")
            for name in wanted:
                for desktop in (False, True):
                    scores = audit(url + chosen[name], cookie, desktop)
                    lowest = min(lowest, *scores.values())
                    print(f"{name:<16} {'desktop' if desktop else 'phone':<8} {scores['accessibility']:>13} "
                          f"{scores['best-practices']:>15}", flush=True)
                    if min(scores.values()) < TARGET:
                        for line in failing_audits(url + chosen[name], cookie):
                            print(f"    fails: {line}")
            print(f"lowest score: {lowest:.0f} (target >= {TARGET} on each page)")
        finally:
            process.terminate()
            process.wait(30)


if __name__ == "__main__":
    main()
