"""IMAP first import end to end, against `mbsync` pulling the same mailbox in the same run.

Usage: .venv/bin/python benchmarks/imap_import.py [--messages 10000] [--repeat 3] [--real] [--folders 4]
                                                  [--skip-workers] [--parse-process auto|true|false]
                                                  [--plmail-first]

Needs `mbsync` (Debian: isync) and `notmuch`; it says so and stops when they are missing.

The mail is generated (`generate()`: small personal mail) or, with --real, the SpamAssassin public corpus from
../shared/corpus (6,046 real messages, cycled when more are asked for: each copy with Message-IDs, references and
a subject of its own, so its conversations are as long as the corpus's; --copies-join-originals keeps the
originals' references and subjects, as before 2026-12-07, and every copy of a reply joins the original's), spread over
--folders folders in turn. A private Dovecot gets the messages as Maildir files; then, per repeat, with a fresh
PostgreSQL cluster (plmail's embedded settings, fsync on) and a fresh Maildir for mbsync:
  mbsync        `mbsync -a` pulls every folder into a Maildir (isync's defaults: fsync on), then `notmuch new`
                indexes it (the peer that does plmail's job: fetch, store, index for search); and mbsync once
                more with `FSync no`, to show how much of its time is the disk
  plmail        `plmail sync --wait`'s code path: the sync, then import pages of 50 back to back, each
                through the full pipeline (parse, sanitise, store originals, categorise, thread, rules,
                change log); then the search vectors its pages left for index_search, timed apart
                ("searchable after"), as notmuch new's index is
  plmail jobs   the same import as chained jobs on the ingest_backlog queue, run by saq workers
Prints messages/s for each, per round plmail's time over mbsync + notmuch new's (issue 22's target: <= 1.0
in every round, and >= 1,100 msg/s), and the ratio to mbsync alone. Beside the foreground import's time: the CPU
seconds plmail and its PostgreSQL spent on it (steadier than wall time on a shared machine), the commits that
waited for the disk, this process's peak RSS during the import (the corpus it delivered is let go first) and its
parsing process's, and the load average when the round ended.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import ctypes
import gc
import os
import random
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from dataclasses import dataclass
from email.utils import format_datetime
from pathlib import Path

import asyncpg

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from plmail.config import Settings
from plmail.db.embedded import EmbeddedPostgres, find_pg_binaries, resolve_run_as
from plmail.domain.account_services import MailServerAccountInput
from plmail.domain.enums import QueueName
from plmail.jobs.catalog import default_catalog
from plmail.jobs.workers import WorkerSupervisor
from plmail.providers.imap.accounts import ImapAccountService
from plmail.providers.imap.importer import ImapHistoryImporter
from plmail.services import Services, open_services
from tests.support.dovecot import DovecotServer, DovecotUser
from tests.support.repos import account_admin

MBSYNC = shutil.which("mbsync") or "/usr/bin/mbsync"
NOTMUCH = shutil.which("notmuch") or "/usr/bin/notmuch"
WORDS = (
    "meeting", "invoice", "project", "report", "budget", "travel", "schedule", "update", "review", "draft",
    "contract", "order", "delivery", "account", "payment", "release", "version", "server", "backup",
    "holiday", "family", "weekend", "dinner", "lunch", "coffee", "question", "answer", "request", "approval",
    "deadline", "agenda", "minutes", "summary", "proposal", "design", "launch", "customer", "support",
)


def generate(count: int, seed: int = 11) -> list[bytes]:
    """Mail shaped like a personal mailbox: about 3 KB each, replies in threads, a quarter with HTML."""
    rng = random.Random(seed)
    people = [f"person{i}@example{i % 31}.org" for i in range(300)]
    roots: list[tuple[str, str]] = []
    out: list[bytes] = []
    for n in range(count):
        sender, rcpt = rng.sample(people, 2)
        mid = f"bench{n}@imap.example"
        when = format_datetime_ts(1_700_000_000 + n * 97)
        head = [f"From: Person <{sender}>", f"To: <{rcpt}>", f"Message-ID: <{mid}>", f"Date: {when}",
                "MIME-Version: 1.0"]
        if roots and rng.random() < 0.5:
            parent, subject = rng.choice(roots[-500:])
            head += [f"Subject: Re: {subject}", f"In-Reply-To: <{parent}>", f"References: <{parent}>"]
        else:
            subject = " ".join(rng.choices(WORDS, k=5))
            head.append(f"Subject: {subject}")
        roots.append((mid, subject))
        text = "\r\n".join(" ".join(rng.choices(WORDS, k=10)) for _ in range(rng.randint(25, 50)))
        if rng.random() < 0.25:
            html = "".join(f"<p>{line}</p>" for line in text.split("\r\n"))
            body = ("Content-Type: multipart/alternative; boundary=XX\r\n\r\n--XX\r\n"
                    f"Content-Type: text/plain; charset=utf-8\r\n\r\n{text}\r\n--XX\r\n"
                    f"Content-Type: text/html; charset=utf-8\r\n\r\n<html><body>{html}</body></html>\r\n--XX--\r\n")
        else:
            body = f"Content-Type: text/plain; charset=utf-8\r\n\r\n{text}\r\n"
        out.append(("\r\n".join(head) + "\r\n" + body).encode())
    return out


CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "spamassassin-public-corpus"
FOLDERS = ("INBOX", "Lists", "Newsletters", "Later")
_MESSAGE_ID = re.compile(rb"^(Message-ID:[ \t]*<)", re.IGNORECASE | re.MULTILINE)
# The header fields that name other messages, with their folded lines, and the ids in them.
_REFERRING = re.compile(rb"^(?:In-Reply-To|References):[^\n]*(?:\n[ \t][^\n]*)*", re.IGNORECASE | re.MULTILINE)
_ID_OPENER = re.compile(rb"<(?=[^<>\s]+@)")
_BLANK_LINE = re.compile(rb"\r?\n\r?\n")
_SUBJECT_LINE = re.compile(rb"^(Subject:[^\r\n]*)", re.IGNORECASE | re.MULTILINE)


def _copy_of(raw: bytes, copy: int, *, join_originals: bool) -> bytes:
    """A copy that is a message of its own: a Message-ID of its own and, unless `join_originals`, references and
    a subject of its copy too, so each copy of a conversation is a conversation like the original, not more
    replies to the original messages (which grew a thread of 5 to 5 x copies)."""
    blank = _BLANK_LINE.search(raw)
    head, body = (raw, b"") if blank is None else (raw[: blank.start()], raw[blank.start() :])
    tag = b"copy%d." % copy
    head = _MESSAGE_ID.sub(rb"\g<1>" + tag, head, count=1)
    if not join_originals:
        head = _REFERRING.sub(lambda m: _ID_OPENER.sub(b"<" + tag, m[0]), head)
        head = _SUBJECT_LINE.sub(rb"\g<1> (" + tag[:-1] + b")", head, count=1)
    return head + body


def real_mail(count: int, *, join_originals: bool = False) -> list[bytes]:
    """The SpamAssassin corpus's messages as they are; beyond its 6,046 each copy is a message of its own
    (`_copy_of`; a copy is a new message, not a duplicate the pipeline would fold into the first)."""
    originals: list[bytes] = []
    for archive in sorted(CORPUS.glob("*.tar.gz")):
        with tarfile.open(archive) as tar:
            for member in sorted(tar.getmembers(), key=lambda m: m.name):
                extracted = tar.extractfile(member) if member.isfile() else None
                if extracted is not None:
                    originals.append(extracted.read())
    if not originals:
        raise SystemExit(f"no SpamAssassin corpus at {CORPUS}: clone with ../shared beside the checkout")
    out: list[bytes] = []
    for n in range(count):
        raw, copy = originals[n % len(originals)], n // len(originals)
        out.append(_copy_of(raw, copy, join_originals=join_originals) if copy else raw)
    return out


def format_datetime_ts(ts: int) -> str:
    from datetime import UTC, datetime

    return format_datetime(datetime.fromtimestamp(ts, UTC))


def mbsync_rate(mail: DovecotUser, base: Path, count: int, *, fsync: bool = True) -> float:
    target = base / "mbsync-maildir"
    shutil.rmtree(target, ignore_errors=True)
    target.mkdir(parents=True)
    config = base / "mbsyncrc"
    config.write_text(
        ("" if fsync else "FSync no\n\n")  # a global option: it must come before the first section
        + f"IMAPAccount bench\nHost {mail.server.host}\nPort {mail.server.port}\nUser {mail.name}\n"
        f"Pass {mail.password}\nSSLType None\nAuthMechs PLAIN LOGIN\n\n"
        "IMAPStore bench-remote\nAccount bench\n\n"
        f"MaildirStore bench-local\nPath {target}/\nInbox {target}/INBOX\nSubFolders Verbatim\n\n"
        "Channel bench\nFar :bench-remote:\nNear :bench-local:\nPatterns *\nCreate Near\nSync Pull\n"
        "SyncState *\n"
    )
    started = time.perf_counter()
    result = subprocess.run([MBSYNC, "-q", "-c", str(config), "-a"], capture_output=True, text=True)
    seconds = time.perf_counter() - started
    if result.returncode != 0:
        raise SystemExit(f"mbsync failed:\n{result.stderr}")
    pulled = sum(1 for box in target.rglob("*") if box.name in ("cur", "new") for _ in box.iterdir())
    if pulled != count:
        raise SystemExit(f"mbsync pulled {pulled} messages, expected {count}")
    return count / seconds


def notmuch_seconds(base: Path) -> float:
    """`notmuch new` over the Maildir mbsync just pulled: the indexing half of the peer's job."""
    maildir = base / "mbsync-maildir"
    config = base / "notmuch-config"
    config.write_text(f"[database]\npath={maildir}\n[user]\nname=Bench\nprimary_email=bench@bench.example\n"
                      "[new]\ntags=unread;inbox;\n[maildir]\nsynchronize_flags=true\n")
    started = time.perf_counter()
    result = subprocess.run([NOTMUCH, "--config", str(config), "new", "--quiet"], capture_output=True, text=True)
    seconds = time.perf_counter() - started
    if result.returncode != 0:
        raise SystemExit(f"notmuch new failed:\n{result.stderr}")
    return seconds


_TICKS = os.sysconf("SC_CLK_TCK")


def process_tree_cpu(root: int) -> float:
    """CPU seconds of `root` and its live descendants, plus those of the children it reaped (PostgreSQL's
    postmaster reaps its backends, so a connection closed meanwhile still counts)."""
    stats: dict[int, list[str]] = {}
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            raw = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        fields = raw[raw.rindex(")") + 2:].split()  # the command name may hold spaces and brackets
        stats[int(entry)] = fields
        children.setdefault(int(fields[1]), []).append(int(entry))
    total, todo = 0, [root]
    while todo:
        pid = todo.pop()
        if (found := stats.get(pid)) is not None:
            total += sum(int(f) for f in found[11:15])  # utime, stime, cutime, cstime
            todo += children.get(pid, [])
    return total / _TICKS


def peak_rss_mib() -> float:
    """This process's peak resident memory since `reset_peak_rss` (Linux; the lifetime peak elsewhere)."""
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _return_freed_memory() -> None:
    """Give the heap the corpus left behind back to the system (glibc keeps freed small blocks otherwise, and they
    would count as plmail's resident memory: about 600 MiB at 100,000 real messages)."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6").malloc_trim(0)


def reset_peak_rss() -> None:
    """Start the peak over (Linux: writing 5 to clear_refs), so a round's peak is its own import's, not the corpus
    this benchmark read and delivered before it, nor an earlier round's."""
    try:
        with open("/proc/self/clear_refs", "w") as refs:
            refs.write("5")
    except OSError:
        pass


@dataclass(frozen=True, slots=True)
class ForegroundRun:
    rate: float  # messages/s
    plmail_cpu: float  # CPU seconds of this process (the import runs in it) and of its parsing process
    postgres_cpu: float  # CPU seconds of the cluster's processes
    wal_syncs: int  # times the WAL was flushed to disk (each commit that waits for the disk is one)
    load: float  # one-minute load average at the end
    index_seconds: float  # computing the search vectors the import's pages left for index_search, afterwards
    searchable_rate: float  # messages/s counting the import and that indexing together
    worker_rss: float | None  # peak RSS of the process the import parses in (plmail.mail.parse_worker), MiB
    worker_cpu: float  # CPU seconds of that process (included in plmail_cpu)
    peak_rss: float  # this process's peak RSS over the import and its indexing, MiB (plmail runs in it)


async def _wal_syncs(dsn: str) -> int:
    conn = await asyncpg.connect(dsn)
    try:
        return int(await conn.fetchval("SELECT wal_sync FROM pg_stat_wal"))
    finally:
        await conn.close()


async def _account(services: Services, mail: DovecotUser, email: str) -> int:
    user = await services.users.create_user(email, "benchmark password")
    return await services.providers.get(ImapAccountService).add(user.id, MailServerAccountInput(
        email=f"{mail.name}@bench.example", host=mail.server.host, port=mail.server.port, tls="none",
        username=mail.name, password=mail.password), operator=True)


async def plmail_foreground(settings: Settings, dsn: str, mail: DovecotUser, count: int, postmaster: int
                            ) -> ForegroundRun:
    reset_peak_rss()
    services = await open_services(settings, dsn)
    try:
        account_id = await _account(services, mail, "foreground@bench.example")
        syncs = await _wal_syncs(dsn)
        own, pg = time.process_time(), process_tree_cpu(postmaster)
        started = time.perf_counter()
        final = await services.sync.run_until_done(account_id)
        seconds = time.perf_counter() - started
        own, pg = time.process_time() - own, process_tree_cpu(postmaster) - pg
        parser = services.providers.get(ImapHistoryImporter).ingest.parser
        worker_cpu = process_tree_cpu(parser.pid) if parser is not None and parser.pid is not None else 0.0
        own += worker_cpu  # the parsing process's CPU counts as plmail's
        syncs = await _wal_syncs(dsn) - syncs
        load = os.getloadavg()[0]
        worker_rss = parser.peak_rss_mib() if parser is not None else None
        if final is None or final.done != count:
            raise SystemExit(f"plmail stored {final.done if final else 0} messages, expected {count}")
        indexing = time.perf_counter()
        await services.search_index.catch_up(float("inf"))
        index_seconds = time.perf_counter() - indexing
        vectors = await services.db.fetchval("SELECT count(*) FROM message_search")
        if vectors != count:
            raise SystemExit(f"{vectors} messages have a search vector, expected {count}")
    finally:
        await services.close()
    return ForegroundRun(count / seconds, own, pg, syncs, load, index_seconds, count / (seconds + index_seconds),
                         worker_rss, worker_cpu, peak_rss_mib())


async def plmail_jobs(settings: Settings, dsn: str, mail: DovecotUser, count: int) -> float:
    services = await open_services(settings, dsn)
    workers = WorkerSupervisor(services, default_catalog(), [QueueName.INGEST, QueueName.INGEST_BACKLOG],
                               grace_seconds=2)
    try:
        started = time.perf_counter()
        account_id = await _account(services, mail, "jobs@bench.example")  # queues its first sync
        workers.start()
        # Polled with the two cheap questions the progress check asks first; counting every stored message
        # twenty times a second would load the database the import is timed on.
        while True:
            record = await account_admin(services).for_job(account_id)
            if (record is not None and record.last_synced_at is not None
                    and not await services.providers.get(ImapHistoryImporter).has_history(account_id)):
                break
            await asyncio.sleep(0.05)
        seconds = time.perf_counter() - started
        progress = await services.importer.progress(account_id)
        if progress is None or progress.importing:
            raise SystemExit("plmail jobs: the import looked finished, but its progress says otherwise")
        if progress.done != count:
            raise SystemExit(f"plmail jobs stored {progress.done} messages, expected {count}")
    finally:
        await workers.stop()
        await services.close()
    return count / seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--messages", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--skip-workers", action="store_true", help="measure only the foreground import")
    parser.add_argument("--real", action="store_true", help="the SpamAssassin corpus instead of generated mail")
    parser.add_argument("--copies-join-originals", action="store_true",
                        help="with --real beyond 6,046: copies keep the originals' references and subjects, so each "
                             "copy of a reply joins the original conversation (the scheme before 2026-12-07)")
    parser.add_argument("--parse-process", choices=("auto", "true", "false"), default="auto",
                        help="PLMAIL_PARSE_PROCESS: parse the pages read ahead in a child process always (true), "
                             "never (false) or, as plmail does by default, while the machine has a CPU to spare")
    parser.add_argument("--plmail-first", action="store_true",
                        help="run plmail's import before mbsync's in each round and print it at once, and skip "
                             "mbsync's FSync-no pass (for 100,000 messages, where mbsync's pass takes longest)")
    parser.add_argument("--folders", type=int, default=4, choices=range(1, len(FOLDERS) + 1),
                        help="folders the mail is spread over, in turn")
    args = parser.parse_args()
    missing = [name for name, path in (("mbsync (apt install isync)", MBSYNC), ("notmuch", NOTMUCH))
               if not os.access(path, os.X_OK)]
    if missing:
        raise SystemExit(f"this benchmark compares plmail with {' and '.join(missing)}: install it first")
    base = Path(tempfile.mkdtemp(prefix="plmail-bench-imap-"))
    os.chmod(base, 0o755)
    server = DovecotServer(base / "dovecot").start()
    rows: list[tuple[float, float, float | None, float | None]] = []
    try:
        if args.real:
            messages = real_mail(args.messages, join_originals=args.copies_join_originals)
        else:
            messages = generate(args.messages)
        mail = server.add_user("bench")
        folders = FOLDERS[:args.folders]
        for index, folder in enumerate(folders):
            mail.deliver(messages[index::len(folders)], folder)
        del messages  # delivered: from here on this process holds what plmail holds, for the peak RSS
        gc.collect()
        _return_freed_memory()
        with mail.peer() as peer:  # Dovecot indexes the folders now, before anyone is timed
            for folder in folders:
                peer.uids(folder)
        for round_ in range(args.repeat):
            data = base / f"plmail-{round_}"
            pg = EmbeddedPostgres(data, find_pg_binaries(), resolve_run_as(None))
            try:
                dsn = pg.start()
                postmaster = int((pg.cluster_dir / "postmaster.pid").read_text().splitlines()[0])
                settings = Settings.from_env({"PLMAIL_DATA_DIR": str(data), "PLMAIL_DATABASE_URL": dsn,
                                              "PLMAIL_PARSE_PROCESS": args.parse_process})
                if args.plmail_first:
                    run = asyncio.run(plmail_foreground(settings, dsn, mail, args.messages, postmaster))
                    print(f"round {round_ + 1}: plmail {run.rate:,.0f} msg/s "
                          f"({args.messages / run.rate:.1f} s; load average {run.load:.2f}); mbsync next", flush=True)
                mb = mbsync_rate(mail, base, args.messages)
                indexed = notmuch_seconds(base)
                mb_nofsync = None if args.plmail_first else mbsync_rate(mail, base, args.messages, fsync=False)
                if not args.plmail_first:
                    run = asyncio.run(plmail_foreground(settings, dsn, mail, args.messages, postmaster))
                fg = run.rate
                jobs = None if args.skip_workers else asyncio.run(plmail_jobs(settings, dsn, mail, args.messages))
            finally:
                pg.stop()
                shutil.rmtree(data, ignore_errors=True)
            rows.append((mb, fg, jobs, mb_nofsync))
            peer = args.messages / mb + indexed
            nofsync = f" (FSync no: {mb_nofsync:,.0f})" if mb_nofsync else ""
            print(f"round {round_ + 1}: mbsync {mb:,.0f} msg/s{nofsync}, "
                  f"notmuch new {indexed:.1f} s, plmail {fg:,.0f} msg/s"
                  + (f", plmail jobs {jobs:,.0f} msg/s" if jobs else "")
                  + f"; plmail / (mbsync + notmuch new) = {args.messages / fg / peer:.2f} (target <= 1.0); "
                  f"searchable after {run.index_seconds:.1f} s more ({run.searchable_rate:,.0f} msg/s in all); "
                  f"plmail CPU {run.plmail_cpu:.1f} s"
                  + (f" (its parsing process {run.worker_cpu:.1f} s)" if run.worker_cpu else "")
                  + f", PostgreSQL CPU {run.postgres_cpu:.1f} s, "
                  f"{run.wal_syncs} WAL flushes, peak RSS {run.peak_rss:.0f} MiB"
                  + (f" (its parsing process: {run.worker_rss:.0f} MiB)" if run.worker_rss else "")
                  + f", load average {run.load:.2f}",
                  flush=True)
    finally:
        server.stop()
        shutil.rmtree(base, ignore_errors=True)
    kind = "SpamAssassin corpus" if args.real else "generated"
    print(f"\n{args.messages:,} {kind} messages in {len(folders)} folder(s), {len(rows)} round(s); "
          "ratio = mbsync msg/s / plmail msg/s")
    print(f"{'':<24}{'best msg/s':>11}{'worst msg/s':>12}{'ratio best/best':>16}{'ratio per round':>18}"
          f"{'median ratio':>14}")
    best_mb = max(r[0] for r in rows)
    print(f"{'mbsync':<24}{best_mb:>11,.0f}{min(r[0] for r in rows):>12,.0f}")
    nofsyncs = [r[3] for r in rows if r[3]]
    if nofsyncs:
        print(f"{'mbsync (FSync no)':<24}{max(nofsyncs):>11,.0f}{min(nofsyncs):>12,.0f}")
    for name, index in (("plmail (sync --wait)", 1), ("plmail (queued jobs)", 2)):
        pairs = [(r[0], r[index]) for r in rows if r[index]]
        if not pairs:
            continue
        values = [value for _, value in pairs if value is not None]
        ratios = [mb / value for mb, value in pairs if value]
        spread = f"{min(ratios):.2f}-{max(ratios):.2f}x"
        print(f"{name:<24}{max(values):>11,.0f}{min(values):>12,.0f}{best_mb / max(values):>15.2f}x{spread:>18}"
              f"{statistics.median(ratios):>13.2f}x")

if __name__ == "__main__":
    main()
