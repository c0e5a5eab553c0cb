"""The embedded database as a user meets it: `plmail serve` with no PLMAIL_DATABASE_URL."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.support.serve import ServeProcess, kill_pid, postmaster_pid


@pytest.fixture
def data_dir() -> Iterator[Path]:
    # Not pytest's tmp_path: that is 0700, and the database runs as an unprivileged user when we are root.
    base = Path(tempfile.mkdtemp(prefix="plmail-embedded-"))
    os.chmod(base, 0o755)
    try:
        yield base / "data"
    finally:
        pid = postmaster_pid(base / "data")
        if pid:
            kill_pid(pid)  # a test that failed half-way must not leave its database running
        shutil.rmtree(base, ignore_errors=True)


def _cli(data_dir: Path, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PLMAIL_")}
    env["PLMAIL_DATA_DIR"] = str(data_dir)
    return subprocess.run([sys.executable, "-m", "plmail.cli", *args], env=env, input=stdin, capture_output=True,
                          text=True, timeout=120)


def test_first_start_initialises_and_restart_reuses_the_data(data_dir: Path) -> None:
    first = ServeProcess(data_dir).start()
    try:
        first.wait_healthy()
        assert (data_dir / "pg" / "data" / "PG_VERSION").exists()
        assert (data_dir / "secret.key").stat().st_mode & 0o777 == 0o600
        assert "initialising PostgreSQL" in first.log()
        # While serve runs, the CLI reaches its database through the socket instead of starting another.
        added = _cli(data_dir, "user", "add", "ada@example.org", "--password-stdin", "--admin",
                     stdin="long enough pw\n")
        assert added.returncode == 0, added.stderr
        assert "created user ada@example.org" in added.stdout
        assert httpx.get(f"{first.url}/login", follow_redirects=False).status_code == 200  # no longer /setup
        key = (data_dir / "secret.key").read_bytes()
    finally:
        assert first.terminate() == 0
    assert postmaster_pid(data_dir) is None, "the database was not stopped on exit"

    second = ServeProcess(data_dir).start()
    try:
        second.wait_healthy()
        assert "initialising PostgreSQL" not in second.log()
        assert (data_dir / "secret.key").read_bytes() == key
        with httpx.Client(base_url=second.url, follow_redirects=True) as http:
            login_page = http.get("/login")
            token = http.cookies["plmail_csrf"]
            assert login_page.status_code == 200
            signed_in = http.post("/login", data={"email": "ada@example.org", "password": "long enough pw",
                                                  "_csrf_token": token})
            assert signed_in.status_code == 200 and "Administration" in signed_in.text
    finally:
        assert second.terminate() == 0


def test_second_serve_on_the_same_data_dir_is_refused(data_dir: Path) -> None:
    first = ServeProcess(data_dir).start()
    try:
        first.wait_healthy()
        second = ServeProcess(data_dir).start()
        assert second.proc is not None
        code = second.proc.wait(60)
        assert code == 2
        assert f"Another plmail process (pid {first.proc.pid}) is already using the data directory" in second.log()
        assert "Traceback" not in second.log()
        # The first one is untouched.
        assert httpx.get(f"{first.url}/healthz").json()["database"] == "ok"
    finally:
        assert first.terminate() == 0


def test_restart_after_kill_9_of_plmail_stops_the_orphaned_database(data_dir: Path) -> None:
    first = ServeProcess(data_dir).start()
    first.wait_healthy()
    orphan = postmaster_pid(data_dir)
    first.kill_hard()
    assert orphan is not None
    os.kill(orphan, 0)  # still running: pg_ctl detached it from plmail

    again = ServeProcess(data_dir).start()
    try:
        again.wait_healthy()
        assert "left running by an earlier plmail; stopping it" in again.log()
        assert postmaster_pid(data_dir) != orphan
    finally:
        assert again.terminate() == 0


def test_restart_recovers_from_a_stale_pid_file(data_dir: Path) -> None:
    first = ServeProcess(data_dir).start()
    first.wait_healthy()
    server = postmaster_pid(data_dir)
    assert server is not None
    first.kill_hard()
    kill_pid(server)
    # The file survives the crash; make its pid belong to a live process that is not PostgreSQL,
    # as happens when the pid is reused after a reboot or container restart.
    pid_file = data_dir / "pg" / "data" / "postmaster.pid"
    lines = pid_file.read_text().splitlines()
    lines[0] = str(os.getpid())
    pid_file.write_text("\n".join(lines) + "\n")

    again = ServeProcess(data_dir).start()
    try:
        again.wait_healthy()
        assert "removing stale PostgreSQL pid file" in again.log()
    finally:
        assert again.terminate() == 0


def test_sigterm_stops_serve_and_its_database_promptly(data_dir: Path) -> None:
    serve = ServeProcess(data_dir).start()
    serve.wait_healthy()
    started = time.monotonic()
    assert serve.terminate(timeout=20) == 0
    assert time.monotonic() - started < 15
    assert postmaster_pid(data_dir) is None
    assert "plmail stopped" in serve.log()


def test_worker_without_a_running_serve_explains_itself(data_dir: Path) -> None:
    result = _cli(data_dir, "worker", "--queues", "enrich")
    assert result.returncode == 2
    assert "plmail: error:" in result.stderr
    assert "Traceback" not in result.stderr
    bad_queue = _cli(data_dir, "worker", "--queues", "enrich,bogus")
    assert bad_queue.returncode == 2 and "Unknown queue(s): bogus" in bad_queue.stderr


@pytest.mark.skipif(os.geteuid() != 0, reason="the unprivileged database user only exists when run as root")
def test_data_dir_the_database_user_cannot_reach_is_refused_clearly() -> None:
    hidden = Path(tempfile.mkdtemp(prefix="plmail-hidden-"))  # 0700, owned by root
    try:
        result = _cli(hidden / "data", "migrate")
        assert result.returncode == 2
        assert "cannot enter" in result.stderr and str(hidden) in result.stderr
    finally:
        shutil.rmtree(hidden, ignore_errors=True)


def test_serve_survives_a_database_restart_and_still_stops_promptly(data_dir: Path) -> None:
    """After `pg_ctl restart -m fast` every connection plmail held is gone: it serves again, and SIGTERM still
    stops it within its grace period (the IMAP IDLE supervisor once retried forever on the way out)."""
    from plmail.db.embedded import find_pg_binaries, resolve_run_as

    serve = ServeProcess(data_dir).start()
    try:
        serve.wait_healthy()
        run_as = resolve_run_as(None)
        as_user: dict[str, object] = {}
        if os.geteuid() == 0 and run_as.uid != 0:
            as_user = {"user": run_as.uid, "group": run_as.gid, "extra_groups": []}
        restarted = subprocess.run(  # type: ignore[call-overload]
            [find_pg_binaries().tool("pg_ctl"), "-D", str(data_dir / "pg" / "data"),
             "-l", str(data_dir / "pg" / "server.log"), "-w", "restart", "-m", "fast"],
            capture_output=True, text=True, timeout=60, cwd=str(data_dir / "pg"), **as_user)
        assert restarted.returncode == 0, restarted.stderr
        deadline = time.monotonic() + 30
        while True:
            try:
                health = httpx.get(f"{serve.url}/healthz", timeout=5)
                if health.status_code == 200 and health.json()["database"] == "ok":
                    break
            except httpx.HTTPError:
                pass
            assert time.monotonic() < deadline, f"not serving again after the restart:\n{serve.log()}"
            time.sleep(0.2)
        assert httpx.get(f"{serve.url}/login", timeout=5).status_code == 302  # to /setup: it reads the database
        started = time.monotonic()
    finally:
        code = serve.terminate(timeout=20)
    assert code == 0 and time.monotonic() - started < 10, serve.log()
