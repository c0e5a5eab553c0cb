"""What every command stands on: the database to use (the embedded cluster or PLMAIL_DATABASE_URL), and the
services of a short-lived process on it."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, TypeVar

from plmail.config import Settings
from plmail.datadir import DataDirLock
from plmail.db.embedded import embedded_for
from plmail.domain.commands import CommandContext
from plmail.domain.errors import EmbeddedDatabaseError

if TYPE_CHECKING:
    from plmail.services import Services

T = TypeVar("T")


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
        pg = embedded_for(settings)
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


def with_services(settings: Settings, action: Callable[[Services], Awaitable[T]]) -> T:
    """Run `action` against the services of this command's process, on the configured database, and close them."""

    async def run(dsn: str) -> T:
        from plmail.services import open_services

        services = await open_services(settings, dsn)
        try:
            return await action(services)
        finally:
            await services.close()

    with database(settings, own=False) as dsn:
        return asyncio.run(run(dsn))


class ServicesCommandHost:
    """A provider plugin's subcommands run against the services of this command's process."""

    def __init__(self, account_commands: Any) -> None:
        self.account_commands = account_commands

    def run(self, settings: Settings, work: Callable[[CommandContext], Awaitable[T]]) -> T:
        async def with_context(services: Services) -> T:
            return await work(CommandContext(services.providers, services.users.by_email))

        return with_services(settings, with_context)
