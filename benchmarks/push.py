"""New mail to a phone: IMAP APPEND -> Web Push message received at the push service, p50/p95.

Usage: .venv/bin/python benchmarks/push.py [--messages 50]

Starts a private PostgreSQL cluster, a private Dovecot and a real `plmail serve` with its workers (IMAP IDLE and
the push dispatcher), a user with an IMAP account and an app password, and the suite's push service on loopback
(tests/support/push_service.py: it checks the VAPID signature and decrypts each message with the device's key).
A JMAP client subscribes (RFC 8620 §7.2, with verification); then, one at a time, another IMAP client APPENDs a
message, and the time until the StateChange carrying the new Email state is received is taken. Messages are a
little over a second apart, so the one-push-a-second coalescing never holds one back. Target (issue 33): p95 < 2 s.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.cluster import private_cluster
from benchmarks.scale import wait_healthy
from plmail.config import Settings
from plmail.domain.account_services import MailServerAccountInput
from plmail.providers.imap.accounts import ImapAccountService
from plmail.services import open_services
from tests.support.dovecot import DovecotServer, DovecotUser
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
        session = (await http.get("/jmap/session", headers={"Authorization": f"Bearer {token}"})).json()
        push.vapid_key = session["capabilities"][VAPID]["applicationServerKey"]
        device = push.device()
        created = await jmap(http, token, "PushSubscription/set", {"create": {"p": {
            "deviceClientId": "bench-phone", "url": device.url, "keys": device.keys, "types": ["Email"]}}})
        subscription = dict(created["created"])["p"]["id"]  # type: ignore[call-overload]
        verification = (await device.next(30)).message
        await jmap(http, token, "PushSubscription/set",
                   {"update": {subscription: {"verificationCode": verification["verificationCode"]}}})
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--messages", type=int, default=50)
    args = parser.parse_args()
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
