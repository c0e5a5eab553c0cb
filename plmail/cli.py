"""The `plmail` command: serve, worker, migrate, user."""

from __future__ import annotations

import argparse
import asyncio
import logging
import signal
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from types import FrameType

from plmail import __version__
from plmail.config import Settings
from plmail.datadir import DataDirLock
from plmail.db.embedded import EmbeddedPostgres, find_pg_binaries, resolve_run_as
from plmail.domain.enums import QueueName
from plmail.domain.errors import EmbeddedDatabaseError, PlmailError

log = logging.getLogger("plmail")


def _configure_logging(level: str) -> None:
    logging.basicConfig(
        level=getattr(logging, level, logging.INFO),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )
    if level != "DEBUG":
        # saq logs every job at INFO; that drowns everything else on a busy installation.
        logging.getLogger("saq").setLevel(logging.WARNING)


def _embedded(settings: Settings) -> EmbeddedPostgres:
    return EmbeddedPostgres(settings.data_dir, find_pg_binaries(settings.pg_bin), resolve_run_as(settings.pg_run_as))


@contextmanager
def database(settings: Settings, *, own: bool, may_start: bool = True) -> Iterator[str]:
    """Yield the DSN to use.

    With PLMAIL_DATABASE_URL that is the URL. Otherwise the embedded cluster: started here when no
    other plmail process owns the data directory, or reached through its socket when one does.
    With `own`, this process must be the owner (that is `plmail serve`); without `may_start`, it
    must not become one (a worker that held the data directory would keep `plmail serve` out).
    """
    lock = DataDirLock(settings.data_dir)
    if own:
        lock.acquire()
    try:
        if settings.database_url is not None:
            yield settings.database_url
            return
        pg = _embedded(settings)
        if not own and lock.is_held_elsewhere():
            if not pg.is_running():
                raise EmbeddedDatabaseError(
                    f"The plmail process that owns {settings.data_dir} has not started its database yet; try again."
                )
            yield pg.dsn
            return
        if not own:
            if not may_start:
                raise EmbeddedDatabaseError(
                    f"No plmail serve is running on {settings.data_dir}, and this command uses its database. "
                    f"Start 'plmail serve' first, or set PLMAIL_DATABASE_URL to a shared PostgreSQL server."
                )
            lock.acquire()
        try:
            yield pg.start()
        finally:
            pg.stop()
    finally:
        lock.release()


def _ignore_signal(signum: int, frame: FrameType | None) -> None:
    """Installed before uvicorn runs: it re-raises the stop signal after a graceful shutdown, and the
    default action would kill us before the embedded database is stopped."""


def cmd_serve(settings: Settings, args: argparse.Namespace) -> int:
    import uvicorn

    from plmail.app import create_app

    queues = _parse_queues(args.queues) if args.queues is not None else list(QueueName)
    signal.signal(signal.SIGTERM, _ignore_signal)
    signal.signal(signal.SIGINT, _ignore_signal)
    with database(settings, own=True) as dsn:
        asyncio.run(_migrate(dsn))
        app = create_app(settings, dsn, worker_queues=queues)
        config = uvicorn.Config(
            app,
            host=args.host or settings.host,
            port=args.port if args.port is not None else settings.port,
            lifespan="on",
            log_config=None,
            proxy_headers=True,
            timeout_graceful_shutdown=settings.shutdown_grace_seconds,
        )
        server = uvicorn.Server(config)
        asyncio.run(server.serve())
        if not server.started:
            log.error("plmail did not start; see the messages above")
            return 3
    log.info("plmail stopped")
    return 0


async def _migrate(dsn: str) -> None:
    from plmail.db.database import Database
    from plmail.db.engine import close_engine, open_engine
    from plmail.db.migrate import migrate

    engine = await open_engine(dsn, max_size=2)
    try:
        report = await migrate(Database(engine))
        if report.applied:
            log.info("applied %d migration(s)", len(report.applied))
    finally:
        await close_engine()


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
    log.info("worker running for queues: %s", ", ".join(q.value for q in queues))
    try:
        await stop.wait()
    finally:
        await supervisor.stop()
        await services.close()


def cmd_migrate(settings: Settings, args: argparse.Namespace) -> int:
    with database(settings, own=False) as dsn:
        asyncio.run(_migrate(dsn))
    print("database schema is up to date")
    return 0


def cmd_user_add(settings: Settings, args: argparse.Namespace) -> int:
    if not args.password_stdin:
        raise PlmailError(
            "Pass the password on standard input with --password-stdin (it is never a command-line argument)."
        )
    password = sys.stdin.readline().rstrip("\r\n")

    async def create(dsn: str) -> str:
        from plmail.services import open_services

        services = await open_services(settings, dsn)
        try:
            user = await services.users.create_user(
                args.email, password, display_name=args.name or "", is_admin=args.admin
            )
        finally:
            await services.close()
        return user.email

    with database(settings, own=False) as dsn:
        email = asyncio.run(create(dsn))
    print(f"created user {email}")
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

    user = sub.add_parser("user", help="manage users").add_subparsers(dest="user_command", required=True)
    add = user.add_parser("add", help="create a user")
    add.add_argument("email")
    add.add_argument("--password-stdin", action="store_true", help="read the password from standard input")
    add.add_argument("--name", help="display name")
    add.add_argument("--admin", action="store_true", help="make the user an administrator")
    add.set_defaults(handler=cmd_user_add)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        settings = Settings.from_env()
        _configure_logging(settings.log_level)
        code: int = args.handler(settings, args)
        return code
    except PlmailError as exc:
        print(f"plmail: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
