"""A JMAP account's first import against a real JMAP upstream: a second plmail on the same machine.

Usage: .venv/bin/python benchmarks/jmap_import.py [--messages 10000] [--page 250]

A private PostgreSQL cluster (plmail's embedded settings) holds two databases. The upstream's is filled with
`plmail import-mbox` (the same generated mailbox as benchmarks/imap_import.py: about 3 KB a message, threads, a
quarter HTML), then `plmail serve --queues ""` answers JMAP on loopback (no workers: it only serves). The
downstream plmail adds a JMAP account for that user and runs `plmail sync --wait`'s code path: the sync, then
import pages back to back (Email/query receivedAt descending, Email/get, every blob downloaded, each page through
the full ingest pipeline). Prints messages/s with the load average beside it (both plmails share the machine).
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import ipaddress
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import asyncpg

from benchmarks.cluster import private_cluster
from benchmarks.imap_import import generate
from plmail.providers.jmap import sync as jmap_sync
from plmail.providers.jmap.accounts import JmapAccountInput, JmapAccountService
from plmail.services import open_services
from tests.integration.jmap_accounts.conftest import write_mbox
from tests.support.serve import ServeProcess

UPSTREAM_USER = "upstream@bench.example"


def _load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def _cli(env: dict[str, str], *args: str, stdin: str | None = None) -> str:
    done = subprocess.run([sys.executable, "-m", "plmail.cli", *args], env=env, input=stdin, capture_output=True,
                          text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"plmail {' '.join(args[:2])} failed:\n{done.stdout}{done.stderr}")
    return done.stdout


async def _create_database(dsn: str, name: str) -> str:
    conn = await asyncpg.connect(dsn)
    try:
        await conn.execute(f'CREATE DATABASE "{name}"')
    finally:
        await conn.close()
    address, _, query = dsn.partition("?")  # the socket directory is in the query: postgresql://u@/db?host=…
    return f"{address.rpartition('/')[0]}/{name}" + (f"?{query}" if query else "")


async def run(messages: int, page: int) -> None:
    jmap_sync.PAGE = page
    with private_cluster("jmap-import") as cluster:
        upstream_dsn = await _create_database(cluster.dsn, "upstream")
        downstream_dsn = await _create_database(cluster.dsn, "downstream")
        scratch = Path(tempfile.mkdtemp(prefix="plmail-bench-jmap-", dir=cluster.base))
        serve = ServeProcess(scratch / "upstream" / "data", database_url=upstream_dsn, args=["--queues", ""])
        env = dict(serve.env)
        _cli(env, "migrate")
        _cli(env, "user", "add", UPSTREAM_USER, "--password-stdin", stdin="benchmark password\n")
        token = _cli(env, "app-password", "create", "--user", UPSTREAM_USER, "--name", "bench").strip().splitlines()[-1]
        mbox = write_mbox(scratch / "inbox.mbox", generate(messages))
        started = time.perf_counter()
        _cli(env, "import-mbox", "--user", UPSTREAM_USER, "--label", "Inbox", str(mbox))
        print(f"upstream filled with {messages} messages in {time.perf_counter() - started:.1f} s")
        serve.start()
        try:
            serve.wait_healthy()
            # the upstream is on loopback, which a typed server address may reach only when allowed
            settings = dataclasses.replace(cluster.settings, test_fetch_allow=(ipaddress.ip_network("127.0.0.0/8"),))
            services = await open_services(settings, downstream_dsn)
            try:
                user = await services.users.create_user("downstream@bench.example", "benchmark password")
                accounts = services.providers.get(JmapAccountService)
                account_id = await accounts.add(user.id, JmapAccountInput(email=UPSTREAM_USER, secret=token,
                                                                          server=serve.url))
                print(f"load average before: {_load()}")
                started = time.perf_counter()
                final = await services.sync.run_until_done(account_id)
                seconds = time.perf_counter() - started
                load = _load()
            finally:
                await services.close()
        finally:
            serve.terminate()
    if final is None or final.done != messages:
        raise SystemExit(f"stored {final.done if final else 0} messages, expected {messages}")
    print(f"JMAP first import: {messages} messages in {seconds:.1f} s = {messages / seconds:.0f} msg/s "
          f"(pages of {page}; load average {load})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--messages", type=int, default=10_000)
    parser.add_argument("--page", type=int, default=jmap_sync.PAGE)
    args = parser.parse_args()
    asyncio.run(run(args.messages, args.page))


if __name__ == "__main__":
    main()
