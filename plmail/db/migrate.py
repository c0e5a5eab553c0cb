"""Apply plmail's migrations under an advisory lock: all pending ones in one transaction, but for online steps.

One transaction means a crash mid-way leaves the schema as it was; the lock means a `plmail serve`
and a `plmail worker` starting together do not both try.

A migration that changes a large table declares the long part as `ONLINE` steps (`online_migration.py`): the
transaction commits after that migration's transactional part and records it, together with a marker that its
online steps are pending; the steps then run outside any transaction (so the table stays open to reads and writes),
the marker goes, and the remaining migrations follow in a new transaction. A marker left by a crash is completed
first by the next run, before any later migration.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import io
import logging
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import asyncpg
from piccolo.apps.migrations.auto.migration_manager import MigrationManager
from piccolo.apps.migrations.tables import Migration

from plmail.db.database import Database
from plmail.db.online_migration import OnlineStep, run_online_steps
from plmail.domain.errors import SchemaError, SchemaTooNewError

log = logging.getLogger(__name__)

APP_NAME = "plmail"
MIGRATIONS_DIR = Path(__file__).parent / "migrations"
_LOCK_KEY = 0x706C6D61  # "plma"
# Piccolo's migration table also holds the markers of online steps still to run, under their own app name, so
# Piccolo and `applied_migration_ids` never read them as migrations.
ONLINE_PENDING = "plmail:online-pending"
_LOCK_POLL = 0.5  # seconds between asking for the lock another node's migrations hold


@dataclass(frozen=True, slots=True)
class MigrationReport:
    applied: tuple[str, ...]
    already_applied: int


def migration_modules() -> dict[str, Any]:
    """Each migration module by its ID, imported as Piccolo's `get_migration_modules` does (by file name, with the
    folder on sys.path), but without importing Piccolo's app registry, which imports black and rich: a tenth of the
    start-up of every `plmail` command, for code formatting they never do."""
    folder = str(MIGRATIONS_DIR)
    if folder not in sys.path:
        sys.path.insert(0, folder)
    modules: dict[str, Any] = {}
    for path in sorted(MIGRATIONS_DIR.glob("*.py")):
        if path.name != "__init__.py":
            module = importlib.import_module(path.stem)
            if migration_id := getattr(module, "ID", None):
                modules[migration_id] = module
    return modules


def known_migration_ids() -> list[str]:
    return sorted(migration_modules())


async def applied_migration_ids(db: Database) -> set[str]:
    exists = await db.fetchval("SELECT to_regclass('public.migration') IS NOT NULL")
    if not exists:
        return set()
    rows = await db.fetch("SELECT name FROM migration WHERE app_name = $1", APP_NAME)
    return {row["name"] for row in rows}


async def pending_online_ids(db: Database) -> list[str]:
    """Migrations whose transactional part is applied but whose online steps have not finished."""
    exists = await db.fetchval("SELECT to_regclass('public.migration') IS NOT NULL")
    if not exists:
        return []
    rows = await db.fetch("SELECT name FROM migration WHERE app_name = $1 ORDER BY name", ONLINE_PENDING)
    return [row["name"] for row in rows]


def online_steps(module: object) -> tuple[OnlineStep, ...]:
    return tuple(getattr(module, "ONLINE", ()))


def _refuse_newer(applied: set[str], known: set[str]) -> None:
    newer = sorted(applied - known)
    if newer:
        raise SchemaTooNewError(
            f"The database schema is newer than this plmail (it has migration {newer[-1]}, which this "
            f"version does not know). Upgrade plmail, or restore a backup made with this version."
        )


async def check_schema(db: Database) -> None:
    """Raise when the database is ahead of or behind this code, without changing anything."""
    known = set(known_migration_ids())
    applied = await applied_migration_ids(db)
    _refuse_newer(applied, known)
    unfinished = await pending_online_ids(db)
    if unfinished:
        raise SchemaError(f"The database's migration {unfinished[0]} did not finish; run 'plmail migrate'.")
    missing = sorted(known - applied)
    if missing:
        raise SchemaError(f"The database needs {len(missing)} migration(s); run 'plmail migrate'.")


async def migrate(db: Database) -> MigrationReport:
    modules = migration_modules()
    known = sorted(modules)
    # A session lock on a connection held for the whole run: online steps commit as they go, so the lock cannot
    # be the transaction's. Two nodes on one database: the second waits for the first, then finds none pending.
    async with db.connection() as lock_conn:
        if not await lock_conn.fetchval("SELECT pg_try_advisory_lock($1)", _LOCK_KEY):
            log.info("another plmail process is migrating this database; waiting for it")
            # Asked again and again rather than waited for in pg_advisory_lock: a statement waiting there holds a
            # snapshot, which the other's CREATE INDEX CONCURRENTLY waits for in turn (a deadlock).
            while not await lock_conn.fetchval("SELECT pg_try_advisory_lock($1)", _LOCK_KEY):  # noqa: ASYNC110
                await asyncio.sleep(_LOCK_POLL)
        try:
            return await _migrate_locked(db, lock_conn, modules, known)
        finally:
            await lock_conn.execute("SELECT pg_advisory_unlock($1)", _LOCK_KEY)


async def _migrate_locked(db: Database, lock_conn: asyncpg.Connection, modules: dict[str, Any],
                          known: list[str]) -> MigrationReport:
    await Migration.create_table(if_not_exists=True).run()  # type: ignore[no-untyped-call]
    applied = await applied_migration_ids(db)
    _refuse_newer(applied, set(known))
    already_applied = len(applied)
    for migration_id in await pending_online_ids(db):  # left by a run that stopped during them
        await _finish_online(db, lock_conn, migration_id, online_steps(modules[migration_id]))
    done: list[str] = []
    while True:
        online: tuple[str, tuple[OnlineStep, ...]] | None = None
        async with db.transaction():
            applied = await applied_migration_ids(db)
            for migration_id in [mid for mid in known if mid not in applied]:
                manager = await modules[migration_id].forwards()
                if not isinstance(manager, MigrationManager):
                    raise SchemaError(f"migration {migration_id} did not return a MigrationManager")
                with contextlib.redirect_stdout(io.StringIO()):  # Piccolo prints progress; we log it
                    await manager.run()
                await Migration.insert(Migration(name=migration_id, app_name=APP_NAME)).run()
                done.append(migration_id)
                log.debug("applied migration %s", migration_id)
                steps = online_steps(modules[migration_id])
                if steps:
                    await Migration.insert(Migration(name=migration_id, app_name=ONLINE_PENDING)).run()
                    online = (migration_id, steps)
                    break
        if online is None:
            break
        await _finish_online(db, lock_conn, *online)
    if done:
        # One line, not one per migration: a fresh installation applies them all, and the start-up lines that
        # say which PostgreSQL runs and where must stay near the top of the log.
        log.info("applied %d migration(s): %s .. %s", len(done), done[0], done[-1])
    return MigrationReport(applied=tuple(done), already_applied=already_applied)


async def _finish_online(db: Database, conn: asyncpg.Connection, migration_id: str,
                         steps: tuple[OnlineStep, ...]) -> None:
    await run_online_steps(conn, migration_id, steps)
    await db.execute("DELETE FROM migration WHERE name = $1 AND app_name = $2", migration_id, ONLINE_PENDING)
