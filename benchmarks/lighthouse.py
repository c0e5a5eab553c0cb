"""Lighthouse's accessibility and best-practices scores of the main pages, signed in, on a filled mailbox.

Usage: .venv/bin/python benchmarks/lighthouse.py [--messages 2000] [--pages inbox,thread,...] [--forms phone,desktop]
                                                 [--performance]

Fills a private cluster with benchmarks/scale.py's fill (and a few events this week), starts a real `plmail serve`
on loopback and the system Chromium (tests/support/browser.py's, with a throwaway profile and a DevTools port),
then benchmarks/lighthouse_flow.mjs signs in through /login in that browser and runs npm's `lighthouse`
(installed into .cache/npm on first use) through its Node API on the inbox, a thread, the composer panel opened
over the inbox (a click, so a Lighthouse snapshot), the composer page, the calendar's day, week and month and
every settings section, once with Lighthouse's phone emulation and once with its desktop preset. A score counts
only when the browser showed the page asked for: its final URL, a marker element of that page, and no sign-in
form. Prints a table with the load average beside it, and the audits that cost points on a page under target.
Target (issue 32): accessibility >= 95 and best practices >= 95 on each. SEO is printed as well, and performance
with --performance (a lab score with Lighthouse's throttling; it moves with the machine's load, hence the load
column; a snapshot has none). Exits non-zero when any result could not be counted.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit
from zoneinfo import ZoneInfo

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.cluster import private_cluster
from benchmarks.pages import sign_in
from benchmarks.scale import EMAIL, PASSWORD, fill, serve, wait_healthy
from plmail.calendar.writer import EventDraft
from plmail.config import Settings
from plmail.services import open_services
from tests.support.browser import CHROMIUM, CHROMIUM_ARGS

ROOT = Path(__file__).resolve().parents[1]
NPM_PREFIX = ROOT / ".cache" / "npm"
FLOW = Path(__file__).with_name("lighthouse_flow.mjs")
TARGET = 95
TARGETED = ("accessibility", "best-practices")


@dataclass(frozen=True)
class Page:
    name: str
    path: str
    marker: str  # an element only the intended page has: the score is refused without it
    open: str | None = None  # clicked on `path` to reach the state scored (a snapshot, not a navigation)


def ensure_lighthouse() -> None:
    missing = [tool for tool in ("node", "npm") if shutil.which(tool) is None]
    if missing or not Path(CHROMIUM).exists():
        raise SystemExit(f"needs {', '.join(missing or [CHROMIUM])}: tools/test installs them (Debian's npm and "
                         "chromium packages)")
    modules = NPM_PREFIX / "node_modules"
    if not (modules / "lighthouse" / "core" / "index.js").exists() or not (modules / "puppeteer-core").exists():
        subprocess.run(["npm", "install", "--silent", "--no-audit", "--no-fund", "--prefix", str(NPM_PREFIX),
                        "lighthouse@12"], check=True)


async def add_events(settings: Settings, dsn: str, email: str) -> None:
    """This week's calendar as a person's: two overlapping meetings today, one in the afternoon, a day off."""
    services = await open_services(settings, dsn)
    try:
        user = await services.users.by_email(email)
        zone = ZoneInfo(user.time_zone)
        today = datetime.now(zone).replace(hour=0, minute=0, second=0, microsecond=0)
        [calendar, *_] = await services.calendar.objects.calendars_of(user.id)
        drafts = [
            EventDraft(uid="lh-1@example.org", start=today + timedelta(hours=9), end=today + timedelta(hours=10),
                       title="Team stand-up", location="Room 2"),
            EventDraft(uid="lh-2@example.org", start=today + timedelta(hours=9, minutes=30),
                       end=today + timedelta(hours=11), title="Budget review"),
            EventDraft(uid="lh-3@example.org", start=today + timedelta(hours=15), end=today + timedelta(hours=16),
                       title="Dentist"),
            EventDraft(uid="lh-4@example.org", start=(today + timedelta(days=1)).date(),
                       end=(today + timedelta(days=2)).date(), title="Day off"),
        ]
        for draft in drafts:
            await services.calendar.writer.create(calendar.id, user.id, draft, user_zone=user.time_zone,
                                                  reference=today)
    finally:
        await services.close()


def pages(http: httpx.Client) -> list[Page]:
    """Every page issue 32 names, found as the signed-in user sees them (a thread of the inbox, admin if admin)."""
    answer = http.get("/")
    if answer.url.path != "/":
        raise SystemExit(f"not signed in: / led to {answer.url}")
    found = [Page("inbox", "/", "#thread-list")]
    if 'href="/thread/' in answer.text:
        thread = answer.text.split('href="/thread/', 1)[1].split('"', 1)[0]
        found.append(Page("thread", f"/thread/{thread}", "article.conversation"))
    found += [Page("composer-panel", "/", "[data-compose-window] form.composer", open="[data-compose-panel]"),
              Page("composer-page", "/compose", "form.composer"),
              *(Page(f"calendar-{view}", f"/calendar?view={view}", f'[data-view="{view}"] {marker}')
                for view, marker in (("day", "[data-time-grid]"), ("week", "[data-time-grid]"),
                                     ("month", "table.month")))]
    settings = http.get("/settings").text
    sections = [("account", "/settings"), ("sending", "/settings/sending"), ("sorting", "/settings/sorting"),
                ("filters", "/rules"), ("labels", "/labels"), ("calendar", "/calendar/sharing"),
                ("notifications", "/settings/notifications"), ("security", "/settings/security"),
                ("devices", "/settings/devices"), ("admin", "/admin")]
    found += [Page(f"settings-{key}", path, f'.settings-nav a[aria-current="page"][href="{path}"]')
              for key, path in sections if f'href="{path}"' in settings]
    return found


def start_chromium(profile: Path) -> tuple[subprocess.Popen[bytes], str]:
    """The system Chromium with a DevTools port of its own choosing (written to DevToolsActivePort)."""
    process = subprocess.Popen(
        [CHROMIUM, *CHROMIUM_ARGS, "--remote-debugging-address=127.0.0.1", "--remote-debugging-port=0",
         f"--user-data-dir={profile}", "about:blank"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    active = profile / "DevToolsActivePort"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"Chromium exited with {process.returncode}")
        if active.exists() and (lines := active.read_text().splitlines()) and lines[0].isdigit():
            return process, f"http://127.0.0.1:{lines[0]}"
        time.sleep(0.1)
    stop(process)
    raise SystemExit("Chromium did not open its DevTools port")


def stop(process: subprocess.Popen[bytes]) -> None:
    """Ends what this script started, with its children (Chromium's renderers), and waits for it."""
    if process.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(15)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(15)


def refusal(result: dict[str, Any], page: Page) -> str | None:
    """Why a result is not the intended page's, or None when it is."""
    shown, final = result["shown"], urlsplit(result["finalUrl"] or "")
    wanted = urlsplit(page.path)
    if final.path != wanted.path or (wanted.query and final.query != wanted.query):
        return f"Lighthouse ended on {result['finalUrl']}, not {page.path}"
    if shown["signIn"] or not shown["signedIn"]:
        return f"the browser showed the sign-in page ({shown['url']})"
    if not shown["marker"]:
        return f"{page.marker} is not on {shown['url']} ({shown['title']})"
    if result["runtimeError"]:
        return f"Lighthouse: {result['runtimeError']}"
    return None


def load() -> str:
    return " ".join(f"{value:.2f}" for value in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--messages", type=int, default=2_000)
    parser.add_argument("--pages", default="", help="comma-separated subset of the page names")
    parser.add_argument("--forms", default="phone,desktop", help="phone, desktop or both")
    parser.add_argument("--performance", action="store_true", help="score performance too (slower)")
    parser.add_argument("--json", type=Path, help="also write every result, failing audits included, here")
    args = parser.parse_args()
    ensure_lighthouse()
    categories = [*TARGETED, "seo", *(["performance"] if args.performance else [])]
    with private_cluster("lighthouse") as cluster, tempfile.TemporaryDirectory(prefix="plmail-lh-") as scratch:
        asyncio.run(fill(cluster.settings, cluster.dsn, args.messages))
        asyncio.run(add_events(cluster.settings, cluster.dsn, EMAIL))
        log = cluster.base / "serve.log"
        port = 18_500 + os.getpid() % 1000
        server = serve(cluster.settings, cluster.dsn, port, log)
        chromium: subprocess.Popen[bytes] | None = None
        runner: subprocess.Popen[str] | None = None
        url = f"http://127.0.0.1:{port}"
        try:
            wait_healthy(url, server, log)
            with httpx.Client(base_url=url, follow_redirects=True, timeout=30) as http:
                sign_in(http)
                found = pages(http)
            wanted = [name for name in args.pages.split(",") if name]
            unknown = set(wanted) - {page.name for page in found}
            if unknown:
                raise SystemExit(f"no such page: {', '.join(sorted(unknown))} (pages: "
                                 f"{', '.join(page.name for page in found)})")
            chosen = [page for page in found if not wanted or page.name in wanted]
            by_name = {page.name: page for page in chosen}
            chromium, devtools = start_chromium(Path(scratch) / "profile")
            spec = {"prefix": str(NPM_PREFIX), "devtools": devtools, "base": url, "email": EMAIL,
                    "password": PASSWORD, "forms": [f for f in args.forms.split(",") if f],
                    "categories": categories,
                    "pages": [{"name": p.name, "path": p.path, "marker": p.marker, "open": p.open} for p in chosen]}
            extra = [c for c in ("seo", "performance") if c in categories]
            print(f"load average before: {load()}")
            print(f"{'page':<24} {'form':<8} {'mode':<10} {'accessibility':>13} {'best practices':>14}"
                  + "".join(f" {c:>11}" for c in extra) + "  load (1/5/15 min)", flush=True)
            results: list[dict[str, Any]] = []
            refused: list[str] = []
            runner = subprocess.Popen(["node", str(FLOW), json.dumps(spec)], stdout=subprocess.PIPE, text=True)
            assert runner.stdout is not None
            for line in runner.stdout:
                result = json.loads(line)
                results.append(result)
                page = by_name[result["name"]]
                why = refusal(result, page)
                scores = result["scores"]
                if why:
                    refused.append(f"{page.name} ({result['form']}): {why}")
                    print(f"{page.name:<24} {result['form']:<8} REFUSED: {why}", flush=True)
                    continue
                shown = "".join(f" {'-' if scores[c] is None else scores[c]:>11}" for c in extra)  # snapshot: no timing
                print(f"{page.name:<24} {result['form']:<8} {result['mode']:<10} {scores['accessibility']:>13} "
                      f"{scores['best-practices']:>14}{shown}  {load()}", flush=True)
                if min(scores[c] for c in TARGETED) < TARGET:
                    for audit in result["failing"]:
                        if audit["category"] in TARGETED:
                            print(f"    {audit['category']}: {audit['id']} ({audit['title']}): "
                                  f"{'; '.join(audit['items'])}"[:400])
            if runner.wait() != 0:
                raise SystemExit(f"benchmarks/lighthouse_flow.mjs failed with {runner.returncode}")
            if args.json:
                args.json.write_text(json.dumps(results, indent=1))
            counted = [r for r in results if not refusal(r, by_name[r["name"]])]
            expected = len(chosen) * len(spec["forms"])
            print(f"load average after: {load()}")
            if counted:
                lowest = min(r["scores"][c] for r in counted for c in TARGETED)
                under = sorted({f"{r['name']} ({r['form']})" for r in counted
                                if min(r["scores"][c] for c in TARGETED) < TARGET})
                print(f"lowest accessibility/best-practices score: {lowest} (target >= {TARGET} on each page)"
                      + (f"; under target: {', '.join(under)}" if under else ""))
            if refused or len(counted) != expected:
                raise SystemExit(f"{expected - len(counted)} of {expected} results not counted: " + "; ".join(refused))
        finally:
            if runner is not None and runner.poll() is None:
                runner.kill()
                runner.wait(15)
            if chromium is not None:
                stop(chromium)
            server.terminate()
            server.wait(30)


if __name__ == "__main__":
    main()
