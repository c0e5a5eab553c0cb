"""The provider-neutral message reference migration (issue 31) on a 1,000,000-message mailbox.

Usage: .venv/bin/python benchmarks/neutral_ref_migration.py [--messages 1000000] [--fill-dir DIR]

Fills a private PostgreSQL cluster (plmail's embedded settings) migrated up to the migration before the neutral
reference, in that old shape: three accounts of one user, an IMAP one (UIDs in two folders), a Gmail one (message
ids and label ids) and a Graph one (immutable ids and folder ids), a third of the mail each, in threads with
bodies as tests/support/bulk_mail.py makes them (so the search vector and its GIN index are there). The message
table's secondary indexes are dropped for the fill and built again before the migration (maintaining the GIN and
trigram indexes row by row made a 1M fill take 48 minutes), so the migration meets the table with all its indexes.
Then runs `plmail migrate`'s own code for the pending steps while two other connections probe the table every
50 ms: a read (`SELECT 1 FROM message LIMIT 1`) and a one-row update, each in its own transaction, timing how long
each waited. Prints the migration's time, the longest wait of each probe and how long the table was closed to
them (with the load average beside each), checks the moved data, and runs the data step (its transactional part
and its online steps) a second time to show it changes nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import io
import logging
import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import asyncpg

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from plmail.db.database import Database
from plmail.db.engine import close_engine, open_engine
from plmail.db.migrate import APP_NAME, MIGRATIONS_DIR, migrate, online_steps
from plmail.db.online_migration import run_online_steps
from tests.support.bulk_mail import THREADS, WORDS

FIRST_NEUTRAL = "2026-12-07T10:30:00:000000"
DATA_STEP = "plmail_2026_12_07t10_40_00_000000"
PROBE_EVERY = 0.05

# bulk_mail's messages, with each account's provider columns in the shape before the migration.
MESSAGES = """
INSERT INTO message (account_id, thread_id, subject, from_address, from_name, to_addresses, cc_addresses,
                     bcc_addresses, reply_to, in_reply_to, thread_references, headers, flags, received_at, sent_at,
                     seen_at, body_text, preview, category, size, has_attachments, rfc_message_id, created_at,
                     updated_at, mailbox_id, imap_uid, gmail_id, gmail_label_ids, graph_id, graph_folder_id)
SELECT t.account_id, t.id, CASE WHEN k = 0 THEN t.subject ELSE 'Re: ' || t.subject END,
       'person' || ((t.id + k) % 500) || '@example' || ((t.id + k) % 40) || '.org', 'Person ' || ((t.id + k) % 500),
       jsonb_build_array(jsonb_build_object('name', 'Team ' || (t.id % 300),
                                            'address', 'team' || (t.id % 300) || '@corp' || (t.id % 25) || '.com')),
       '[]'::jsonb, '[]'::jsonb, '[]'::jsonb, '[]'::jsonb, '[]'::jsonb, '{"Subject": "Thread"}'::jsonb, '[]'::jsonb,
       t.last_message_at - make_interval(mins => k * 5), t.last_message_at - make_interval(mins => k * 5),
       CASE WHEN t.unread_count > 0 AND k = 0 THEN NULL ELSE now() END,
       (SELECT string_agg(w, ' ') FROM (SELECT ($3::text[])[1 + ((t.id * 31 + k * 17 + i * 7) % $4)] AS w
                                          FROM generate_series(1, 60) AS i) words),
       'Preview of thread ' || t.id, t.category, 3000 + (t.id * 7 + k) % 997, t.attachment_count > 0 AND k = 0,
       'm' || t.id || '.' || k || '@bench.example', now(), now(),
       CASE WHEN t.account_id = $5 THEN ($8::bigint[])[1 + (t.id % 10 / 7)] END,
       CASE WHEN t.account_id = $5 THEN t.id * 3 + k END,
       CASE WHEN t.account_id = $6 THEN '18c' || lpad(to_hex(t.id * 3 + k), 13, '0') END,
       CASE WHEN t.account_id = $6 THEN jsonb_build_array('INBOX', 'CATEGORY_PERSONAL') END,
       CASE WHEN t.account_id = $7 THEN 'AAMkAGI2' || (t.id * 3 + k) || '=' END,
       CASE WHEN t.account_id = $7 THEN (ARRAY['AAMkInbox=', 'AAMkArchive='])[1 + (t.id % 10 / 7)] END
  FROM message_thread t, generate_series(0, t.message_count - 1) AS k
 WHERE t.id BETWEEN $1 AND $2
"""


async def migrate_before_neutral(db: Database) -> None:
    """`plmail migrate` as it was before the neutral reference: every migration older than its first step."""
    from piccolo.apps.migrations.commands.base import BaseMigrationManager
    from piccolo.apps.migrations.tables import Migration

    finder = BaseMigrationManager()
    modules = finder.get_migration_modules(str(MIGRATIONS_DIR))
    async with db.transaction():
        await Migration.create_table(if_not_exists=True).run()  # type: ignore[no-untyped-call]
        for migration_id in sorted(finder.get_migration_ids(modules)):
            if migration_id >= FIRST_NEUTRAL:
                break
            manager = await modules[migration_id].forwards()
            with contextlib.redirect_stdout(io.StringIO()):  # Piccolo prints progress
                await manager.run()
            await Migration.insert(Migration(name=migration_id, app_name=APP_NAME)).run()


def load() -> str:
    return " ".join(f"{v:.2f}" for v in os.getloadavg())


async def fill_old_shape(db: Database, messages: int) -> tuple[int, int, int]:
    # The secondary indexes (GIN search vector, trigrams, btrees) are built once after the fill, not row by row.
    indexes = [(r["indexname"], r["indexdef"]) for r in await db.fetch(
        "SELECT i.indexname, i.indexdef FROM pg_indexes i WHERE i.schemaname = current_schema() "
        "AND i.tablename = 'message' AND NOT EXISTS (SELECT 1 FROM pg_constraint c "
        "WHERE c.conname = i.indexname AND c.conrelid = 'message'::regclass)")]
    for name, _ in indexes:
        await db.execute(f"DROP INDEX {name}")
    user_id = await db.fetchval(
        "INSERT INTO app_user (email, password_hash, created_at, updated_at) "
        "VALUES ('bench@example.org', 'x', now(), now()) RETURNING id")
    accounts = []
    for kind in ("imap", "gmail", "graph"):
        accounts.append(await db.fetchval(
            "INSERT INTO account (user_id, provider_kind, name, email, created_at, updated_at) "
            "VALUES ($1, $2::text, $2::text, $2::text || '@example.org', now(), now()) RETURNING id", user_id, kind))
    imap, gmail, graph = accounts
    folders = [await db.fetchval(
        "INSERT INTO mailbox (account_id, full_path, uid_validity, created_at, updated_at) "
        "VALUES ($1, $2, 1, now(), now()) RETURNING id", imap, path) for path in ("INBOX", "Archive")]
    threads = messages * 2 // 5
    await db.execute(THREADS, threads, accounts)
    await db.execute("SELECT setval('message_thread_id_seq', $1)", threads)
    began = time.perf_counter()
    for start in range(1, threads + 1, 20_000):
        await db.execute(MESSAGES, start, min(start + 19_999, threads), WORDS, len(WORDS), imap, gmail, graph,
                         folders)
        if (start // 20_000) % 10 == 9:
            print(f"  threads up to {start + 19_999:,} of {threads:,} filled, {time.perf_counter() - began:.0f} s "
                  f"(load average {load()})", flush=True)
    filled = time.perf_counter()
    async with db.connection() as conn:
        await conn.execute("SET maintenance_work_mem = '512MB'")
        for _, definition in indexes:
            await conn.execute(definition, timeout=24 * 3600)
        await conn.execute("RESET maintenance_work_mem")
        print(f"  {len(indexes)} message indexes built again after the fill in {time.perf_counter() - filled:.0f} s "
              f"(load average {load()})", flush=True)
        await conn.execute("VACUUM ANALYZE", timeout=24 * 3600)
    return imap, gmail, graph


@dataclass
class Probe:
    """How long one kind of statement waited, sampled every PROBE_EVERY seconds while the migration ran."""

    name: str
    waits: list[float] = field(default_factory=list)
    blocked_at: list[str] = field(default_factory=list)  # when each wait over 0.1 s began, to match the step log

    async def run(self, dsn: str, statement: str, stop: asyncio.Event) -> None:
        conn = await asyncpg.connect(dsn)
        try:
            while not stop.is_set():
                began = time.perf_counter()
                now = time.time()
                at = time.strftime("%H:%M:%S", time.localtime(now)) + f".{int(now * 1000) % 1000:03d}"
                await conn.execute(statement)
                self.waits.append(time.perf_counter() - began)
                if self.waits[-1] > 0.1:
                    self.blocked_at.append(f"{at} {self.waits[-1]:.2f} s")
                await asyncio.sleep(PROBE_EVERY)
        finally:
            await conn.close()

    def report(self) -> str:
        blocked = [w for w in self.waits if w > 0.1]
        return (f"{self.name}: {len(self.waits)} probes, longest wait {max(self.waits, default=0):.2f} s, "
                f"{len(blocked)} waited over 0.1 s (together {sum(blocked):.1f} s)"
                + (f"; the longest five began at {', '.join(self.longest())}" if self.blocked_at else ""))

    def longest(self) -> list[str]:
        return sorted(self.blocked_at, key=lambda b: -float(b.split()[1]))[:5]


async def fill(dsn: str, messages: int) -> None:
    engine = await open_engine(dsn, max_size=3)
    db = Database(engine)
    try:
        began = time.perf_counter()
        await migrate_before_neutral(db)
        await fill_old_shape(db, messages)
        count = int(await db.fetchval("SELECT count(*) FROM message"))
        size = await db.fetchval("SELECT pg_size_pretty(pg_total_relation_size('message'))")
        print(f"filled {count:,} messages (message table with indexes {size}) in the old shape in "
              f"{time.perf_counter() - began:.0f} s; load average {load()}", flush=True)
    finally:
        await close_engine()


async def measure(dsn: str) -> None:
    engine = await open_engine(dsn, max_size=3)
    db = Database(engine)
    try:
        imap, gmail, graph = [int(await db.fetchval("SELECT id FROM account WHERE provider_kind = $1", kind))
                              for kind in ("imap", "gmail", "graph")]
        print(f"migrating {int(await db.fetchval('SELECT count(*) FROM message')):,} messages", flush=True)
        probe_id = int(await db.fetchval("SELECT max(id) FROM message"))
        stop = asyncio.Event()
        reads = Probe("read  (SELECT 1 FROM message LIMIT 1)")
        writes = Probe("write (UPDATE of one message row)")
        tasks = [asyncio.create_task(reads.run(dsn, "SELECT 1 FROM message LIMIT 1", stop)),
                 asyncio.create_task(writes.run(
                     dsn, f"UPDATE message SET updated_at = updated_at WHERE id = {probe_id}", stop))]
        await asyncio.sleep(0.5)
        load_before = load()
        started = time.perf_counter()
        report = await migrate(db)
        took = time.perf_counter() - started
        await asyncio.sleep(0.5)
        stop.set()
        await asyncio.gather(*tasks)
        print(f"migration {', '.join(report.applied)}: {took:.1f} s, the long parts online "
              f"(load average before {load_before}, after {load()})")
        print(reads.report())
        print(writes.report())
        moved = {r["account_id"]: (r["keyed"], r["foldered"]) for r in await db.fetch(
            "SELECT account_id, count(provider_key) AS keyed, count(*) FILTER (WHERE provider_container <> '') "
            "AS foldered FROM message GROUP BY account_id")}
        side = int(await db.fetchval("SELECT count(*) FROM graph_message"))
        print(f"moved: IMAP {moved[imap][0]:,} keys ({moved[imap][1]:,} in folders), Gmail {moved[gmail][0]:,} "
              f"keys, Graph {moved[graph][0]:,} keys and {side:,} folder rows in graph_message")
        module = __import__(f"plmail.db.migrations.{DATA_STEP}", fromlist=["FORWARDS_SQL", "ONLINE"])
        digest = "SELECT md5(string_agg(id || ':' || provider_container || ':' || coalesce(provider_key, ''), ',' " \
                 "ORDER BY id)) FROM message"
        before = await db.fetchval(digest)
        again = time.perf_counter()
        conn = await asyncpg.connect(dsn)
        try:
            async with conn.transaction():
                await conn.execute(module.FORWARDS_SQL)
            await run_online_steps(conn, DATA_STEP, online_steps(module))
        finally:
            await conn.close()
        after = await db.fetchval(digest)
        print(f"the data step run a second time: {time.perf_counter() - again:.1f} s, "
              f"{'nothing changed' if before == after else 'CHANGED THE DATA'} (load average {load()})")
    finally:
        await close_engine()


def main() -> None:
    from benchmarks.cluster import private_cluster

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--messages", type=int, default=1_000_000)
    parser.add_argument("--fill-dir", type=Path, help="keep the filled cluster here (or start from the one kept "
                        "there), so the migration can be measured again without filling again")
    args = parser.parse_args()
    # The online steps log each step's time at debug level: where the migration's time goes.
    handler = logging.StreamHandler(sys.stdout)
    handler.setFormatter(logging.Formatter("  %(asctime)s.%(msecs)03d %(message)s", "%H:%M:%S"))
    for name in ("plmail.db.online_migration", "plmail.db.migrate"):
        steps_log = logging.getLogger(name)
        steps_log.setLevel(logging.DEBUG)
        steps_log.addHandler(handler)
    if args.fill_dir is None or not args.fill_dir.exists():
        with private_cluster("neutral-ref", keep=args.fill_dir) as cluster:
            asyncio.run(fill(cluster.dsn, args.messages))
            if args.fill_dir is None:
                asyncio.run(measure(cluster.dsn))
        if args.fill_dir is not None:
            print(f"the fill is kept in {args.fill_dir}; run again with the same --fill-dir to measure the migration")
        return
    began = time.perf_counter()
    with private_cluster("neutral-ref", seed=args.fill_dir) as cluster:
        print(f"started from a copy of the fill kept in {args.fill_dir} ({time.perf_counter() - began:.0f} s)")
        asyncio.run(measure(cluster.dsn))


if __name__ == "__main__":
    main()
