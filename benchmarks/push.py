"""New mail to a phone: IMAP APPEND -> Web Push message received at the push service, p50/p95; and the same from a
Gmail Pub/Sub push and a Graph change notification.

Usage: .venv/bin/python benchmarks/push.py [--messages 50] [--only imap|providers]

Starts a private PostgreSQL cluster, a private Dovecot and a real `plmail serve` with its workers (IMAP IDLE and
the push dispatcher), a user with an IMAP account and an app password, and the suite's push service on loopback
(tests/support/push_service.py: it checks the VAPID signature and decrypts each message with the device's key).
A JMAP client subscribes (RFC 8620 §7.2, with verification); then, one at a time, another IMAP client APPENDs a
message, and the time until the StateChange carrying the new Email state is received is taken. Messages are a
little over a second apart, so the one-push-a-second coalescing never holds one back. Target (issue 33): p95 < 2 s.

Providers: with PLMAIL_PUBLIC_URL set, a Gmail account (the suite's Gmail fake, its Pub/Sub pushing to plmail's
endpoint with a signed token) and a Microsoft account (the Graph fake, its subscription validated against
plmail's endpoint) are connected and watched; each message is added to the fake's mailbox and its notification
delivered, and the time until the StateChange with the new Email state is received is taken (the notification
asks for a sync at once; a worker of `plmail serve` runs it and the dispatcher pushes). Target: p95 < 3 s.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.cluster import Cluster, private_cluster
from benchmarks.scale import wait_healthy
from plmail.config import Settings
from plmail.domain.account_services import MailServerAccountInput
from plmail.providers.gmail.push import GMAIL_RENEW_WATCHES
from plmail.providers.graph.push import GRAPH_RENEW_SUBSCRIPTIONS
from plmail.providers.imap.accounts import ImapAccountService
from plmail.services import Services, open_services
from tests.integration.gmail.conftest import connect_account as connect_gmail
from tests.integration.graph.conftest import connect as connect_graph
from tests.support.dovecot import DovecotServer, DovecotUser
from tests.support.fakes import FakeServer, GmailFake, GraphFake, rfc822
from tests.support.imap_mail import message
from tests.support.net import free_port
from tests.support.push_service import Device, PushService

CORE = "urn:ietf:params:jmap:core"
MAIL = "urn:ietf:params:jmap:mail"
VAPID = "urn:ietf:params:jmap:webpush-vapid"


async def prepare(settings: Settings, dsn: str, mail: DovecotUser) -> tuple[str, str]:
    """(app password, JMAP account id of the IMAP account)."""
    services = await open_services(settings, dsn)
    try:
        user = await services.users.create_user("bench@bench.example", "benchmark password")
        account_id = await services.providers.get(ImapAccountService).add(user.id, MailServerAccountInput(
            email=f"{mail.name}@bench.example", host=mail.server.host, port=mail.server.port, tls="none",
            username=mail.name, password=mail.password), operator=True)
        token = (await services.app_passwords.create(user.id, "Phone")).token
    finally:
        await services.close()
    return token, str(account_id)


async def jmap(http: httpx.AsyncClient, token: str, name: str, arguments: dict[str, object], *,
               using: list[str] | None = None) -> dict[str, object]:
    response = await http.post("/jmap/api", headers={"Authorization": f"Bearer {token}"},
                               json={"using": using or [CORE], "methodCalls": [[name, arguments, "c"]]})
    response.raise_for_status()
    result_name, result, _ = response.json()["methodResponses"][0]
    if result_name != name:
        raise SystemExit(f"{name} failed: {result}")
    return dict(result)


async def arrival(http: httpx.AsyncClient, token: str, device: Device, account: str, since: str, within: float
                  ) -> tuple[float, str]:
    """When the first StateChange arrived whose Email state has a new Email since `since` (a later change to mail
    already there, such as its category being set, is not an arrival), and that state."""
    deadline = time.monotonic() + within
    while True:
        received = await device.next(max(deadline - time.monotonic(), 0.01))
        state = received.message.get("changed", {}).get(account, {}).get("Email")
        if state is None or state == since:
            continue
        changes = await jmap(http, token, "Email/changes", {"accountId": account, "sinceState": since},
                             using=[CORE, MAIL])
        if changes["created"]:
            return received.at, str(state)


async def run(url: str, token: str, account: str, mail: DovecotUser, count: int) -> list[float]:
    async with PushService() as push, httpx.AsyncClient(base_url=url, timeout=30) as http:
        device = await subscribe(http, token, push)
        state = str(dict(await jmap(http, token, "Email/get", {"accountId": account, "ids": []},
                                    using=[CORE, MAIL]))["state"])
        # Warm-up: the first sync has found the inbox and IDLE watches it once this one is pushed.
        await asyncio.to_thread(mail.append, [message(0)])
        _, state = await arrival(http, token, device, account, state, 120)
        latencies: list[float] = []
        for n in range(1, count + 1):
            await asyncio.sleep(1.05)
            started = time.monotonic()
            await asyncio.to_thread(mail.append, [message(n)])
            arrived, state = await arrival(http, token, device, account, state, 30)
            latencies.append(arrived - started)
            print(f"  {n:3d}: {latencies[-1] * 1000:7.0f} ms", flush=True)
        return latencies


TOPIC = "projects/plmail-bench/topics/gmail"
PUSHER = "pubsub-push@plmail-bench.iam.gserviceaccount.com"


def provider_settings(settings: Settings, url: str, gmail: FakeServer[GmailFake], graph: FakeServer[GraphFake]
                      ) -> tuple[Settings, dict[str, str]]:
    """The settings that make plmail use provider push against the fakes, and the same as environment."""
    env = {"PLMAIL_PUBLIC_URL": url, "PLMAIL_GMAIL_PUBSUB_TOPIC": TOPIC, "PLMAIL_GMAIL_PUSH_SERVICE_ACCOUNT": PUSHER,
           "PLMAIL_GOOGLE_BASE_URL": gmail.url, "PLMAIL_GOOGLE_CLIENT_ID": gmail.app.client_id,
           "PLMAIL_GOOGLE_CLIENT_SECRET": gmail.app.client_secret, "PLMAIL_MICROSOFT_BASE_URL": graph.url,
           "PLMAIL_MICROSOFT_CLIENT_ID": graph.app.client_id,
           "PLMAIL_MICROSOFT_CLIENT_SECRET": graph.app.client_secret}
    return dataclasses.replace(
        settings, public_url=url, gmail_pubsub_topic=TOPIC, gmail_push_service_account=PUSHER,
        google_base_url=gmail.url, google_client_id=gmail.app.client_id, google_client_secret=gmail.app.client_secret,
        microsoft_base_url=graph.url, microsoft_client_id=graph.app.client_id,
        microsoft_client_secret=graph.app.client_secret, push_allow_loopback=True), env


async def subscribe(http: httpx.AsyncClient, token: str, push: PushService) -> Device:
    session = (await http.get("/jmap/session", headers={"Authorization": f"Bearer {token}"})).json()
    push.vapid_key = session["capabilities"][VAPID]["applicationServerKey"]
    device = push.device()
    created = await jmap(http, token, "PushSubscription/set", {"create": {"p": {
        "deviceClientId": "bench-phone", "url": device.url, "keys": device.keys, "types": ["Email"]}}})
    subscription = dict(created["created"])["p"]["id"]  # type: ignore[call-overload]
    verification = (await device.next(30)).message
    await jmap(http, token, "PushSubscription/set",
               {"update": {subscription: {"verificationCode": verification["verificationCode"]}}})
    return device


async def imported(services: Services, account_id: int) -> None:
    """The first sync and import, as after connecting."""
    await services.sync.run(account_id)
    while (progress := await services.importer.progress(account_id)) is not None and progress.importing:
        await services.importer.run_page(account_id, chain=False)
    await services.sync.run(account_id)


async def run_providers(settings: Settings, dsn: str, url: str, gmail: FakeServer[GmailFake],
                        graph: FakeServer[GraphFake], count: int) -> dict[str, list[float]]:
    services = await open_services(settings, dsn)
    try:
        user = await services.users.create_user("cloud@bench.example", "benchmark password")
        gmail_account = await connect_gmail(services, user, gmail.app)
        graph_account = await connect_graph(services, user, graph, graph.app.mailbox.user_principal_name)
        for account_id in (gmail_account, graph_account):
            await imported(services, account_id)
        token = (await services.app_passwords.create(user.id, "Phone")).token
        gmail.app.pubsub.subscribe_push(TOPIC, f"{url}/provider-push/gmail", service_account=PUSHER)
        for spec, function in services.provider_roles.jobs:  # users.watch, POST /subscriptions (validated)
            if spec.name in (GMAIL_RENEW_WATCHES.name, GRAPH_RENEW_SUBSCRIPTIONS.name):
                await function({})
    finally:
        await services.close()
    if not gmail.app.watches or not graph.app.subscriptions:
        raise SystemExit("the accounts are not watched: check PLMAIL_PUBLIC_URL and the fakes")
    results: dict[str, list[float]] = {"Gmail": [], "Graph": []}
    async with PushService() as push, httpx.AsyncClient(base_url=url, timeout=30) as http:
        device = await subscribe(http, token, push)
        for name, account_id in (("Gmail", gmail_account), ("Graph", graph_account)):
            account = str(account_id)
            state = str(dict(await jmap(http, token, "Email/get", {"accountId": account, "ids": []},
                                        using=[CORE, MAIL]))["state"])
            for n in range(count + 1):  # the first is a warm-up
                await asyncio.sleep(1.05)
                raw = rfc822(f"{name} bench {n}", message_id=f"<{name.lower()}-bench-{n}@bench.example>")
                started = time.monotonic()
                if name == "Gmail":
                    gmail.app.mailbox.add_message(raw, label_ids=("INBOX",))
                    await gmail.app.notify()
                else:
                    await graph.app.notify("created", graph.app.mailbox.add_message(raw, "inbox"))
                arrived, state = await arrival(http, token, device, account, state, 60)
                if n:
                    results[name].append(arrived - started)
                    print(f"  {name} {n:3d}: {results[name][-1] * 1000:7.0f} ms", flush=True)
    return results


def summary(label: str, latencies: list[float], target_ms: int) -> str:
    ordered = sorted(latencies)
    p50 = statistics.median(ordered)
    p95 = ordered[max(0, round(0.95 * len(ordered)) - 1)]
    return (f"{label}, {len(ordered)} messages: p50 {p50 * 1000:.0f} ms, p95 {p95 * 1000:.0f} ms, "
            f"max {ordered[-1] * 1000:.0f} ms (target p95 < {target_ms} ms); "
            f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


def serve_process(cluster: Cluster, extra_env: dict[str, str], port: int) -> subprocess.Popen[bytes]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PLMAIL_")}
    env.update({"PLMAIL_DATABASE_URL": cluster.dsn, "PLMAIL_DATA_DIR": str(cluster.settings.data_dir),
                "PLMAIL_PORT": str(port), "PLMAIL_LOG_LEVEL": "WARNING",
                "PLMAIL_PUSH_ALLOW_LOOPBACK": "1", **extra_env})  # the push service is on loopback
    with (cluster.base / "serve.log").open("ab") as out:
        return subprocess.Popen([sys.executable, "-m", "plmail.cli", "serve"], env=env, stdout=out,
                                stderr=subprocess.STDOUT)


def bench_providers(count: int) -> None:
    gmail_fake = GmailFake()
    gmail_fake.pubsub.create_topic(TOPIC)
    with private_cluster("push-providers") as cluster, FakeServer(gmail_fake) as gmail, \
            FakeServer(GraphFake()) as graph:
        port = free_port()
        url = f"http://127.0.0.1:{port}"
        settings, env = provider_settings(cluster.settings, url, gmail, graph)
        serve = serve_process(cluster, env, port)
        try:
            wait_healthy(url, serve, cluster.base / "serve.log")
            results = asyncio.run(run_providers(settings, cluster.dsn, url, gmail, graph, count))
        finally:
            serve.terminate()
            serve.wait(30)
    print()
    print(summary("Gmail Pub/Sub notification -> push received", results["Gmail"], 3000))
    print(summary("Graph change notification -> push received", results["Graph"], 3000))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--messages", type=int, default=50)
    parser.add_argument("--only", choices=("imap", "providers"))
    args = parser.parse_args()
    if args.only != "imap":
        bench_providers(args.messages)
        if args.only == "providers":
            return
    with private_cluster("push") as cluster:
        dovecot = DovecotServer(cluster.base / "dovecot").start()
        serve = None
        try:
            mail = dovecot.add_user("bench")
            token, account = asyncio.run(prepare(cluster.settings, cluster.dsn, mail))
            port = free_port()
            url = f"http://127.0.0.1:{port}"
            log = cluster.base / "serve.log"
            env = {k: v for k, v in os.environ.items() if not k.startswith("PLMAIL_")}
            env.update({"PLMAIL_DATABASE_URL": cluster.dsn, "PLMAIL_DATA_DIR": str(cluster.settings.data_dir),
                        "PLMAIL_PORT": str(port), "PLMAIL_LOG_LEVEL": "WARNING",
                        "PLMAIL_PUSH_ALLOW_LOOPBACK": "1"})  # the push service is on loopback
            with log.open("wb") as out:
                serve = subprocess.Popen([sys.executable, "-m", "plmail.cli", "serve"], env=env, stdout=out,
                                         stderr=subprocess.STDOUT)
            wait_healthy(url, serve, log)
            latencies = asyncio.run(run(url, token, account, mail, args.messages))
        finally:
            if serve is not None:
                serve.terminate()
                serve.wait(30)
            dovecot.stop()
    ordered = sorted(latencies)
    p50 = statistics.median(ordered)
    p95 = ordered[max(0, round(0.95 * len(ordered)) - 1)]
    print(f"\nIMAP APPEND -> push received, {len(ordered)} messages: p50 {p50 * 1000:.0f} ms, "
          f"p95 {p95 * 1000:.0f} ms, max {ordered[-1] * 1000:.0f} ms (target p95 < 2000 ms); "
          f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
