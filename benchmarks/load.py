"""Faults under load (issue 19): PostgreSQL and Dovecot each restarted once while plmail serves and imports.

Usage: .venv/bin/python benchmarks/load.py [--messages 3000] [--jmap-clients 20] [--web-sessions 5]

Everything on loopback: a private PostgreSQL cluster (plmail's embedded settings), a private Dovecot, and
`plmail serve` as a real process. While 20 JMAP clients loop over Email/query, Email/get and Email/changes, 5 web
sessions page through the inbox and search, and the first import of an IMAP account runs in serve's workers,
the database is restarted (`pg_ctl restart -m fast`) once the import is a quarter done and Dovecot once it is
past half. Bounded: the import has a fixed size, the run a time cap.

Prints requests served, p50/p95 latency, errors inside each restart window (the restart and 10 s after it) and
outside them (must be none), and the end state: every message of the server stored once, no job lost (none
failed or left active). Exits 1 when an error fell outside the windows or the end state is wrong.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import re
import shutil
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.imap_import import generate
from plmail.config import Settings
from plmail.db.embedded import EmbeddedPostgres, find_pg_binaries, resolve_run_as
from plmail.domain.account_services import MailServerAccountInput
from plmail.domain.enums import LabelRole, ProviderKind
from plmail.mail.ingest import parse_message
from plmail.providers.imap.accounts import ImapAccountService
from plmail.services import Services, open_services
from tests.support.dovecot import DovecotServer
from tests.support.repos import account_rows
from tests.support.serve import ServeProcess

RECOVERY_SECONDS = 10.0  # after a restart ends, how long errors still count as the restart's
TIME_CAP_SECONDS = 420.0
PASSWORD = "benchmark password"  # noqa: S105
USING = ["urn:ietf:params:jmap:core", "urn:ietf:params:jmap:mail"]
WORDS = ("invoice", "meeting", "project", "report", "budget", "travel", "review", "order")


@dataclass
class Sample:
    kind: str
    started: float
    seconds: float
    ok: bool
    detail: str = ""


@dataclass
class Window:
    what: str
    started: float
    ended: float = 0.0

    def holds(self, sample: Sample) -> bool:
        """A request counts as the restart's when it was in flight at any time from the restart's beginning
        to RECOVERY_SECONDS after its end."""
        end = (self.ended or time.monotonic()) + RECOVERY_SECONDS
        return sample.started <= end and sample.started + sample.seconds >= self.started


@dataclass
class Run:
    samples: list[Sample] = field(default_factory=list)
    windows: list[Window] = field(default_factory=list)
    stop: asyncio.Event = field(default_factory=asyncio.Event)

    async def timed(self, kind: str, call: Any) -> Any:
        started = time.monotonic()
        try:
            response = await call
        except (httpx.HTTPError, OSError) as exc:
            self.samples.append(Sample(kind, started, time.monotonic() - started, False, type(exc).__name__))
            return None
        ok = response.status_code < 400
        self.samples.append(Sample(kind, started, time.monotonic() - started, ok,
                                   "" if ok else f"{response.status_code} {response.text[:80]}"))
        return response if ok else None


async def jmap_client(run: Run, base: str, token: str, account: str, seed: int) -> None:
    rng = random.Random(seed)
    state: str | None = None
    headers = {"Authorization": f"Bearer {token}"}
    async with httpx.AsyncClient(base_url=base, headers=headers, timeout=30) as http:
        while not run.stop.is_set():
            calls: list[list[Any]] = [
                ["Email/query", {"accountId": account, "sort": [{"property": "receivedAt", "isAscending": False}],
                                 "position": rng.randint(0, 200), "limit": 30}, "q"],
                ["Email/get", {"accountId": account, "#ids": {"resultOf": "q", "name": "Email/query", "path": "/ids"},
                               "properties": ["subject", "from", "receivedAt", "keywords"]}, "g"],
            ]
            if state is not None:
                calls.append(["Email/changes", {"accountId": account, "sinceState": state, "maxChanges": 200}, "c"])
            response = await run.timed("jmap", http.post("/jmap/api", json={"using": USING, "methodCalls": calls}))
            if response is not None:
                for name, result, _ in response.json()["methodResponses"]:
                    if name == "Email/get":
                        state = result["state"]
                    elif name == "error" and result.get("type") == "cannotCalculateChanges":
                        state = None
            await asyncio.sleep(rng.uniform(0.05, 0.25))


async def web_session(run: Run, base: str, email: str, seed: int) -> None:
    rng = random.Random(seed)
    async with httpx.AsyncClient(base_url=base, timeout=30, follow_redirects=True) as http:
        signed_in = False
        while not run.stop.is_set():
            if not signed_in:
                page = await run.timed("web", http.get("/login"))
                token = re.search(r'name="_csrf_token" value="([^"]+)"', page.text) if page is not None else None
                if token is not None:
                    answer = await run.timed("web", http.post(
                        "/login", data={"email": email, "password": PASSWORD, "_csrf_token": token.group(1)}))
                    signed_in = answer is not None and "/login" not in str(answer.url)
                await asyncio.sleep(0.5)
                continue
            path = rng.choice([f"/?page={rng.randint(1, 5)}", f"/search?q={rng.choice(WORDS)}", "/"])
            answer = await run.timed("web", http.get(path))
            if answer is not None and "/login" in str(answer.url):
                signed_in = False
            await asyncio.sleep(rng.uniform(0.2, 0.6))


@dataclass(frozen=True)
class Person:
    email: str
    token: str  # an app password (JMAP allows 4 requests at once per user, so 4 clients each)
    account: int  # the local archive account the JMAP clients read


async def seed(settings: Settings, dsn: str, dovecot: DovecotServer, messages: int, people: int
               ) -> tuple[int, list[Person]]:
    """The IMAP account (of the first person) whose server gets `messages` messages, and the people."""
    mail = dovecot.add_user("loaduser")
    mail.deliver(generate(messages))
    services = await open_services(settings, dsn)
    try:
        found: list[Person] = []
        imap = 0
        for n in range(people):
            user = await services.users.create_user(f"load{n}@bench.example", PASSWORD)
            local = await account_rows(services).create(user_id=user.id, provider_kind=ProviderKind.LOCAL,
                                                        name="Archive", email=user.email)
            inbox = (await services.labels.role_ids(user.id))[LabelRole.INBOX]
            archived = generate(400, seed=3 + n)
            await services.pipeline.ingest([parse_message(raw, account_id=local, label_ids=(inbox,))
                                            for raw in archived])
            token = (await services.app_passwords.create(user.id, "load")).token
            if n == 0:
                imap = await services.providers.get(ImapAccountService).add(user.id, MailServerAccountInput(
                    email=f"{mail.name}@bench.example", host=dovecot.host, port=dovecot.port, tls="none",
                    username=mail.name, password=mail.password), operator=True)
            found.append(Person(user.email, token, local))
        return imap, found
    finally:
        await services.close()


async def stored(services: Services, account: int) -> tuple[int, int]:
    count = int(await services.db.fetchval("SELECT count(*) FROM message WHERE account_id = $1", account))
    distinct = int(await services.db.fetchval(
        "SELECT count(DISTINCT rfc_message_id) FROM message WHERE account_id = $1", account))
    return count, distinct


def pg_restart(pg: EmbeddedPostgres) -> float:
    started = time.monotonic()
    result = pg._run([pg.binaries.tool("pg_ctl"), "-D", str(pg.cluster_dir), "-l", str(pg.log_file), "-w",
                      "restart", "-m", "fast"])
    if result.returncode != 0:
        raise SystemExit(f"pg_ctl restart failed: {result.stderr}")
    return time.monotonic() - started


async def faults(run: Run, services: Services, account: int, total: int, pg: EmbeddedPostgres,
                 dovecot: DovecotServer) -> None:
    """Restart PostgreSQL at a quarter of the import and Dovecot past half, each once."""
    done = 0
    for fraction, what in ((0.25, "PostgreSQL"), (0.55, "Dovecot")):
        while done < fraction * total and not run.stop.is_set():
            await asyncio.sleep(0.5)
            try:
                done, _ = await stored(services, account)
            except Exception:  # our own reads fail during the database's restart too
                await asyncio.sleep(1)
        if run.stop.is_set():
            return
        window = Window(what, time.monotonic())
        run.windows.append(window)
        if what == "PostgreSQL":
            await asyncio.to_thread(pg_restart, pg)
        else:
            await asyncio.to_thread(dovecot.stop)
            await asyncio.sleep(2.0)  # the import's connection is gone, and reconnecting fails for a while
            await asyncio.to_thread(dovecot.start)
        window.ended = time.monotonic()
        print(f"  {what} restarted in {window.ended - window.started:.1f} s at {done:,} of {total:,} messages",
              flush=True)


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))] if ordered else 0.0


async def main_async(args: argparse.Namespace) -> int:
    base = Path(tempfile.mkdtemp(prefix="plmail-bench-load-"))
    os.chmod(base, 0o755)
    pg = EmbeddedPostgres(base / "pg-data", find_pg_binaries(), resolve_run_as(None))
    dovecot = DovecotServer(base / "dovecot")
    serve: ServeProcess | None = None
    try:
        dsn = pg.start()
        dovecot.start()
        settings = Settings.from_env({"PLMAIL_DATA_DIR": str(base / "serve"), "PLMAIL_DATABASE_URL": dsn})
        people = max(1, (args.jmap_clients + 3) // 4)
        imap, persons = await seed(settings, dsn, dovecot, args.messages, max(people, args.web_sessions))
        serve = ServeProcess(base / "serve", database_url=dsn).start()
        serve.wait_healthy(120)
        run = Run()
        services = await open_services(settings, dsn)
        started = time.monotonic()
        print(f"serving at {serve.url}; importing {args.messages:,} messages from Dovecot at {dovecot.port}",
              flush=True)
        # Four clients per person; the first person's first client reads the account being imported.
        tasks = [asyncio.create_task(jmap_client(
            run, serve.url, persons[n // 4].token, str(imap if n == 0 else persons[n // 4].account), n))
            for n in range(args.jmap_clients)]
        tasks += [asyncio.create_task(web_session(run, serve.url, persons[n].email, 100 + n))
                  for n in range(args.web_sessions)]
        fault = asyncio.create_task(faults(run, services, imap, args.messages, pg, dovecot))
        finished_at: float | None = None
        while time.monotonic() - started < TIME_CAP_SECONDS:
            await asyncio.sleep(1)
            try:
                count, _ = await stored(services, imap)
            except Exception as exc:  # our own reads fail while the database restarts
                print(f"  (reading the count failed: {type(exc).__name__})", flush=True)
                continue
            if count >= args.messages and fault.done():
                finished_at = finished_at or time.monotonic()
                if time.monotonic() - finished_at > 10:  # keep the load on a little past the end
                    break
        run.stop.set()
        await asyncio.gather(*tasks, fault, return_exceptions=True)
        elapsed = time.monotonic() - started

        count, distinct = await stored(services, imap)
        jobs = {r["status"]: r["n"] for r in await services.db.fetch(
            "SELECT status, count(*) AS n FROM saq_jobs GROUP BY status")}
        failed = [dict(r) for r in await services.db.fetch(
            "SELECT queue, key, status FROM saq_jobs WHERE status IN ('failed', 'aborted') "
            "OR (status = 'active' AND queue IN ('ingest', 'ingest_backlog')) "
            "OR (status = 'queued' AND key NOT LIKE 'cron:%' AND scheduled < extract(epoch FROM now()) - 60)")]
        progress = await services.importer.progress(imap)
        await services.close()
        return report(run, started, elapsed, args.messages, count, distinct, jobs, failed,
                      progress is not None and not progress.importing, finished_at is not None)
    finally:
        try:
            if serve is not None and serve.proc is not None:
                print(f"plmail serve stopped in {stop_serve(serve):.1f} s after SIGTERM")
                kept = Path(tempfile.gettempdir()) / "plmail-load-serve.log"
                shutil.copy(serve.log_path, kept)
                print(f"its log: {kept}")
        finally:
            try:
                dovecot.stop()
            finally:
                pg.stop()
                shutil.rmtree(base, ignore_errors=True)


def stop_serve(serve: ServeProcess) -> float:
    started = time.monotonic()
    try:
        serve.terminate(60)
    except AssertionError as exc:
        print(str(exc)[-3000:])
        raise
    return time.monotonic() - started


def report(run: Run, began: float, elapsed: float, total: int, count: int, distinct: int, jobs: dict[str, int],
           failed: list[dict[str, Any]], import_done: bool, finished: bool) -> int:
    ok = [s for s in run.samples if s.ok]
    errors = [s for s in run.samples if not s.ok]
    print(f"\nran {elapsed:.0f} s: {len(run.samples):,} requests, {len(ok):,} served "
          f"({len(ok) / elapsed:.0f}/s)")
    for kind in ("jmap", "web"):
        times = [s.seconds * 1000 for s in ok if s.kind == kind]
        if times:
            print(f"  {kind:4}  {len(times):6,} served  p50 {statistics.median(times):6.0f} ms  "
                  f"p95 {percentile(times, 0.95):6.0f} ms")
    times = [s.seconds * 1000 for s in ok]
    print(f"  all   {len(times):6,} served  p50 {statistics.median(times):6.0f} ms  "
          f"p95 {percentile(times, 0.95):6.0f} ms")
    outside = [s for s in errors if not any(w.holds(s) for w in run.windows)]
    for window in run.windows:
        inside = [s for s in errors if window.holds(s)]
        last = max((s.started + s.seconds for s in inside), default=window.started) - window.started
        print(f"  errors during the {window.what} restart window: {len(inside)} "
              f"(the last ended {last:.1f} s after it began; the restart took {window.ended - window.started:.1f} s, "
              f"from {window.started - began:.1f} s into the run)")
    print(f"  errors outside the restart windows: {len(outside)}")
    for sample in outside[:10]:
        print(f"    {sample.kind} at {sample.started - began:.1f} s: {sample.detail}")
    print(f"end state: {count:,} of {total:,} messages stored, {distinct:,} distinct Message-IDs; "
          f"import {'done' if import_done else 'NOT done'}; jobs by status {jobs} (the queued ones: crons waiting)")
    good = (not outside and finished and import_done and count == total == distinct and not failed
            and len(run.windows) == 2)
    if failed:
        print(f"  jobs lost or stuck: {failed}")
    print("OK" if good else "FAILED")
    return 0 if good else 1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=3_000)
    parser.add_argument("--jmap-clients", type=int, default=20)
    parser.add_argument("--web-sessions", type=int, default=5)
    raise SystemExit(asyncio.run(main_async(parser.parse_args())))


if __name__ == "__main__":
    main()
