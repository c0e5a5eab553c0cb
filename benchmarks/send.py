"""Sending: how long from EmailSubmission/set to the message at the SMTP server, and how fast a full outbox
drains.

Usage: .venv/bin/python benchmarks/send.py [--sends 50] [--drain 200]

A private PostgreSQL cluster, the suite's Dovecot (Drafts and Sent) and SMTP server (aiosmtpd, AUTH over
STARTTLS, a new connection per message as plmail makes), the real JMAP endpoint over the ASGI app, and
the real saq workers of the send and ingest queues. The undo delay is 0: a JMAP submission without a
release time goes at once. Target: p95 under 500 ms. Then 200 submissions are queued with the workers
stopped and drained with them running: messages per second, and no message arriving twice.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.cluster import private_cluster
from plmail.app import create_app
from plmail.config import Settings
from plmail.domain.account_services import MailServerAccountInput
from plmail.domain.enums import LabelRole, QueueName
from plmail.domain.messages import Address
from plmail.domain.outgoing import DraftContent
from plmail.jobs.catalog import default_catalog
from plmail.jobs.workers import WorkerSupervisor
from plmail.providers.imap.accounts import ImapAccountService
from plmail.services import Services, open_services
from tests.conftest import running_lifespan
from tests.support.dovecot import DovecotServer
from tests.support.smtp import SmtpServer

QUEUES = (QueueName.SEND, QueueName.INGEST)
USING = ["urn:ietf:params:jmap:core", "urn:ietf:params:jmap:mail", "urn:ietf:params:jmap:submission"]


async def _jmap(http: httpx.AsyncClient, token: str, calls: list[list[Any]]) -> list[list[Any]]:
    response = await http.post("/jmap/api", json={"using": USING, "methodCalls": calls},
                               headers={"Authorization": f"Bearer {token}"})
    response.raise_for_status()
    return list(response.json()["methodResponses"])


def _percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[max(0, round(share * len(ordered)) - 1)]


async def run(settings: Settings, dsn: str, sends: int, drain: int, dovecot: DovecotServer, smtp: SmtpServer
              ) -> None:
    # The per-user rate limit (200 an hour) would stop the drain: a benchmark measures the machinery.
    settings = dataclasses.replace(settings, sends_per_hour=100_000)
    services: Services = await open_services(settings, dsn)
    mail = dovecot.add_user()
    try:
        user = await services.users.create_user("bench@example.org", "correct horse")
        await services.outbox.set_undo_delay(user.id, 0)
        server = mail.imap()
        account_id = await services.providers.get(ImapAccountService).add(user.id, MailServerAccountInput(
            email=f"{mail.name}@example.org", host=server.host, port=server.port, tls="none", username=mail.name,
            password=mail.password, ca_file=str(smtp.ca_file), **smtp.settings()), operator=True)
        await services.sync.run(account_id)
        token = (await services.app_passwords.create(user.id, "bench")).token
        identity = await services.identities.primary(user.id, account_id)
        assert identity is not None
        app = create_app(settings, dsn, worker_queues=(), services=services)
        supervisor = WorkerSupervisor(services, default_catalog().without_schedules(), QUEUES, grace_seconds=2)
        supervisor.start()
        latencies: list[float] = []
        try:
            async with running_lifespan(app), httpx.AsyncClient(
                    transport=httpx.ASGITransport(app=app), base_url="http://plmail.bench", timeout=30) as http:
                mailboxes = (await _jmap(http, token, [["Mailbox/get", {"accountId": str(account_id)}, "m"]]))
                drafts = next(m["id"] for m in mailboxes[0][1]["list"] if m["role"] == "drafts")
                for n in range(sends):
                    created = await _jmap(http, token, [["Email/set", {"accountId": str(account_id), "create": {"d": {
                        "mailboxIds": {drafts: True}, "keywords": {"$draft": True, "$seen": True},
                        "from": [{"email": identity.email}], "to": [{"email": "bea@example.net"}],
                        "subject": f"Benchmark {n}", "textBody": [{"partId": "t", "type": "text/plain"}],
                        "bodyValues": {"t": {"value": f"Message {n}\n"}}}}}, "e"]])
                    email_id = created[0][1]["created"]["d"]["id"]
                    before = len(smtp.received)
                    started = time.monotonic()
                    await _jmap(http, token, [["EmailSubmission/set", {"accountId": str(account_id), "create": {
                        "s": {"identityId": str(identity.id), "emailId": email_id}}}, "s"]])
                    arrived = (await smtp.arrival(before + 1, timeout=30))[before]
                    latencies.append(arrived.at - started)
        finally:
            await supervisor.stop()
        print(f"EmailSubmission/set -> received by the SMTP server, {sends} sends one after another: "
              f"p50 {statistics.median(latencies) * 1000:.0f} ms, p95 {_percentile(latencies, 0.95) * 1000:.0f} ms, "
              f"max {max(latencies) * 1000:.0f} ms (target p95 < 500 ms)")

        # A full outbox: queued while no worker runs, then drained.
        smtp.reset()
        for n in range(drain):
            saved = await services.drafts.save(user.id, DraftContent(
                identity_id=identity.id, to=(Address("", f"r{n % 20}@example.net"),), subject=f"Queued {n}",
                text_body="In the outbox.\n"))
            await services.outbox.submit(user.id, saved.message_id, identity.id, origin="bench")
        supervisor = WorkerSupervisor(services, default_catalog().without_schedules(), QUEUES, grace_seconds=2)
        started = time.monotonic()
        supervisor.start()
        try:
            received = await smtp.arrival(drain, timeout=600)
            seconds = received[-1].at - started
            await asyncio.sleep(2)  # anything sent twice would arrive by now
        finally:
            await supervisor.stop()
        ids = [r.message["Message-ID"] for r in smtp.received]
        sent = await services.db.fetchval("SELECT count(*) FROM submission WHERE origin = 'bench' AND state = 'sent'")
        print(f"{drain} queued sends drained in {seconds:.1f} s: {drain / seconds:.1f} messages/s; "
              f"{len(ids)} received, {len(set(ids))} distinct, {sent} marked sent, "
              f"duplicates: {len(ids) - len(set(ids))}")
        in_sent = (await services.db.fetchval(
            """SELECT count(*) FROM message m JOIN message_label ml ON ml.message_id = m.id JOIN label l
                 ON l.id = ml.label_id WHERE m.account_id = $1 AND l.role = $2""", account_id,
            LabelRole.SENT.value))
        print(f"messages in Sent afterwards: {in_sent}")
    finally:
        await services.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sends", type=int, default=50)
    parser.add_argument("--drain", type=int, default=200)
    args = parser.parse_args()
    with private_cluster("send") as cluster:
        # its mail folders live in the cluster's scratch space, which is removed with it: nothing is left behind
        dovecot = DovecotServer(cluster.base / "dovecot").start()
        smtp = SmtpServer().start()
        try:
            asyncio.run(run(cluster.settings, cluster.dsn, args.sends, args.drain, dovecot, smtp))
        finally:
            smtp.stop()
            dovecot.stop()


if __name__ == "__main__":
    main()
