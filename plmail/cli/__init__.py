"""The `plmail` command: serve, worker, migrate, user, import, backfill, extract, app passwords; the account,
sending and operations (backup, restore, doctor) commands live beside this module; each provider plugin adds its
own (`plmail gmail …`). Commands call services only."""

from __future__ import annotations

import argparse
import asyncio
import logging
import signal
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING

from plmail import __version__
from plmail.cli.accounts import add_account_commands
from plmail.cli.ops import add_ops_commands
from plmail.cli.runtime import ServicesCommandHost, database, with_services
from plmail.cli.sending import add_sending_commands
from plmail.config import Settings
from plmail.domain.enums import QueueName
from plmail.domain.errors import PlmailError
from plmail.ops.logs import configure_logging

if TYPE_CHECKING:
    from plmail.services import Services

log = logging.getLogger("plmail")


def _ignore_signal(signum: int, frame: FrameType | None) -> None:
    """Installed before uvicorn runs: it re-raises the stop signal after a graceful shutdown, and the
    default action would kill us before the embedded database is stopped."""


def cmd_serve(settings: Settings, args: argparse.Namespace) -> int:
    import uvicorn

    from plmail.app import create_app
    from plmail.ops.backup import backup_before_migration
    from plmail.web.server import StreamClosingServer

    queues = _parse_queues(args.queues) if args.queues is not None else list(QueueName)
    signal.signal(signal.SIGTERM, _ignore_signal)
    signal.signal(signal.SIGINT, _ignore_signal)
    with database(settings, own=True) as dsn:
        backup_before_migration(settings, dsn)
        asyncio.run(_migrate(dsn))
        app = create_app(settings, dsn, worker_queues=queues)
        config = uvicorn.Config(
            app,
            host=args.host or settings.host,
            port=args.port if args.port is not None else settings.port,
            lifespan="on",
            log_config=None,
            # Proxy headers are read by web/proxy.py from PLMAIL_TRUSTED_PROXIES only: uvicorn's own reading
            # would believe X-Forwarded-For from 127.0.0.1 (its FORWARDED_ALLOW_IPS default) before ours runs.
            proxy_headers=False,
            timeout_graceful_shutdown=settings.shutdown_grace_seconds,
        )
        server = StreamClosingServer(config, app)
        asyncio.run(server.serve())
        if not server.started:
            log.error("plmail did not start; see the messages above")
            return 3
    log.info("plmail stopped")
    return 0


async def _migrate(dsn: str) -> None:
    from plmail.services import migrate_database

    applied = await migrate_database(dsn)
    if applied:
        log.info("applied %d migration(s)", applied)


def _parse_queues(raw: str) -> list[QueueName]:
    names = [part.strip() for part in raw.split(",") if part.strip()]
    unknown = [n for n in names if n not in QueueName._value2member_map_]
    if unknown:
        raise PlmailError(
            f"Unknown queue(s): {', '.join(unknown)}. Known queues: {', '.join(q.value for q in QueueName)}."
        )
    return [QueueName(n) for n in dict.fromkeys(names)]


def cmd_worker(settings: Settings, args: argparse.Namespace) -> int:
    queues = _parse_queues(args.queues)
    if not queues:
        raise PlmailError("Name at least one queue, for example --queues enrich,enrich_backlog.")
    with database(settings, own=False, may_start=False) as dsn:
        asyncio.run(_run_workers(settings, dsn, queues))
    return 0


async def _run_workers(settings: Settings, dsn: str, queues: Sequence[QueueName]) -> None:
    from plmail.jobs.catalog import default_catalog
    from plmail.jobs.workers import WorkerSupervisor
    from plmail.services import open_services

    services = await open_services(settings, dsn)
    supervisor = WorkerSupervisor(services, default_catalog(), queues, grace_seconds=settings.shutdown_grace_seconds)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    supervisor.start()
    if QueueName.INGEST in queues:
        services.start_watchers()  # IMAP IDLE lives with the workers that sync
    log.info("worker running for queues: %s", ", ".join(q.value for q in queues))
    try:
        await stop.wait()
    finally:
        await services.stop_watchers()
        await supervisor.stop()
        await services.close()


def cmd_migrate(settings: Settings, args: argparse.Namespace) -> int:
    from plmail.ops.backup import backup_before_migration

    with database(settings, own=False) as dsn:
        backup_before_migration(settings, dsn)
        asyncio.run(_migrate(dsn))
    print("database schema is up to date")
    return 0


def cmd_user_add(settings: Settings, args: argparse.Namespace) -> int:
    if not args.password_stdin:
        raise PlmailError(
            "Pass the password on standard input with --password-stdin (it is never a command-line argument)."
        )
    password = sys.stdin.readline().rstrip("\r\n")

    async def create(services: Services) -> str:
        user = await services.users.create_user(args.email, password, display_name=args.name or "",
                                                is_admin=args.admin)
        return user.email

    print(f"created user {with_services(settings, create)}")
    return 0


def cmd_user_reset_second_factor(settings: Settings, args: argparse.Namespace) -> int:
    """For an administrator locked out of their own second factor (no other admin to reset it on the web)."""

    async def reset(services: Services) -> str:
        user = await services.users.by_email(args.email)
        await services.users.reset_second_factor(user.id)
        return user.email

    print(f"two-factor sign-in removed for {with_services(settings, reset)}; the password alone signs in now")
    return 0


class _ProgressBar:
    """One self-overwriting line on stderr: percentage, messages read, rate."""

    def __init__(self) -> None:
        self.started = time.monotonic()
        self.last = 0.0
        self.tty = sys.stderr.isatty()

    def __call__(self, done: int, total: int, messages: int) -> None:
        now = time.monotonic()
        if now - self.last < 0.2 and done < total:
            return
        self.last = now
        rate = messages / max(now - self.started, 1e-6)
        share = f"{100 * done / total:5.1f}%" if total else "  ?  "
        line = f"importing {share}  {messages:,} messages  {rate:,.0f}/s"
        print(("\r" + line) if self.tty else line, end="" if self.tty else "\n", file=sys.stderr, flush=True)

    def finish(self) -> None:
        if self.tty:
            print(file=sys.stderr)


def cmd_import_mbox(settings: Settings, args: argparse.Namespace) -> int:
    path = Path(args.path).expanduser()

    async def run(services: Services) -> str:
        bar = _ProgressBar()
        try:
            user = await services.users.by_email(args.user)
            report = await services.archive_importer.import_path(
                user, path, account_name=args.account, label_name=args.label, progress=bar
            )
        finally:
            bar.finish()
        lines = [f"imported {report.imported}, duplicates {report.duplicates}, skipped {report.skipped} "
                 f"({report.read} read in {report.seconds:.1f} s)"]
        if report.noted:
            lines.append(f"{report.noted} stored with a note of what could not be read (shown with each message)")
        lines += [f"skipped {s.source_ref}: {s.reason}" for s in report.reasons[:50]]
        if len(report.reasons) > 50:
            lines.append(f"… and {len(report.reasons) - 50} more (listed in the ingest_skip table)")
        return "\n".join(lines)

    print(with_services(settings, run))
    return 0


def cmd_backfill_category(settings: Settings, args: argparse.Namespace) -> int:
    async def run(services: Services) -> str:
        user_id = (await services.users.by_email(args.user)).id if args.user else None
        report = await services.category_backfill.run(user_id=user_id)
        return f"messages re-sorted {report.messages_changed}, threads moved {report.threads_moved}"

    print(with_services(settings, run))
    return 0


def cmd_backfill_events(settings: Settings, args: argparse.Namespace) -> int:
    from plmail.calendar.service import ReplaySource

    async def run(services: Services) -> str:
        report = await services.calendar.backfill.run(email=args.user, source=ReplaySource(args.source))
        counts = ", ".join(f"{name} {count}" for name, count in sorted(report.run.outcomes.items()))
        return (f"users {report.users}, messages {report.run.messages}, claims {report.run.claims}, "
                f"failed {len(report.run.failed)}" + (f"; {counts}" if counts else ""))

    print(with_services(settings, run))
    return 0


def cmd_backfill_proposals(settings: Settings, args: argparse.Namespace) -> int:
    async def run(services: Services) -> str:
        report = await services.calendar.proposal_backfill.run(email=args.user)
        return (f"users {report.users}, messages {report.run.messages}, offered {report.run.offered}, "
                f"stored {report.run.stored}, failed {len(report.run.failed)}")

    print(with_services(settings, run))
    return 0


def cmd_extract(settings: Settings, args: argparse.Namespace) -> int:
    """No database: the extractors and the proposer over files, for people debugging extraction."""
    import json

    from plmail.calendar.files import ExtractOptions
    from plmail.calendar.proposals.files import ProposingFileExtractor, human_lines

    extractor = ProposingFileExtractor(ExtractOptions(me=args.me, lang=args.lang, tz=args.tz))
    results = asyncio.run(extractor.extract_all([Path(name) for name in args.files]))
    for shown in results:
        print(json.dumps(shown, ensure_ascii=False) if args.json else "\n".join(human_lines(shown)))
    return 1 if any("error" in shown for shown in results) else 0


def cmd_app_password(settings: Settings, args: argparse.Namespace) -> int:
    """create prints the secret once (only its hash is kept); list shows devices; revoke ends one."""

    async def run(services: Services) -> list[str]:
        auth, action = services.app_passwords, args.app_password_command
        if action == "create":
            return [(await auth.create_for_email(args.user, args.name)).token]
        user = await services.users.by_email(args.user)
        if action == "revoke":
            await auth.revoke(user.id, args.id)
            return [f"revoked app password {args.id}"]
        return [f"{p.id}\t{p.name}\t{p.hint}\tlast used {p.last_used_at or 'never'}"
                for p in await auth.active(user.id)]

    print("\n".join(with_services(settings, run)))
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="plmail", description="Self-hosted mail client server.")
    parser.add_argument("--version", action="version", version=f"plmail {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    serve = sub.add_parser("serve", help="run the web app, JMAP and all workers in one process")
    serve.add_argument("--host", help="address to listen on (default PLMAIL_HOST or 127.0.0.1)")
    serve.add_argument("--port", type=int, help="port to listen on (default PLMAIL_PORT or 8025)")
    serve.add_argument("--queues", help="run workers only for these queues (comma-separated; empty for none)")
    serve.set_defaults(handler=cmd_serve)

    worker = sub.add_parser("worker", help="run workers for chosen queues against the same database")
    worker.add_argument("--queues", required=True, help="comma-separated, e.g. enrich,enrich_backlog")
    worker.set_defaults(handler=cmd_worker)

    migrate = sub.add_parser("migrate", help="bring the database schema up to date")
    migrate.set_defaults(handler=cmd_migrate)

    importer = sub.add_parser("import-mbox", help="import an mbox file or a Maildir into a local archive account")
    importer.add_argument("path", help="mbox file (Google Takeout, Thunderbird, mutt) or Maildir directory")
    importer.add_argument("--user", required=True, help="email address of the plmail user who owns the mail")
    importer.add_argument("--account", help="name of the local archive account (created when missing)")
    importer.add_argument("--label", help="label for the imported mail (default: the file or folder name)")
    importer.set_defaults(handler=cmd_import_mbox)

    backfill = sub.add_parser("backfill", help="recompute derived data from stored mail")
    backfill_sub = backfill.add_subparsers(dest="backfill_command", required=True)
    category = backfill_sub.add_parser("category", help="re-sort every message into its inbox tab")
    category.add_argument("--user", help="only this user's mail")
    category.set_defaults(handler=cmd_backfill_category)
    events = backfill_sub.add_parser("events", help="run calendar extraction again over stored mail")
    events.add_argument("--user", help="only this user's mail")
    events.add_argument("--source", choices=["messages", "payloads"], default="messages",
                        help="read the stored messages (default), or only what their links kept")
    events.set_defaults(handler=cmd_backfill_events)
    proposals = backfill_sub.add_parser("proposals", help="offer proposals again from stored mail, as on arrival")
    proposals.add_argument("--user", help="only this user's mail")
    proposals.set_defaults(handler=cmd_backfill_proposals)

    extract = sub.add_parser("extract", help="show the events plmail reads in message files (no database)")
    extract.add_argument("files", nargs="+", metavar="FILE", help="RFC 822 message or .ics files")
    extract.add_argument("--me", help="your address, as the proposals read it")
    extract.add_argument("--lang", choices=["de", "en"], default="en", help="the language dates are read in")
    extract.add_argument("--tz", default="UTC", help="your time zone; floating times are read in it")
    extract.add_argument("--json", action="store_true", help="one JSON object per file")
    extract.set_defaults(handler=cmd_extract)

    account_commands = add_account_commands(sub)
    add_sending_commands(sub)
    from plmail.surfaces import provider_surfaces

    for add_commands in provider_surfaces().command_adders:  # each provider plugin's own subcommands
        add_commands(sub, ServicesCommandHost(account_commands))
    add_ops_commands(sub)

    user = sub.add_parser("user", help="manage users").add_subparsers(dest="user_command", required=True)
    add = user.add_parser("add", help="create a user")
    add.add_argument("email")
    add.add_argument("--password-stdin", action="store_true", help="read the password from standard input")
    add.add_argument("--name", help="display name")
    add.add_argument("--admin", action="store_true", help="make the user an administrator")
    add.set_defaults(handler=cmd_user_add)
    reset = user.add_parser("reset-second-factor", help="remove a user's two-factor sign-in (a lost phone)")
    reset.add_argument("email")
    reset.set_defaults(handler=cmd_user_reset_second_factor)

    app_password = sub.add_parser("app-password", help="app passwords for JMAP clients (phones, desktop apps)")
    app_sub = app_password.add_subparsers(dest="app_password_command", required=True)
    create = app_sub.add_parser("create", help="create one and print its secret (shown only this once)")
    create.add_argument("--user", required=True, help="email address of the plmail user")
    create.add_argument("--name", required=True, help="the device, e.g. Phone")
    listing = app_sub.add_parser("list", help="list a user's app passwords with their last use")
    listing.add_argument("--user", required=True)
    revoke = app_sub.add_parser("revoke", help="revoke an app password by its id")
    revoke.add_argument("--user", required=True)
    revoke.add_argument("id", type=int)
    app_password.set_defaults(handler=cmd_app_password)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        settings = Settings.from_env()
        configure_logging(settings.log_level, settings.log_format)
        code: int = args.handler(settings, args)
        return code
    except PlmailError as exc:
        print(f"plmail: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
