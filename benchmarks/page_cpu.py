"""The CPU a mail page costs the server, in process: a figure that does not move with the machine's load.

Usage: .venv/bin/python benchmarks/page_cpu.py --fill-dir /work/scalefill/k100 [--runs 100] [--profile OUT.prof]
                                                [--only REGEX]

Starts a private PostgreSQL cluster from a copy of a kept benchmarks/scale.py fill (the copy is removed at the
end), builds the app in this process (no job workers), signs in through /login and requests each mail list
page `--runs` times through the ASGI app. Prints, per page, the process's CPU time per request (time.process_time:
this process's Python work, routing, middleware, asyncpg's side of the queries, the template; not PostgreSQL's,
which runs in its own processes) and the wall time per request. With --profile, cProfile records the timed
requests of every page into one file (read it with `python -m pstats OUT.prof`).
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import re
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import httpx

from benchmarks.cluster import private_cluster
from benchmarks.scale import EMAIL, PASSWORD, WORDS, load_filled
from plmail.app import create_app
from plmail.config import Settings

_CSRF = re.compile(r'name="_csrf_token" value="([^"]+)"')


def cases(labels: dict[str, int], account: int) -> list[tuple[str, str]]:
    return [
        ("inbox, page 1", "/"),
        ("inbox, page 5", "/?page=5"),
        ("inbox, one account", f"/label/{labels['inbox']}?account={account}"),
        ("label page (Work)", f"/label/{labels['work']}"),
        ("trash", f"/label/{labels['trash']}"),
        ("all mail", "/all"),
        ("archive", "/archive"),
        ("search, two words", f"/search?q={WORDS[0]}+{WORDS[1]}"),
        ("thread page", "/thread/7"),
        ("settings", "/settings/"),
    ]


async def _measure(app: Any, labels: dict[str, int], account: int, runs: int, only: re.Pattern[str] | None,
                   profiler: cProfile.Profile | None) -> dict[str, bytes]:
    """In this event loop, so the profile and the CPU time take in the app's own work. Returns each page's last
    response."""
    pages: dict[str, bytes] = {}
    transport = httpx.ASGITransport(app=app)
    async with app.lifespan(), httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1",
                                                  follow_redirects=True) as http:
        page = await http.get("/login")
        match = _CSRF.search(page.text)
        response = await http.post("/login", data={"email": EMAIL, "password": PASSWORD,
                                                   "_csrf_token": match.group(1) if match else ""})
        if response.status_code >= 400 or "/login" in str(response.url):
            raise SystemExit(f"sign-in failed: {response.status_code}")
        print(f"{'page':<24} {'CPU ms/req':>10} {'wall p50':>9} {'bytes':>7}")
        for name, path in cases(labels, account):
            if only is not None and not only.search(name):
                continue
            for _ in range(5):  # warm plans, caches, compiled templates
                await http.get(path)
            walls = []
            cpu_started = time.process_time()
            if profiler is not None:
                profiler.enable()
            for _ in range(runs):
                started = time.perf_counter()
                response = await http.get(path)
                walls.append((time.perf_counter() - started) * 1000)
                if response.status_code != 200:
                    raise SystemExit(f"{path}: {response.status_code}")
            if profiler is not None:
                profiler.disable()
            cpu = (time.process_time() - cpu_started) * 1000 / runs
            pages[name] = response.content
            print(f"{name:<24} {cpu:>10.2f} {statistics.median(walls):>9.2f} {len(response.content):>7}", flush=True)
    return pages


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--fill-dir", type=Path, help="a kept benchmarks/scale.py fill, copied for this run")
    parser.add_argument("--dsn", help="instead of --fill-dir: a running cluster started from such a fill")
    parser.add_argument("--data-dir", type=Path, help="with --dsn: that cluster's data directory")
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--only", help="only the pages whose name matches this regular expression")
    parser.add_argument("--dump", type=Path, help="write each page's last response here (to compare the HTML)")
    parser.add_argument("--profile", type=Path, help="write a cProfile of the timed requests here")
    args = parser.parse_args()
    if args.dsn:
        if args.data_dir is None:
            parser.error("--dsn needs --data-dir")
        settings = Settings.from_env({"PLMAIL_DATA_DIR": str(args.data_dir), "PLMAIL_DATABASE_URL": args.dsn})
        run(settings, args.dsn, args)
        return
    if args.fill_dir is None:
        parser.error("give --fill-dir or --dsn")
    with private_cluster("page-cpu", seed=args.fill_dir) as cluster:
        run(cluster.settings, cluster.dsn, args)


def run(settings: Settings, dsn: str, args: argparse.Namespace) -> None:
    filled, _seconds = load_filled(settings.data_dir)
    app = create_app(settings, dsn, worker_queues=())
    profiler = cProfile.Profile() if args.profile else None
    only = re.compile(args.only) if args.only else None
    pages = asyncio.run(_measure(app, filled.labels, filled.accounts[0], args.runs, only, profiler))
    if args.dump is not None:
        args.dump.mkdir(parents=True, exist_ok=True)
        for name, content in pages.items():
            (args.dump / f"{re.sub(r'[^a-z0-9]+', '-', name.lower())}.html").write_bytes(content)
    if profiler is not None:
        profiler.dump_stats(args.profile)
        print(f"profile written to {args.profile}")

if __name__ == "__main__":
    main()
