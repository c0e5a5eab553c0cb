"""Apply plmail's migrations: all pending ones in one transaction, under an advisory lock.

One transaction means a crash mid-way leaves the schema as it was; the lock means a `plmail serve`
and a `plmail worker` starting together do not both try.
"""

from __future__ import annotations

import contextlib
import io
import logging
from dataclasses import dataclass
from pathlib import Path

from piccolo.apps.migrations.auto.migration_manager import MigrationManager
from piccolo.apps.migrations.commands.base import BaseMigrationManager
from piccolo.apps.migrations.tables import Migration

from plmail.db.database import Database
from plmail.domain.errors import SchemaError, SchemaTooNewError

log = logging.getLogger(__name__)

APP_NAME = "plmail"
MIGRATIONS_DIR = Path(__file__).parent / "migrations"
_LOCK_KEY = 0x706C6D61  # "plma"


@dataclass(frozen=True, slots=True)
class MigrationReport:
    applied: tuple[str, ...]
    already_applied: int


def known_migration_ids() -> list[str]:
    finder = BaseMigrationManager()
    modules = finder.get_migration_modules(str(MIGRATIONS_DIR))
    return sorted(finder.get_migration_ids(modules))


async def applied_migration_ids(db: Database) -> set[str]:
    exists = await db.fetchval("SELECT to_regclass('public.migration') IS NOT NULL")
    if not exists:
        return set()
    rows = await db.fetch("SELECT name FROM migration WHERE app_name = $1", APP_NAME)
    return {row["name"] for row in rows}


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
    missing = sorted(known - applied)
    if missing:
        raise SchemaError(f"The database needs {len(missing)} migration(s); run 'plmail migrate'.")


async def migrate(db: Database) -> MigrationReport:
    finder = BaseMigrationManager()
    modules = finder.get_migration_modules(str(MIGRATIONS_DIR))
    known = sorted(finder.get_migration_ids(modules))
    async with db.transaction():
        if not await db.fetchval("SELECT pg_try_advisory_xact_lock($1)", _LOCK_KEY):
            # Two nodes on one database: the second waits for the first's migrations, then finds none pending.
            log.info("another plmail process is migrating this database; waiting for it")
            await db.execute("SELECT pg_advisory_xact_lock($1)", _LOCK_KEY)
        await Migration.create_table(if_not_exists=True).run()  # type: ignore[no-untyped-call]
        applied = await applied_migration_ids(db)
        _refuse_newer(applied, set(known))
        pending = [mid for mid in known if mid not in applied]
        for migration_id in pending:
            manager = await modules[migration_id].forwards()
            if not isinstance(manager, MigrationManager):
                raise SchemaError(f"migration {migration_id} did not return a MigrationManager")
            with contextlib.redirect_stdout(io.StringIO()):  # Piccolo prints progress; we log it
                await manager.run()
            await Migration.insert(Migration(name=migration_id, app_name=APP_NAME)).run()
            log.debug("applied migration %s", migration_id)
        if pending:
            # One line, not one per migration: a fresh installation applies them all, and the start-up lines that
            # say which PostgreSQL runs and where must stay near the top of the log.
            log.info("applied %d migration(s): %s .. %s", len(pending), pending[0], pending[-1])
    return MigrationReport(applied=tuple(pending), already_applied=len(applied))
