"""Where a JMAP request's time goes, measured in one process on a kept fill: round trips to PostgreSQL per request,
the database's share of the wall time, and the CPU time of the request's Python (parsing, methods, the answer's
JSON) — figures that do not depend on how busy a shared machine is, beside the wall times that do.

Usage: .venv/bin/python benchmarks/jmap_profile.py FILL_DIR [--runs 50] [--profile] [--explain]

FILL_DIR is a fill kept by `benchmarks/scale.py --fill-dir` (a copy is started and removed at the end). Each request
goes through the same code as POST /jmap/api (authentication, parsing, the method calls, encoding the answer with
Litestar's encoder), without the HTTP server around it. "after a star" and "after a new message" make that change
untimed before each request, as benchmarks/jmap.py does.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import json
import pstats
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import asyncpg
from litestar.serialization import encode_json

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.cluster import private_cluster
from benchmarks.jmap import LIST_PROPERTIES, list_view
from benchmarks.scale import load_filled
from plmail.config import Settings
from plmail.jmap.api import parse_request
from plmail.jmap.routes import API
from plmail.jmap.session import build_session
from plmail.mail.ingest import parse_message
from plmail.services import Services, open_services
from tests.support.bulk_mail import Filled
from tests.support.mail import make_message

USING = ["urn:ietf:params:jmap:core", "urn:ietf:params:jmap:mail"]


class RoundTrips:
    """Counts the statements sent to PostgreSQL and the time spent waiting for their answers."""

    def __init__(self) -> None:
        self.count = 0
        self.seconds = 0.0
        self.statements: list[str] = []
        self.calls: list[tuple[str, tuple[Any, ...]]] = []  # the statements with their arguments, for EXPLAIN
        for name in ("fetch", "fetchrow", "fetchval", "execute", "executemany"):
            self._wrap(name)

    def _wrap(self, name: str) -> None:
        original = getattr(asyncpg.connection.Connection, name)
        counter = self

        async def timed(self: Any, *args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return await original(self, *args, **kwargs)
            finally:
                counter.count += 1
                counter.seconds += time.perf_counter() - started
                counter.statements.append(" ".join(str(args[0]).split())[:110] if args else name)
                if args and name != "executemany":
                    counter.calls.append((str(args[0]), tuple(args[1:])))

        setattr(asyncpg.connection.Connection, name, timed)

    async def explain(self, services: Services) -> list[tuple[str, float, float]]:
        """(statement, planning ms, execution ms) of the last request's statements, run again under EXPLAIN
        ANALYZE: the database's own time, whatever else the machine is doing."""
        calls, found = list(self.calls), []
        for sql, args in calls:
            if not sql.lstrip().upper().startswith("SELECT"):
                continue
            plan = json.loads(await services.db.fetchval(f"EXPLAIN (ANALYZE, FORMAT JSON) {sql}", *args))[0]
            found.append((" ".join(sql.split())[:70], plan["Planning Time"], plan["Execution Time"]))
        return found

    def reset(self) -> None:
        self.count, self.seconds, self.statements, self.calls = 0, 0.0, [], []


async def request(services: Services, token: str, body: dict[str, Any]) -> bytes:
    """What POST /jmap/api does between the socket and the socket."""
    principal = await services.app_passwords.authenticate(f"Bearer {token}", client="127.0.0.1")
    parsed = parse_request(json.dumps(body).encode(), "application/json")
    async with API.slot(principal):
        result = await API.process(services, principal, parsed, base_url="http://127.0.0.1/")
    answer = encode_json(result)
    calls = result["methodResponses"]
    assert all(c[0] != "error" for c in calls), calls
    return answer


async def measure(services: Services, token: str, trips: RoundTrips, body: dict[str, Any], runs: int,
                  before: Callable[[int], Awaitable[None]] | None, profile: cProfile.Profile | None
                  ) -> dict[str, float]:
    for _ in range(10):
        await request(services, token, body)
    walls, cpus, counts, waits = [], [], [], []
    for run in range(runs):
        if before is not None:
            await before(run)
        trips.reset()
        wall, cpu = time.perf_counter(), time.process_time()
        if profile is not None:
            profile.enable()
        await request(services, token, body)
        if profile is not None:
            profile.disable()
        walls.append((time.perf_counter() - wall) * 1000)
        cpus.append((time.process_time() - cpu) * 1000)
        counts.append(trips.count)
        waits.append(trips.seconds * 1000)
    walls.sort()
    return {"p50": statistics.median(walls), "p95": walls[max(int(len(walls) * 0.95) - 1, 0)],
            "cpu": statistics.median(cpus), "trips": statistics.median(counts), "db": statistics.median(waits)}


async def main_async(fill_dir: Path, runs: int, profile_it: bool, explain: bool, dsn: str | None) -> None:
    if dsn is not None:  # a copy of the fill already running (it is written to: new messages, stars)
        settings = Settings.from_env({"PLMAIL_DATA_DIR": str(Path(tempfile.mkdtemp(prefix="plmail-profile-"))),
                                      "PLMAIL_DATABASE_URL": dsn})
        await profile(load_filled(fill_dir)[0], settings, dsn, runs, profile_it, explain)
        return
    with private_cluster("jmap-profile", seed=fill_dir) as cluster:
        await profile(load_filled(cluster.settings.data_dir)[0], cluster.settings, cluster.dsn, runs, profile_it,
                      explain)


async def profile(filled: Filled, settings: Settings, dsn: str, runs: int, profile_it: bool, explain: bool
                  ) -> None:
    services = await open_services(settings, dsn)
    trips = RoundTrips()
    try:
        principal = await services.app_passwords.authenticate(f"Bearer {filled.token}", client="127.0.0.1")
        unified = build_session(principal, "http://127.0.0.1/")["primaryAccounts"]["urn:ietf:params:jmap:mail"]
        arrived = 0

        async def star(run: int) -> None:
            await services.operations.set_starred(filled.user_id, run % 2 == 0, thread_ids=[3])

        def arrival(account_id: int) -> Callable[[int], Awaitable[None]]:
            async def arrive(run: int) -> None:
                nonlocal arrived
                arrived += 1
                await services.pipeline.ingest([parse_message(
                    make_message(message_id=f"profiled{arrived}@bench.example", subject=f"Profiled {arrived}",
                                 date=datetime.now(UTC)),
                    account_id=account_id, label_ids=(filled.labels["inbox"],))])
            return arrive

        print(f"{filled.messages:,} messages; runs {runs}")
        print(f"{'request':58} {'p50':>6} {'p95':>6} {'cpu':>6} {'trips':>5} {'db ms':>6}")
        for account, label in ((unified, "unified"), (str(filled.accounts[0]), "account 1")):
            answer = await request(services, filled.token, {"using": USING, "methodCalls": [
                ["Mailbox/get", {"accountId": account, "properties": ["role"]}, "m"]]})
            boxes = json.loads(answer)["methodResponses"][0][1]["list"]
            inbox = next(m["id"] for m in boxes if m["role"] == "inbox")
            first = list_view(account, inbox, properties=LIST_PROPERTIES)
            total = list_view(account, inbox, total=True, properties=LIST_PROPERTIES)
            new_mail = arrival(filled.accounts[0])
            for name, body, before in (("query+get", first, None), ("query+get after a star", first, star),
                                       ("query+get after a new message", first, new_mail),
                                       ("query(total)+get after a new message", total, new_mail)):
                profile = cProfile.Profile() if profile_it else None
                figures = await measure(services, filled.token, trips, body, runs, before, profile)
                print(f"[{label}] {name:48} {figures['p50']:6.2f} {figures['p95']:6.2f} {figures['cpu']:6.2f} "
                      f"{figures['trips']:5.0f} {figures['db']:6.2f}", flush=True)
                if explain:
                    for sql, planning, execution in await trips.explain(services):
                        print(f"     {sql:70} plan {planning:5.2f} ms, run {execution:5.2f} ms")
                if profile_it:
                    print("   statements:", *trips.statements, sep="\n     ")
                    assert profile is not None
                    pstats.Stats(profile).sort_stats("tottime").print_stats(30)
    finally:
        await services.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("fill_dir", type=Path)
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--profile", action="store_true", help="print the statements and a cProfile of each")
    parser.add_argument("--explain", action="store_true", help="the SQL time of each statement (EXPLAIN ANALYZE)")
    parser.add_argument("--dsn", help="measure on this running copy of the fill instead of a fresh copy")
    args = parser.parse_args()
    asyncio.run(main_async(args.fill_dir, args.runs, args.profile, args.explain, args.dsn))


if __name__ == "__main__":
    main()
