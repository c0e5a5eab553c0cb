"""Two machines, one database (issue 36): two `plmail serve` processes on one PostgreSQL. Migrations run once (the
second waits), a cron job runs once per tick cluster-wide, an account's sync runs in one place at a time, a send
goes out once, and a browser connected to one node hears of a change made through the other."""

from __future__ import annotations

import asyncio
import inspect
import itertools
import json
import shutil
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import asyncpg
import httpx
from prometheus_client.parser import text_string_to_metric_families

from plmail.config import Settings
from plmail.db.migrate import _LOCK_KEY as MIGRATION_LOCK
from plmail.db.migrate import known_migration_ids
from plmail.domain.messages import Address
from plmail.domain.outgoing import DraftContent
from plmail.keys import load_or_create_key
from plmail.services import open_services
from tests.integration.sending.conftest import add_sending_account
from tests.support.dovecot import DovecotUser, dovecot, dovecot_user
from tests.support.mail import make_message
from tests.support.pg import PgTestCluster
from tests.support.serve import ServeProcess
from tests.support.smtp import SmtpServer, smtp, smtp_server
from tests.support.web import sign_in

__all__ = ["dovecot", "dovecot_user", "smtp", "smtp_server"]

TOKEN = "two-nodes-metrics-0123456789"
OWNER, PASSWORD = "owner@example.org", "correct horse"
CRON = "release_overdue_held"  # a per-minute cron that finds nothing to do: the cheapest one there is


def _log(node: ServeProcess) -> list[dict[str, Any]]:
    """The node's whole log (PLMAIL_LOG_FORMAT=json): one object per line."""
    entries = []
    for line in node.log_path.read_text(errors="replace").splitlines():
        if line.startswith("{"):
            entries.append(json.loads(line))
    return entries


async def _until(predicate: Callable[[], Any], timeout: float, what: str) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if inspect.isawaitable(value):
            value = await value
        if value:
            return value
        await asyncio.sleep(0.05)
    raise AssertionError(f"{what} not within {timeout} s")


async def _cron_runs(node: ServeProcess) -> float:
    async with httpx.AsyncClient(timeout=10) as http:
        response = await http.get(f"{node.url}/metrics", headers={"Authorization": f"Bearer {TOKEN}"})
    assert response.status_code == 200, response.text
    return sum(sample.value for family in text_string_to_metric_families(response.text)
               for sample in family.samples
               if sample.name == "plmail_cron_runs_total" and sample.labels.get("job") == CRON)


async def test_two_serve_processes_share_one_database(
    pg: PgTestCluster, tmp_path: Path, dovecot_user: DovecotUser, smtp: SmtpServer,
) -> None:
    name = f"two_nodes_{uuid.uuid4().hex[:10]}"
    dsn = pg.create_database(name)  # empty: the nodes migrate it
    # Two machines share the installation key (sessions and stored passwords are sealed with it), not a disk.
    load_or_create_key(tmp_path / "a" / "secret.key")
    for other in ("b", "setup"):
        (tmp_path / other).mkdir()
        shutil.copy(tmp_path / "a" / "secret.key", tmp_path / other / "secret.key")
    env = {"PLMAIL_LOG_FORMAT": "json", "PLMAIL_METRICS_TOKEN": TOKEN}
    holder = await asyncpg.connect(dsn)
    nodes: list[ServeProcess] = []
    services = None
    try:
        # (1) Migrations once. Someone else holds the migration lock, so both nodes must wait for it.
        await holder.execute("SELECT pg_advisory_lock($1)", MIGRATION_LOCK)
        nodes = [ServeProcess(tmp_path / n, database_url=dsn, extra_env=env).start() for n in ("a", "b")]
        a, b = nodes

        def both_waiting() -> bool:
            return all(any("is migrating this database; waiting" in e["message"] for e in _log(n)) for n in nodes)
        await _until(both_waiting, 30, "both nodes waiting for the migration lock")
        await holder.execute("SELECT pg_advisory_unlock($1)", MIGRATION_LOCK)
        await asyncio.gather(*(asyncio.to_thread(n.wait_healthy, 60) for n in nodes))
        rows = await holder.fetch("SELECT name, count(*) AS n FROM migration GROUP BY name")
        assert sorted(r["name"] for r in rows) == known_migration_ids()
        assert all(r["n"] == 1 for r in rows), [r["name"] for r in rows if r["n"] != 1]
        applied = [n for n in nodes if any(e["logger"] == "plmail.db.migrate" and e["message"].startswith("applied ")
                                           for e in _log(n))]
        assert len(applied) == 1, "exactly one node applied the migrations; the other found none pending"

        async def cron_row() -> tuple[int, str] | None:
            row = await holder.fetchrow("SELECT scheduled, status FROM saq_jobs WHERE key = $1", f"cron:{CRON}")
            return (int(row["scheduled"]), str(row["status"])) if row is not None else None

        async def cron_baseline() -> tuple[int, float] | None:
            """The tick the cron waits for and the runs counted so far, read while no tick is near its end."""
            before = await cron_row()
            runs = await _runs_total(nodes)
            after = await cron_row()
            if before is None or before != after or before[1] != "queued" or time.time() - (before[0] - 60) < 3:
                return None
            return before[0], runs
        first_tick, runs_before = await _until(cron_baseline, 10, "the cron job scheduled")

        settings = Settings.from_env({"PLMAIL_DATA_DIR": str(tmp_path / "setup"), "PLMAIL_DATABASE_URL": dsn})
        services = await open_services(settings, dsn)
        user = await services.users.create_user(OWNER, PASSWORD)
        account_id = await add_sending_account(services, user, dovecot_user, smtp)

        # (3) One account's sync in one place at a time: syncs asked of both nodes' workers, mail arriving between.
        def syncs() -> list[tuple[float, float, int]]:
            return sorted((e["sync_started"], e["sync_ended"], node.port) for node in nodes for e in _log(node)
                          if "sync_started" in e and e["message"].startswith(f"synced account {account_id} "))

        delivered = 0
        # Which node's worker takes a job is a race: keep asking (at least four rounds) until both have taken one.
        for round_ in range(24):
            if round_ >= 4 and {port for _, _, port in syncs()} == {a.port, b.port}:
                break
            before = len(syncs())
            delivered += dovecot_user.deliver([make_message(subject=f"Round {round_} #{n}",
                                                            message_id=f"r{round_}n{n}@example.org")
                                               for n in range(3)])
            for _ in range(4):
                await services.sync.request(account_id)
            await _until(lambda b=before: len(syncs()) > b, 20, "a sync")  # type: ignore[misc]
            await _until(lambda d=delivered: holder.fetchval(  # type: ignore[misc]
                "SELECT count(*) = $2 FROM message WHERE account_id = $1", account_id, d), 20, "the mail synced")
        ran = syncs()
        assert len(ran) >= 4 and {port for _, _, port in ran} == {a.port, b.port}, ran
        for (_, ended, _), (started, _, _) in itertools.pairwise(ran):
            assert started >= ended, f"two syncs of one account overlapped: {ran}"

        # (4) A browser and a JMAP client on node B hear of a mark-read made through node A (sessions live in
        # PostgreSQL, so node A's sign-in cookie is good on node B too).
        jmap_auth = {"Authorization": f"Bearer {(await services.app_passwords.create(user.id, 'Phone')).token}"}
        unified = f"u{user.id}"
        async with httpx.AsyncClient(base_url=a.url, follow_redirects=True, timeout=10) as on_a:
            assert (await sign_in(on_a, OWNER, PASSWORD)).status_code == 200
            async with httpx.AsyncClient(base_url=b.url, cookies=on_a.cookies, timeout=10) as on_b, \
                    on_b.stream("GET", "/events") as page, \
                    on_b.stream("GET", "/jmap/eventsource", params={"types": "*", "closeafter": "no", "ping": "0"},
                                headers=jmap_auth) as phone:
                assert page.status_code == 200 and phone.status_code == 200
                events: asyncio.Queue[tuple[str, str]] = asyncio.Queue()
                pushes: asyncio.Queue[dict[str, Any]] = asyncio.Queue()

                async def read(stream: httpx.Response, source: str) -> None:
                    event = ""
                    async for line in stream.aiter_lines():
                        if line.startswith("event:"):
                            event = line.split(":", 1)[1].strip()
                            await events.put((source, event))
                        elif line.startswith("data:") and source == "jmap" and event == "state":
                            await pushes.put(json.loads(line.split(":", 1)[1]))
                readers = [asyncio.create_task(read(page, "page")), asyncio.create_task(read(phone, "jmap"))]
                try:
                    assert {await asyncio.wait_for(events.get(), 5) for _ in range(2)} == {("page", "ready"),
                                                                                      ("jmap", "state")}
                    while not pushes.empty():
                        pushes.get_nowait()
                    thread_id = await holder.fetchval(
                        "SELECT thread_id FROM message WHERE account_id = $1 AND seen_at IS NULL LIMIT 1", account_id)
                    marked = await on_a.post("/actions", data={
                        "action": "read", "thread_ids": str(thread_id), "next": "/",
                        "_csrf_token": on_a.cookies["plmail_csrf"]})
                    assert marked.status_code == 200
                    deadline = time.monotonic() + 2
                    got = await on_a.post("/jmap/api", headers=jmap_auth, json={
                        "using": ["urn:ietf:params:jmap:core", "urn:ietf:params:jmap:mail"],
                        "methodCalls": [["Email/get", {"accountId": unified, "ids": []}, "0"]]})
                    email_state = got.json()["methodResponses"][0][1]["state"]
                    while (await asyncio.wait_for(events.get(), deadline - time.monotonic())) != ("page", "mail"):
                        pass
                    while (await asyncio.wait_for(pushes.get(), deadline - time.monotonic())
                           ).get("changed", {}).get(unified, {}).get("Email") != email_state:
                        pass  # node A's own state, pushed by node B
                finally:
                    for reader in readers:
                        reader.cancel()

        # (3) A send goes out once, though both nodes run the send queue and its minute's sweep.
        identity = await services.identities.primary(user.id, account_id)
        assert identity is not None
        draft = await services.drafts.save(user.id, DraftContent(
            identity_id=identity.id, to=(Address("Bea Berg", "bea@example.net"),), subject="Just once",
            text_body="One copy only.\n"))
        submission = await services.outbox.submit(user.id, draft.message_id, identity.id)

        await smtp.arrival(1, timeout=30)
        await _until(lambda: holder.fetchval("SELECT state = 'sent' FROM submission WHERE id = $1", submission.id),
                     20, "the submission marked sent")
        assert [r.message["Subject"] for r in smtp.received] == ["Just once"]

        # (2) The cron: its first tick ran on exactly one node (counted by both nodes' /metrics together).
        async def ticked() -> int | None:
            row = await cron_row()
            return row[0] if row is not None and row[1] == "queued" and row[0] > first_tick else None

        ticks = (await _until(ticked, first_tick - time.time() + 15, "the first tick of the cron done")
                 - first_tick) // 60

        async def counted() -> float | None:
            runs = await _runs_total(nodes) - runs_before
            return runs if runs >= ticks else None
        runs = await _until(counted, 5, "the cron's runs counted")
        assert runs == ticks, f"{runs} runs for {ticks} tick(s)"
        assert [r.message["Subject"] for r in smtp.received] == ["Just once"]  # the minute's send sweep sent none
    finally:
        if services is not None:
            await services.close()
        for node in nodes:
            node.terminate()
        await holder.close()
        pg.drop_database(name)


async def _runs_total(nodes: list[ServeProcess]) -> float:
    return sum([await _cron_runs(node) for node in nodes])
