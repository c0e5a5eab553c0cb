"""A new provider is one folder with a plugin: the dummy provider under tests/support/ installs a syncer and a
propagator through its install(), and the real sync and propagation jobs drive them, with no file of plmail
knowing it."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from types import SimpleNamespace

import psycopg
import pytest

from plmail.config import Settings
from plmail.db.engine import piccolo_engine
from plmail.domain.enums import LabelRole, ProviderKind, QueueName
from plmail.jobs.catalog import default_catalog
from plmail.jobs.workers import WorkerSupervisor
from plmail.providers.catalog import PLUGINS
from plmail.services import Services, open_services
from tests.support.dummy_provider import plugin as dummy
from tests.support.mail import make_message
from tests.support.repos import account_rows


@pytest.fixture
async def with_dummy(settings: Settings, database_url: str) -> AsyncIterator[Services]:
    opened = await open_services(settings, database_url, plugins=(*PLUGINS, "tests.support.dummy_provider.plugin"))
    try:
        yield opened
    finally:
        await opened.close()


async def _eventually(check: Callable[[], Awaitable[bool]], what: str, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not await check():
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {timeout}s: {what}")
        await asyncio.sleep(0.1)


async def test_a_provider_from_its_own_folder_is_synced_and_propagated_by_the_jobs(with_dummy: Services) -> None:
    services = with_dummy
    dummy.SERVER.mail.clear()
    dummy.SERVER.changes.clear()
    user = await services.users.create_user("dummy@example.org", "correct horse")
    account_id = await account_rows(services).create(user_id=user.id, provider_kind=dummy.DUMMY, name="Dummy",
                                                     email="dummy@example.org")
    dummy.SERVER.mail[account_id] = [make_message(message_id=f"d{n}@dummy", subject=f"Dummy {n}") for n in range(3)]
    workers = WorkerSupervisor(services, default_catalog().without_schedules(), [QueueName.INGEST], grace_seconds=2)
    workers.start()
    try:
        await services.sync.request(account_id)  # the sync_account job, run by the ingest worker

        async def stored() -> bool:
            return int(await services.db.fetchval("SELECT count(*) FROM message WHERE account_id = $1",
                                                  account_id)) == 3

        await _eventually(stored, "the dummy's three messages stored by the sync job")
        archive = (await services.labels.role_ids(user.id))[LabelRole.ARCHIVE]
        thread_id = int(await services.db.fetchval(
            "SELECT thread_id FROM message WHERE account_id = $1 AND rfc_message_id = 'd0@dummy'", account_id))
        await services.operations.archive(user.id, thread_ids=[thread_id])  # queues propagate_provider_changes

        async def told() -> bool:
            return any(change[0] == account_id and archive in change[2] for change in dummy.SERVER.changes)

        await _eventually(told, "the archive handed to the dummy's propagator")
    finally:
        await workers.stop()
    pending = await services.db.fetchval(
        "SELECT count(*) FROM provider_change WHERE account_id = $1 AND done_at IS NULL", account_id)
    assert pending == 0
    # Another sync finds nothing new: the syncer is asked again, and nothing is stored twice.
    await services.sync.run(account_id)
    assert int(await services.db.fetchval("SELECT count(*) FROM message WHERE account_id = $1", account_id)) == 3


async def test_a_plugin_without_install_is_refused_before_anything_is_built(settings: Settings,
                                                                             database_url: str) -> None:
    from plmail.domain.errors import ConfigurationError

    with pytest.raises(ConfigurationError, match="no install"):
        await open_services(settings, database_url, plugins=(*PLUGINS, "tests.support.dummy_provider"))
    assert piccolo_engine().pool is None  # no connection was opened for it


async def test_a_plugin_whose_install_fails_leaves_no_connection_open(settings: Settings, database_url: str) -> None:
    """Found in CI: the pool a refused start left open was closed by the next start while the database under it
    was being dropped, and that start failed with a broken pipe."""

    def install(host: object) -> None:
        raise RuntimeError("the plugin's own start failed")

    with pytest.raises(RuntimeError, match="own start failed"):
        await open_services(settings, database_url, plugins=(*PLUGINS, SimpleNamespace(install=install)))
    assert piccolo_engine().pool is None
    async with await psycopg.AsyncConnection.connect(database_url) as probe:
        others = await (await probe.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )).fetchone()
    assert others == (0,), "the queues' connections were left open"


async def test_a_syncer_installed_for_one_kind_never_syncs_another_kinds_account(with_dummy: Services) -> None:
    """The deliberate difference from the seed's `supports()` cascade: syncers are found by the account's kind."""
    services = with_dummy
    user = await services.users.create_user("kinds@example.org", "correct horse")
    dummy.SERVER.mail.clear()
    local = await account_rows(services).create(user_id=user.id, provider_kind=ProviderKind.LOCAL, name="Local",
                                                email="kinds@example.org")
    dummy.SERVER.mail[local] = [make_message(message_id="not-mine@dummy")]
    before = dummy.SERVER.syncs
    assert await services.sync.run(local) == []
    assert dummy.SERVER.syncs == before  # the dummy's syncer was not asked about the local account
    assert int(await services.db.fetchval("SELECT count(*) FROM message WHERE account_id = $1", local)) == 0
    own = await account_rows(services).create(user_id=user.id, provider_kind=dummy.DUMMY, name="Dummy",
                                              email="kinds@example.org")
    await services.sync.run(own)
    assert dummy.SERVER.syncs == before + 1
