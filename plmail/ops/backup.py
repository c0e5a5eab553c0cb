"""`plmail backup` and `plmail restore`: one archive with the database, the key and a manifest.

The archive is a plain tar (the dump inside is compressed already) of ``manifest.json``, ``database.dump``
(``pg_dump --format=custom``) and ``secret.key``: without the key the stored account passwords and tokens
cannot be read, so a backup without it would not restore an installation. ``vapid.pem`` comes along too: every
push subscription a phone or browser made is for that key (an archive from before it simply has none). The dump
runs on a snapshot exported from a transaction that also takes the manifest's counts, so both describe the same
moment while plmail keeps serving and importing.
"""

from __future__ import annotations

import asyncio
import io
import json
import logging
import os
import shutil
import subprocess
import tarfile
import tempfile
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from plmail import __version__
from plmail.config import Settings
from plmail.datadir import LOCK_NAME, DataDirLock
from plmail.db.database import Database
from plmail.db.embedded import (
    EmbeddedPostgres,
    PgBinaries,
    client_binaries_for,
    embedded_for,
    find_pg_binaries,
    resolve_run_as,
)
from plmail.db.migrate import applied_migration_ids, known_migration_ids
from plmail.domain.errors import PlmailError
from plmail.ops.database import short_lived_database
from plmail.ops.repos.installation import InstallationCounts, InstallationRepository

log = logging.getLogger(__name__)

FORMAT = 1
MANIFEST = "manifest.json"
DUMP = "database.dump"
KEY = "secret.key"
VAPID = "vapid.pem"
AUTO_BACKUP_DIR = "backups"
AUTO_BACKUP_PREFIX = "pre-migration-"
AUTO_BACKUPS_KEPT = 3
SUFFIX = ".plmail-backup"

class BackupError(PlmailError):
    """A backup could not be written, or an archive cannot be restored here."""


@dataclass(frozen=True, slots=True)
class Manifest:
    plmail_version: str
    schema_revision: str | None
    created_at: str
    counts: InstallationCounts
    server_version: str
    pg_dump_major: int
    embedded: bool

    def as_json(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "plmail_version": self.plmail_version,
            "schema_revision": self.schema_revision,
            "created_at": self.created_at,
            "counts": self.counts.as_dict(),
            "server_version": self.server_version,
            "pg_dump_major": self.pg_dump_major,
            "embedded": self.embedded,
        }

    @classmethod
    def from_json(cls, value: dict[str, Any]) -> Manifest:
        if value.get("format") != FORMAT:
            raise BackupError(f"This archive has format {value.get('format')!r}; this plmail reads format {FORMAT}.")
        try:
            return cls(
                plmail_version=str(value["plmail_version"]),
                schema_revision=value.get("schema_revision"),
                created_at=str(value["created_at"]),
                counts=InstallationCounts(**{k: int(v) for k, v in value["counts"].items()}),
                server_version=str(value["server_version"]),
                pg_dump_major=int(value["pg_dump_major"]),
                embedded=bool(value.get("embedded", False)),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise BackupError(f"The archive's manifest is incomplete or damaged ({exc}).") from None


@dataclass(frozen=True, slots=True)
class BackupReport:
    path: Path
    manifest: Manifest
    size: int


def _run_tool(args: list[str], what: str) -> None:
    result = subprocess.run(args, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        detail = (result.stderr or result.stdout).strip()
        raise BackupError(f"{what} failed (exit {result.returncode}):\n{detail[-3000:]}")


async def _dump_binaries(settings: Settings, db: Database) -> PgBinaries:
    """The pg_dump that matches the server: the embedded cluster's own, or the nearest for an external one."""
    if settings.embedded_database:
        return embedded_for(settings).binaries
    major = await InstallationRepository(db).server_major()
    return client_binaries_for(major, settings.pg_bin, system_dirs=settings.pg_system_dirs)


def _add_bytes(tar: tarfile.TarFile, name: str, data: bytes, mtime: float) -> None:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    info.mode = 0o600
    info.mtime = int(mtime)
    tar.addfile(info, io.BytesIO(data))


@dataclass(frozen=True, slots=True)
class _Dumped:
    counts: InstallationCounts
    server_version: str
    schema_revision: str | None
    pg_dump_major: int


async def _dump(settings: Settings, dsn: str, dump: str) -> _Dumped:
    async with short_lived_database(dsn) as db:
        binaries = await _dump_binaries(settings, db)
        applied = sorted(await applied_migration_ids(db))
        async with InstallationRepository(db).snapshot() as snap:
            # In a thread: the snapshot's transaction must stay open on this loop until pg_dump is done.
            dump_args = [binaries.tool("pg_dump"), "--format=custom", f"--snapshot={snap.id}", f"--file={dump}",
                         f"--dbname={dsn}"]
            await asyncio.to_thread(_run_tool, dump_args, "pg_dump")
    return _Dumped(snap.counts, snap.server_version, applied[-1] if applied else None, binaries.major_version)


def _pack(partial: Path, manifest: Manifest, key: bytes, dump: Path, moment: float, vapid: bytes | None = None
          ) -> None:
    fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as raw, tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
        _add_bytes(tar, MANIFEST, json.dumps(manifest.as_json(), indent=2).encode(), moment)
        _add_bytes(tar, KEY, key, moment)
        if vapid is not None:
            _add_bytes(tar, VAPID, vapid, moment)
        info = tar.gettarinfo(str(dump), arcname=DUMP)
        info.mode, info.uid, info.gid, info.uname, info.gname = 0o600, 0, 0, "", ""
        with open(dump, "rb") as body:
            tar.addfile(info, body)
        raw.flush()
        os.fsync(raw.fileno())


def write_backup(settings: Settings, dsn: str, target: Path) -> BackupReport:
    """Dump the database at `dsn` with the key of `settings` into the archive `target` (written atomically)."""
    key_path = settings.secret_key_path
    if not key_path.is_file():
        raise BackupError(f"{key_path} is missing; without it a backup could not be restored. Nothing was written.")
    target = target.expanduser().absolute()
    if target.is_dir():
        target = target / f"plmail-{datetime.now(UTC):%Y%m%dT%H%M%SZ}{SUFFIX}"
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=".plmail-backup-", dir=target.parent) as work:
        dump = Path(work) / DUMP
        dumped = asyncio.run(_dump(settings, dsn, str(dump)))
        now = datetime.now(UTC)
        manifest = Manifest(
            plmail_version=__version__, schema_revision=dumped.schema_revision,
            created_at=now.isoformat(timespec="seconds"), counts=dumped.counts, server_version=dumped.server_version,
            pg_dump_major=dumped.pg_dump_major, embedded=settings.embedded_database,
        )
        partial = Path(work) / "archive.partial"
        vapid_path = settings.vapid_key_path
        _pack(partial, manifest, key_path.read_bytes(), dump, now.timestamp(),
              vapid_path.read_bytes() if vapid_path.is_file() else None)
        os.replace(partial, target)
    return BackupReport(target, manifest, target.stat().st_size)


# -- automatic backups before a migration ------------------------------------------------------------------


async def _applied(dsn: str) -> set[str]:
    async with short_lived_database(dsn) as db:
        return await applied_migration_ids(db)


def backup_before_migration(settings: Settings, dsn: str) -> Path | None:
    """Before `plmail serve` changes the schema of an embedded database that has data: one archive in
    $DATA/backups, keeping the newest three. Returns the archive written, if any."""
    if not settings.embedded_database:
        return None
    applied = asyncio.run(_applied(dsn))
    pending = sorted(set(known_migration_ids()) - applied)
    if not applied or not pending:
        return None
    folder = settings.data_dir / AUTO_BACKUP_DIR
    folder.mkdir(mode=0o700, exist_ok=True)
    target = folder / f"{AUTO_BACKUP_PREFIX}{datetime.now(UTC):%Y%m%dT%H%M%S%fZ}{SUFFIX}"
    report = write_backup(settings, dsn, target)
    log.info("backed up the database to %s before applying %d migration(s)", report.path, len(pending))
    for old in auto_backups(settings)[:-AUTO_BACKUPS_KEPT]:
        old.unlink(missing_ok=True)
    return report.path


def auto_backups(settings: Settings) -> list[Path]:
    """The automatic pre-migration archives, oldest first (their names sort by time)."""
    folder = settings.data_dir / AUTO_BACKUP_DIR
    return sorted(folder.glob(f"{AUTO_BACKUP_PREFIX}*{SUFFIX}")) if folder.is_dir() else []


# -- restore ------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Archive:
    manifest: Manifest
    key: bytes
    dump: Path
    vapid: bytes | None = None


def _read_archive(path: Path, work: Path) -> _Archive:
    try:
        with tarfile.open(path, mode="r:*") as tar:
            names = set(tar.getnames())
            missing = {MANIFEST, DUMP, KEY} - names
            if missing:
                raise BackupError(f"{path} is not a plmail backup (it lacks {', '.join(sorted(missing))}).")
            manifest_file = tar.extractfile(MANIFEST)
            key_file = tar.extractfile(KEY)
            dump_member = tar.getmember(DUMP)
            dump_file = tar.extractfile(dump_member)
            if manifest_file is None or key_file is None or dump_file is None:
                raise BackupError(f"{path} is damaged: a member is not a regular file.")
            manifest = Manifest.from_json(json.loads(manifest_file.read()))
            key = key_file.read()
            vapid_file = tar.extractfile(VAPID) if VAPID in names else None
            vapid = vapid_file.read() if vapid_file is not None else None
            dump = work / DUMP
            with open(dump, "wb") as out:
                shutil.copyfileobj(dump_file, out)
    except (tarfile.TarError, OSError, json.JSONDecodeError) as exc:
        raise BackupError(f"{path} cannot be read as a plmail backup: {exc}") from None
    return _Archive(manifest, key, dump, vapid)


def _refuse_newer_schema(manifest: Manifest) -> None:
    if manifest.schema_revision is not None and manifest.schema_revision not in set(known_migration_ids()):
        raise BackupError(
            f"This backup was made by plmail {manifest.plmail_version} with schema revision "
            f"{manifest.schema_revision}, which this plmail ({__version__}) does not know. Restore it with that "
            f"version or newer."
        )


def _data_dir_entries(data_dir: Path) -> list[str]:
    if not data_dir.exists():
        return []
    if not data_dir.is_dir():
        raise BackupError(f"{data_dir} is not a directory.")
    return sorted(entry.name for entry in data_dir.iterdir() if entry.name != LOCK_NAME)


def _restore_dump(binaries: PgBinaries, dsn: str, dump: Path) -> None:
    _run_tool(
        [binaries.tool("pg_restore"), "--exit-on-error", "--single-transaction", "--no-owner", "--no-privileges",
         f"--dbname={dsn}", str(dump)],
        "pg_restore",
    )


async def _counts(dsn: str) -> InstallationCounts:
    async with short_lived_database(dsn) as db:
        return await InstallationRepository(db).counts()


def _verify(dsn: str, expected: InstallationCounts) -> InstallationCounts:
    found = asyncio.run(_counts(dsn))
    if found != expected:
        raise BackupError(f"The restored database does not match the backup's manifest: {found} != {expected}.")
    return found


def _write_key(path: Path, key: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as out:
        out.write(key)
        out.flush()
        os.fsync(out.fileno())


def restore_backup(settings: Settings, archive: Path) -> Manifest:
    """Restore into an empty data directory (embedded) or an empty database (PLMAIL_DATABASE_URL)."""
    archive = archive.expanduser().absolute()
    if not archive.is_file():
        raise BackupError(f"{archive} does not exist.")
    if settings.embedded_database:
        return _restore_embedded(settings, archive)
    return _restore_external(settings, archive)


def _restore_embedded(settings: Settings, archive: Path) -> Manifest:
    data_dir = settings.data_dir
    entries = _data_dir_entries(data_dir)
    if entries:
        raise BackupError(
            f"{data_dir} is not empty ({', '.join(entries[:5])}); restore refuses to overwrite an installation. "
            f"Choose an empty PLMAIL_DATA_DIR, or move this one away first."
        )
    created = not data_dir.exists()
    lock = DataDirLock(data_dir)
    lock.acquire()
    pg: EmbeddedPostgres | None = None
    try:
        with tempfile.TemporaryDirectory(prefix=".plmail-restore-", dir=data_dir) as work:
            os.chmod(work, 0o700)
            content = _read_archive(archive, Path(work))
            _refuse_newer_schema(content.manifest)
            binaries = find_pg_binaries(settings.pg_bin, system_dirs=settings.pg_system_dirs,
                                        min_major=content.manifest.pg_dump_major)
            pg = EmbeddedPostgres(data_dir, binaries, resolve_run_as(settings.pg_run_as))
            dsn = pg.start()
            _restore_dump(binaries, dsn, content.dump)
            _verify(dsn, content.manifest.counts)
            _write_key(settings.secret_key_path, content.key)
            if content.vapid is not None:
                _write_key(settings.vapid_key_path, content.vapid)
        pg.stop()
        pg = None
        return content.manifest
    except BaseException:
        if pg is not None:
            pg.stop()
        # The directory was empty: clearing what this attempt made loses nothing and lets it be tried again.
        for entry in _data_dir_entries(data_dir):
            target = data_dir / entry
            if target.is_dir() and not target.is_symlink():
                shutil.rmtree(target, ignore_errors=True)
            else:
                target.unlink(missing_ok=True)
        raise
    finally:
        lock.release()
        if created and not _data_dir_entries(data_dir):
            shutil.rmtree(data_dir, ignore_errors=True)


async def _emptiness(dsn: str) -> tuple[int, int]:
    async with short_lived_database(dsn) as db:
        repo = InstallationRepository(db)
        return await repo.user_relations(), await repo.server_major()


def _restore_external(settings: Settings, archive: Path) -> Manifest:
    assert settings.database_url is not None
    dsn = settings.database_url
    relations, major = asyncio.run(_emptiness(dsn))
    if relations:
        raise BackupError(
            f"The database at PLMAIL_DATABASE_URL is not empty ({relations} tables, views or sequences); restore "
            f"refuses to overwrite it. Create an empty database and point PLMAIL_DATABASE_URL at it."
        )
    key_path = settings.secret_key_path
    with tempfile.TemporaryDirectory(prefix="plmail-restore-") as work:
        content = _read_archive(archive, Path(work))
        if key_path.exists() and key_path.read_bytes() != content.key:
            raise BackupError(
                f"{key_path} exists and is not the key of this backup; restore will not replace it. Move it away "
                f"or choose another PLMAIL_DATA_DIR."
            )
        _refuse_newer_schema(content.manifest)
        binaries = client_binaries_for(max(major, content.manifest.pg_dump_major), settings.pg_bin,
                                       system_dirs=settings.pg_system_dirs)
        _restore_dump(binaries, dsn, content.dump)
        _verify(dsn, content.manifest.counts)
    if not key_path.exists():
        _write_key(key_path, content.key)
    if content.vapid is not None and not settings.vapid_key_path.exists():
        _write_key(settings.vapid_key_path, content.vapid)
    return content.manifest
