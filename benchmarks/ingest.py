"""Full-pipeline ingest speed, against `notmuch new` on the same messages in the same run.

Usage: .venv/bin/python benchmarks/ingest.py [--generated 50000] [--skip-notmuch]

Imports (1) the whole SpamAssassin public corpus and (2) a generated mbox through `plmail
import-mbox`'s code path (parse, sanitise, store originals, categorise, thread, change log, search
vector) into a private PostgreSQL cluster started with plmail's own embedded settings, and times
`notmuch new` indexing the same messages as a Maildir. Prints messages/s for each and the ratio.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import shutil
import subprocess
import sys
import tarfile
import time
from email.utils import format_datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.cluster import private_cluster
from plmail.config import Settings
from plmail.services import open_services

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "spamassassin-public-corpus"
EXTRA: dict[str, str] = dict(s.split("=", 1) for s in os.environ.get("BENCH_PG", "").split(",") if s)
ARCHIVES = ("easy_ham", "easy_ham_2", "hard_ham", "spam", "spam_2")


def spamassassin() -> list[bytes]:
    messages = []
    for name in ARCHIVES:
        with tarfile.open(CORPUS / f"{name}.tar.gz") as tar:
            for member in tar.getmembers():
                handle = tar.extractfile(member) if member.isfile() else None
                if handle is not None:
                    messages.append(handle.read())
    return messages


def generate(count: int, vocabulary: list[str], seed: int = 7) -> list[bytes]:
    """Mail shaped like a busy personal mailbox: ~4 KB each, 60 % replies in threads, some HTML."""
    rng = random.Random(seed)
    people = [f"person{i}@example{i % 37}.org" for i in range(400)]
    start = 1_600_000_000
    messages: list[bytes] = []
    roots: list[tuple[str, str]] = []
    for n in range(count):
        sender, rcpt = rng.sample(people, 2)
        mid = f"gen{n}@bench.example"
        headers = [f"From: Person <{sender}>", f"To: <{rcpt}>", f"Message-ID: <{mid}>",
                   f"Date: {format_datetime_ts(start + n * 60)}"]
        if roots and rng.random() < 0.6:
            parent_id, subject = rng.choice(roots[-2000:])
            headers += [f"Subject: Re: {subject}", f"In-Reply-To: <{parent_id}>", f"References: <{parent_id}>"]
        else:
            subject = " ".join(rng.choices(vocabulary, k=5))
            headers.append(f"Subject: {subject}")
        roots.append((mid, subject))
        if rng.random() < 0.15:
            headers.append("List-Unsubscribe: <mailto:unsubscribe@example.org>")
        text = "\n".join(" ".join(rng.choices(vocabulary, k=12)) for _ in range(rng.randint(20, 45)))
        if rng.random() < 0.25:
            html = "<html><body>" + "".join(f"<p>{line}</p>" for line in text.splitlines()) + "</body></html>"
            body = ("MIME-Version: 1.0\nContent-Type: multipart/alternative; boundary=XX\n\n--XX\n"
                    f"Content-Type: text/plain; charset=utf-8\n\n{text}\n--XX\nContent-Type: text/html; charset=utf-8"
                    f"\n\n{html}\n--XX--\n")
            messages.append(("\n".join(headers) + "\n" + body).encode())
        else:
            plain = "\nContent-Type: text/plain; charset=utf-8\n\n" + text + "\n"
            messages.append(("\n".join(headers) + plain).encode())
    return messages


def format_datetime_ts(ts: int) -> str:
    from datetime import UTC, datetime

    return format_datetime(datetime.fromtimestamp(ts, UTC))


def vocabulary_from(messages: list[bytes]) -> list[str]:
    words: set[str] = set()
    for raw in messages[:2000]:
        words.update(w for w in raw.decode("latin-1").split() if w.isalpha() and 3 <= len(w) <= 12)
    return sorted(words)


def write_mbox(path: Path, messages: list[bytes]) -> None:
    with open(path, "wb") as out:
        for raw in messages:
            if not raw.startswith(b"From "):
                out.write(b"From bench@example.org Mon Jan  1 00:00:00 2024\n")
            out.write(raw.replace(b"\r\n", b"\n").replace(b"\nFrom ", b"\n>From ").rstrip(b"\n") + b"\n\n")


def write_maildir(path: Path, messages: list[bytes]) -> None:
    for sub in ("cur", "new", "tmp"):
        (path / sub).mkdir(parents=True, exist_ok=True)
    for n, raw in enumerate(messages):
        body = raw.split(b"\n", 1)[1] if raw.startswith(b"From ") else raw
        (path / "cur" / f"{n}.bench:2,S").write_bytes(body)


def notmuch_rate(maildir: Path, count: int) -> float | None:
    if shutil.which("notmuch") is None:
        return None
    config = maildir.parent / f"{maildir.name}.notmuch-config"
    config.write_text(f"[database]\npath={maildir}\n[user]\nprimary_email=bench@example.org\n[new]\ntags=unread;inbox;\n"
                      "[maildir]\nsynchronize_flags=true\n")
    env = {**os.environ, "NOTMUCH_CONFIG": str(config)}
    started = time.perf_counter()
    subprocess.run(["notmuch", "new", "--quiet"], env=env, check=True, capture_output=True)
    return count / (time.perf_counter() - started)


async def plmail_rate(settings: Settings, dsn: str, mbox: Path, email: str) -> tuple[float, int]:
    services = await open_services(settings, dsn)
    try:
        user = await services.users.create_user(email, "benchmark password")
        report = await services.archive_importer.import_path(user, mbox)
    finally:
        await services.close()
    return report.imported / report.seconds, report.imported


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--generated", type=int, default=50_000)
    parser.add_argument("--skip-notmuch", action="store_true")
    args = parser.parse_args()
    with private_cluster("ingest", EXTRA) as cluster:
        corpus = spamassassin()
        generated = generate(args.generated, vocabulary_from(corpus))
        rows = []
        for label, messages in (("SpamAssassin corpus", corpus), (f"generated {len(generated):,}", generated)):
            slug = label.split()[0].lower()
            mbox = cluster.base / f"{slug}.mbox"
            write_mbox(mbox, messages)
            rate, imported = asyncio.run(plmail_rate(cluster.settings, cluster.dsn, mbox, f"{slug}@bench.example"))
            nm = None
            if not args.skip_notmuch:
                maildir = cluster.base / f"{slug}-maildir"
                write_maildir(maildir, messages)
                nm = notmuch_rate(maildir, len(messages))
            rows.append((label, imported, rate, nm))
        print(f"{'messages':<24}{'stored':>9}{'plmail msg/s':>15}{'notmuch msg/s':>15}{'ratio':>8}")
        for label, imported, rate, nm in rows:
            nm_text = f"{nm:,.0f}" if nm else "n/a"
            ratio = f"{rate / nm:.2f}" if nm else "n/a"
            print(f"{label:<24}{imported:>9,}{rate:>15,.0f}{nm_text:>15}{ratio:>8}")


if __name__ == "__main__":
    main()
