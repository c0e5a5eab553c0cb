"""A mailbox at scale: 1,000,000 messages in 400,000 threads across 3 accounts, then pages and JMAP on it.

Usage: .venv/bin/python benchmarks/scale.py [--messages 1000000] [--runs 200] [--keep-going]

Fills a private PostgreSQL cluster (plmail's embedded settings) through SQL with tests/support/bulk_mail.py
(the inbox benchmark's fill grown to several accounts and realistic label, unread and tab spreads; the
labels go in as ordinary statements, so the kept counts are built by their triggers). Then starts a real
`plmail serve` and runs benchmarks/pages.py's and benchmarks/jmap.py's measurements against it, and
prints the server's resident memory after them. Targets (issue 22): every page p95 < 40 ms at 1M,
Email/query + get p95 < 20 ms, Mailbox/get with counts p95 < 10 ms, Email/changes after 1,000 new
messages p95 < 30 ms, `plmail serve` RSS < 300 MiB.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from plmail.config import Settings
from plmail.services import open_services
from tests.support.bulk_mail import EMAIL, PASSWORD, WORDS, Filled
from tests.support.bulk_mail import fill as bulk_fill

__all__ = ["EMAIL", "PASSWORD", "WORDS", "Filled", "fill", "rss_mib", "serve", "wait_healthy"]

async def fill(settings: Settings, dsn: str, messages: int, accounts: int = 3) -> Filled:
    services = await open_services(settings, dsn)
    try:
        return await bulk_fill(services, messages, accounts)
    finally:
        await services.close()


def serve(settings: Settings, dsn: str, port: int, log: Path) -> subprocess.Popen[bytes]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PLMAIL_")}
    env.update({"PLMAIL_DATABASE_URL": dsn, "PLMAIL_DATA_DIR": str(settings.data_dir), "PLMAIL_PORT": str(port),
                "PLMAIL_LOG_LEVEL": "WARNING"})
    with log.open("wb") as out:
        return subprocess.Popen([sys.executable, "-m", "plmail.cli", "serve", "--queues", ""], env=env, stdout=out,
                                stderr=subprocess.STDOUT)


def wait_healthy(url: str, process: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"plmail serve exited:\n{log.read_text()[-3000:]}")
        try:
            if httpx.get(f"{url}/healthz", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    raise SystemExit("plmail serve did not become healthy")


def rss_mib(pid: int) -> float:
    """Resident memory of a process and its children (a server may fork), in MiB."""
    total = 0
    pids = [pid]
    children = Path(f"/proc/{pid}/task/{pid}/children")
    if children.exists():
        pids += [int(p) for p in children.read_text().split()]
    for p in pids:
        for line in Path(f"/proc/{p}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                total += int(line.split()[1])
    return total / 1024


def main() -> None:
    from benchmarks import jmap, pages
    from benchmarks.cluster import private_cluster

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--messages", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=200)
    args = parser.parse_args()
    with private_cluster("scale") as cluster:
        filled = asyncio.run(fill(cluster.settings, cluster.dsn, args.messages))
        log = cluster.base / "serve.log"
        port = 18_000 + os.getpid() % 1000
        process = serve(cluster.settings, cluster.dsn, port, log)
        url = f"http://127.0.0.1:{port}"
        try:
            wait_healthy(url, process, log)
            print(f"plmail serve RSS before the runs: {rss_mib(process.pid):.0f} MiB")
            pages.measure_pages(url, filled, args.runs)
            jmap.measure_jmap(url, filled, args.runs, cluster.settings, cluster.dsn)
            print(f"plmail serve RSS after the page and JMAP runs: {rss_mib(process.pid):.0f} MiB (target < 300)")
        finally:
            process.terminate()
            process.wait(30)


if __name__ == "__main__":
    main()
