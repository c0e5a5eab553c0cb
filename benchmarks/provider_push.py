"""Provider push latency: Gmail (Pub/Sub push) and Graph (change notification) → the new message stored.

Usage: .venv/bin/python benchmarks/provider_push.py [--notifications 50]

A private PostgreSQL cluster, the real app served by uvicorn on loopback with PLMAIL_PUBLIC_URL pointing at it,
the ingest workers, and the fake Gmail and Graph. For each provider an account is connected and imported, its
watch/subscription made by the renewal job (the fake Graph runs its validation handshake against plmail), then,
one after another, a message is added at the fake and the fake delivers its notification; the time runs from
sending the notification until the message's row (and with it its change-log entry, same transaction) is
committed. Reported: p50/p95/max over the notifications, with the load average. The issue's target for the
whole chain (notification → Web Push sent) is p95 < 3 s.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import os
import socket
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import uvicorn

from benchmarks.cluster import private_cluster
from plmail.app import create_app
from plmail.config import Settings
from plmail.domain.account_services import OAuthProvider
from plmail.domain.enums import QueueName
from plmail.jobs.catalog import default_catalog
from plmail.jobs.workers import WorkerSupervisor
from plmail.providers.gmail.push import GMAIL_RENEW_WATCHES
from plmail.providers.graph.push import GRAPH_RENEW_SUBSCRIPTIONS
from plmail.providers.oauth import ConnectedIdentity, TokenSet
from plmail.providers.oauth_accounts import OAuthServices
from plmail.services import Services, open_services
from tests.support.fakes import FakeServer, GmailFake, GraphFake, rfc822

TOPIC = "projects/plmail-bench/topics/gmail"
PUSHER = "pubsub-push@plmail-bench.iam.gserviceaccount.com"


async def _job(services: Services, name: str) -> None:
    for spec, function in services.provider_roles.jobs:
        if spec.name == name:
            await function({})
            return
    raise SystemExit(f"{name} is not installed: is PLMAIL_PUBLIC_URL set?")


async def _connect(services: Services, provider: OAuthProvider, address: str, fake: GmailFake | GraphFake) -> int:
    user = await services.users.create_user(f"{provider.value}@bench.example", "correct horse")
    pair = fake.oauth.issue(address)
    tokens = TokenSet(pair.access_token, pair.refresh_token, datetime.now(UTC) + timedelta(seconds=pair.expires_in),
                      pair.scope)
    outcome = await services.providers.get(OAuthServices).connect.connect(
        user.id, ConnectedIdentity(provider, address, "Bench", tokens))
    account_id = outcome.account_id
    while True:  # the workers run the first sync and import that connecting asked for
        progress = await services.importer.progress(account_id)
        record = await services.db.fetchval("SELECT last_synced_at FROM account WHERE id = $1", account_id)
        if record is not None and progress is not None and not progress.importing:
            return account_id
        await asyncio.sleep(0.1)


async def _measure(services: Services, account_id: int, count: int,
                   deliver: Callable[[str], Awaitable[int]]) -> list[float]:
    latencies: list[float] = []
    for n in range(count):
        subject = f"Pushed {n}"
        started = time.perf_counter()
        status = await deliver(subject)
        if status >= 300:
            raise SystemExit(f"the endpoint answered {status}")
        while not await services.db.fetchval(
                "SELECT EXISTS (SELECT 1 FROM message WHERE account_id = $1 AND subject = $2)", account_id, subject):
            await asyncio.sleep(0.005)
            if time.perf_counter() - started > 60:
                raise SystemExit(f"{subject!r} not stored after 60 s")
        latencies.append(time.perf_counter() - started)
    return latencies


def _report(name: str, latencies: list[float]) -> None:
    ordered = sorted(latencies)
    p95 = ordered[max(0, round(0.95 * len(ordered)) - 1)]
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"{name}: {len(ordered)} notifications → stored: p50 {statistics.median(ordered) * 1000:.0f} ms, "
          f"p95 {p95 * 1000:.0f} ms, max {ordered[-1] * 1000:.0f} ms (load average {load})", flush=True)


async def run(settings: Settings, dsn: str, count: int) -> None:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(128)
    public_url = f"http://127.0.0.1:{listener.getsockname()[1]}"
    gmail, graph = GmailFake(), GraphFake()
    gmail.pubsub.create_topic(TOPIC)
    gmail.pubsub.subscribe_push(TOPIC, f"{public_url}/provider-push/gmail", service_account=PUSHER)
    async with FakeServer(gmail) as gmail_server, FakeServer(graph) as graph_server:
        settings = dataclasses.replace(
            settings, public_url=public_url, gmail_pubsub_topic=TOPIC, gmail_push_service_account=PUSHER,
            google_base_url=gmail_server.url, google_client_id=gmail.client_id,
            google_client_secret=gmail.client_secret, microsoft_base_url=graph_server.url,
            microsoft_client_id=graph.client_id, microsoft_client_secret=graph.client_secret)
        services = await open_services(settings, dsn)
        app = create_app(settings, dsn, worker_queues=(), services=services)
        server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
        serving = asyncio.create_task(server.serve(sockets=[listener]))
        queues = [QueueName.INGEST, QueueName.INGEST_BACKLOG, QueueName.ENRICH_LIVE]
        supervisor = WorkerSupervisor(services, default_catalog(), queues, grace_seconds=2)
        try:
            while not server.started:  # noqa: ASYNC110 (uvicorn has a flag, no event, for "listening")
                await asyncio.sleep(0.01)
            supervisor.start()

            gmail_account = await _connect(services, OAuthProvider.GOOGLE, gmail.mailbox.email, gmail)
            await _job(services, GMAIL_RENEW_WATCHES.name)

            async def gmail_push(subject: str) -> int:
                gmail.mailbox.add_message(rfc822(subject), label_ids=("INBOX", "UNREAD"))
                response = await gmail.notify()
                assert response is not None
                return response.status_code

            _report("Gmail push", await _measure(services, gmail_account, count, gmail_push))

            graph_account = await _connect(services, OAuthProvider.MICROSOFT, graph.mailbox.user_principal_name,
                                           graph)
            await _job(services, GRAPH_RENEW_SUBSCRIPTIONS.name)

            async def graph_push(subject: str) -> int:
                message = graph.mailbox.add_message(rfc822(subject), "inbox")
                (response,) = await graph.notify("created", message)
                return response.status_code

            _report("Graph notification", await _measure(services, graph_account, count, graph_push))
        finally:
            await supervisor.stop()
            server.should_exit = True
            await serving
            await services.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--notifications", type=int, default=50)
    args = parser.parse_args()
    with private_cluster("provider-push") as cluster:
        asyncio.run(run(cluster.settings, cluster.dsn, args.notifications))


if __name__ == "__main__":
    main()
