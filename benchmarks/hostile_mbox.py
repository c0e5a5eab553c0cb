"""Peak memory of `plmail import-mbox` on a hostile archive (issue 19).

Usage: .venv/bin/python benchmarks/hostile_mbox.py [--good 2000]

The archive holds good messages with, between them, a multipart nested 5,000 deep, a 50 MB header line,
20,000 attachments and binary garbage. It is imported by the real command in a child process into a private
PostgreSQL cluster; the child reports its /proc high-water mark (VmHWM) when the command returns. Prints the
command's report, the peak RSS against the 400 MB target, and whether every good message was stored.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.cluster import private_cluster
from plmail.services import open_services
from tests.support.hostile import deep_multipart, garbage, good, long_header_line, many_attachments, write_mbox

MB = 1024 * 1024
TARGET_MB = 400
_CHILD = """
import sys
from plmail.cli import main
try:
    code = main(sys.argv[1:])
finally:
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            print("VMHWM", line.split()[1], file=sys.stderr)
sys.exit(code)
"""


def build(path: Path, good_count: int) -> int:
    """The archive; returns how many good messages it holds."""
    hostile = [deep_multipart(5_000), long_header_line(50 * MB), many_attachments(20_000)]
    entries: list[bytes] = []
    between: dict[int, bytes] = {}
    step = max(good_count // (len(hostile) + 1), 1)
    for n in range(good_count):
        entries.append(good(n))
        if n % step == step - 1 and hostile:
            entries.append(hostile.pop(0))
            between[len(entries) - 1] = garbage(64 * 1024, seed=n)  # raw bytes after it, no envelope
            entries.append(garbage(16 * 1024, seed=n + 1))  # and an entry of nothing but garbage
    entries.extend(hostile)
    write_mbox(path, entries, between=between)
    return good_count


async def stored_good(dsn: str, settings: object, count: int) -> int:
    services = await open_services(settings, dsn)  # type: ignore[arg-type]
    try:
        ids = {r["rfc_message_id"] for r in await services.db.fetch("SELECT rfc_message_id FROM message")}
        notes = await services.db.fetchval("SELECT count(*) FROM message WHERE parse_note IS NOT NULL")
        print(f"messages stored with a note: {notes}")
        return sum(1 for n in range(count) if f"good{n}@x" in ids)
    finally:
        await services.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--good", type=int, default=2_000, help="good messages around the hostile ones")
    args = parser.parse_args()
    with private_cluster("hostile") as cluster:
        archive = cluster.base / "hostile.mbox"
        count = build(archive, args.good)
        print(f"archive: {archive.stat().st_size / MB:.1f} MB, {count} good messages and 3 hostile ones")
        env = {k: v for k, v in os.environ.items() if not k.startswith("PLMAIL_")}
        env.update(PLMAIL_DATABASE_URL=cluster.dsn, PLMAIL_DATA_DIR=str(cluster.base / "data"))
        subprocess.run([sys.executable, "-m", "plmail.cli", "migrate"], env=env, check=True, capture_output=True)
        subprocess.run([sys.executable, "-c", "import asyncio,sys;from plmail.config import Settings;"
                        "from plmail.services import open_services\n"
                        "async def m():\n s=await open_services(Settings.from_env(),sys.argv[1])\n"
                        " await s.users.create_user('me@bench.example','benchmark password')\n await s.close()\n"
                        "asyncio.run(m())", cluster.dsn], env=env, check=True)
        started = time.monotonic()
        result = subprocess.run([sys.executable, "-c", _CHILD, "import-mbox", str(archive), "--user",
                                 "me@bench.example"], env=env, capture_output=True, text=True)
        seconds = time.monotonic() - started
        peak_kb = next(int(line.split()[1]) for line in result.stderr.splitlines() if line.startswith("VMHWM"))
        print(result.stdout.strip())
        print(f"exit code: {result.returncode}   time: {seconds:.1f} s")
        print(f"peak RSS (VmHWM): {peak_kb / 1024:.0f} MB   target: under {TARGET_MB} MB   "
              f"{'OK' if peak_kb / 1024 < TARGET_MB else 'OVER'}")
        found = asyncio.run(stored_good(cluster.dsn, cluster.settings, count))
        print(f"good messages stored: {found} of {count}")
        if result.returncode != 0 or found != count or peak_kb / 1024 >= TARGET_MB:
            raise SystemExit(1)


if __name__ == "__main__":
    main()
