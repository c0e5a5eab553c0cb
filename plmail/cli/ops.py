"""`plmail backup`, `plmail restore` and `plmail doctor`."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from plmail.config import Settings


def add_ops_commands(sub: Any) -> None:
    """Register the subcommands on the main parser's subparsers."""
    backup = sub.add_parser("backup", help="write one archive: the database, secret.key and a manifest "
                                           "(works while plmail serve runs)")
    backup.add_argument("path", help="the archive to write, or a directory to write a dated one into")
    backup.set_defaults(handler=cmd_backup)

    restore = sub.add_parser("restore", help="restore an archive into an empty data directory (or an empty "
                                             "PLMAIL_DATABASE_URL database)")
    restore.add_argument("path", help="an archive written by plmail backup")
    restore.set_defaults(handler=cmd_restore)

    doctor = sub.add_parser("doctor", help="check the installation and say what to fix (exit 1 when something is)")
    doctor.set_defaults(handler=cmd_doctor)


def cmd_backup(settings: Settings, args: argparse.Namespace) -> int:
    from plmail.cli.runtime import database
    from plmail.ops.backup import write_backup

    with database(settings, own=False) as dsn:
        report = write_backup(settings, dsn, Path(args.path))
    counts = ", ".join(f"{name} {value}" for name, value in report.manifest.counts.as_dict().items())
    size = report.size / (1 << 20)
    print(f"wrote {report.path} ({size:.1f} MiB; schema {report.manifest.schema_revision}; {counts})")
    return 0


def cmd_restore(settings: Settings, args: argparse.Namespace) -> int:
    from plmail.ops.backup import restore_backup

    manifest = restore_backup(settings, Path(args.path))
    counts = ", ".join(f"{name} {value}" for name, value in manifest.counts.as_dict().items())
    where = settings.data_dir if settings.embedded_database else "PLMAIL_DATABASE_URL"
    print(f"restored the backup of {manifest.created_at} (plmail {manifest.plmail_version}) into {where}: {counts}")
    return 0


def cmd_doctor(settings: Settings, args: argparse.Namespace) -> int:
    from plmail.cli.runtime import database
    from plmail.ops.doctor import run_doctor
    from plmail.surfaces import provider_surfaces

    report = run_doctor(settings, lambda: database(settings, own=False), provider_surfaces().server_checks())
    print("\n".join(report.lines()))
    return 0 if report.ok else 1
