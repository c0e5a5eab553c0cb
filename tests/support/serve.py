"""Run `plmail serve` as a real process, the way a user starts it."""

from __future__ import annotations

import dataclasses
import os
import signal
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path

import httpx

from plmail.config import Settings
from plmail.services import Services, open_services
from tests.support.net import free_port


async def open_world_services(data_dir: Path, database_url: str, env: Mapping[str, str] | None = None) -> Services:
    """Services on a browser module's database, beside the `plmail serve` its tests drive (its own data directory)."""
    data_dir.mkdir(parents=True, exist_ok=True)
    settings = Settings.from_env({"PLMAIL_DATA_DIR": str(data_dir), "PLMAIL_DATABASE_URL": database_url, **(env or {})})
    return await open_services(dataclasses.replace(settings, shutdown_grace_seconds=2), database_url)


class ServeProcess:
    def __init__(self, data_dir: Path, *, database_url: str | None = None, extra_env: dict[str, str] | None = None,
                 args: list[str] | None = None, program: list[str] | None = None, cwd: Path | None = None) -> None:
        self.data_dir = data_dir
        self.port = free_port()
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("PLMAIL_")}
        self.env.update({"PLMAIL_DATA_DIR": str(data_dir), "PLMAIL_PORT": str(self.port), "PLMAIL_SHUTDOWN_GRACE": "5"})
        if database_url:
            self.env["PLMAIL_DATABASE_URL"] = database_url
        self.env.update(extra_env or {})
        self.args = args or []
        self.program = program or [sys.executable, "-m", "plmail.cli"]  # another install's `plmail`, e.g. from a wheel
        self.cwd = cwd
        self.log_path = data_dir.parent / f"serve-{self.port}.log"
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> ServeProcess:
        self.data_dir.parent.mkdir(parents=True, exist_ok=True)
        log = open(self.log_path, "ab")  # noqa: SIM115 (kept open for the child's lifetime)
        self.proc = subprocess.Popen(
            [*self.program, "serve", *self.args],
            env=self.env, stdout=log, stderr=subprocess.STDOUT, cwd=self.cwd,
        )
        log.close()
        return self

    def wait_healthy(self, timeout: float = 180) -> float:
        """Seconds until /healthz answered 200. Quiet, that is two or three; on a machine loaded tenfold by others the
        start alone took over a minute, and a test erring then says nothing about plmail. An exit ends the wait."""
        assert self.proc is not None
        started = time.monotonic()
        while time.monotonic() - started < timeout:
            if self.proc.poll() is not None:
                raise AssertionError(f"plmail serve exited with {self.proc.returncode}:\n{self.log()}")
            try:
                if httpx.get(f"{self.url}/healthz", timeout=2).status_code == 200:
                    return time.monotonic() - started
            except httpx.HTTPError:
                pass
            time.sleep(0.05)
        raise AssertionError(f"plmail serve not healthy after {timeout}s:\n{self.log()}")

    def log(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-6000:]
        except OSError:
            return ""

    def terminate(self, timeout: float = 30) -> int:
        assert self.proc is not None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)
            raise AssertionError(f"plmail serve ignored SIGTERM for {timeout}s:\n{self.log()}") from None

    def kill_hard(self) -> None:
        assert self.proc is not None
        self.proc.kill()
        self.proc.wait(10)


def postmaster_pid(data_dir: Path) -> int | None:
    try:
        return int((data_dir / "pg" / "data" / "postmaster.pid").read_text().splitlines()[0])
    except (OSError, ValueError, IndexError):
        return None


def kill_pid(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        # a killed child of an exited parent may linger as a zombie; /proc tells us it is dead
        try:
            state = Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0]
        except OSError:
            return
        if state == "Z":
            return
        time.sleep(0.05)
