"""Failures cost only what failed: a message that will not store, a wrong password, a dropped connection."""

from __future__ import annotations

import pytest

from plmail.domain.account_services import MailServerAccountInput
from plmail.domain.enums import AccountStatus
from plmail.providers.imap import ImapAuthError, ImapConnectionError
from plmail.providers.imap.accounts import ImapAccountService
from plmail.providers.imap.session import ImapConnector
from tests.integration.imap_sync.conftest import ImapSetup, add_account
from tests.support.dovecot import DovecotUser
from tests.support.imap_mail import message
from tests.support.imap_proxy import imap_proxy
from tests.support.repos import account_admin

POISON = """
    CREATE FUNCTION refuse_poison() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN RAISE EXCEPTION 'this message cannot be stored'; END $$;
    CREATE TRIGGER refuse_poison BEFORE INSERT ON message FOR EACH ROW
        WHEN (NEW.subject = 'poison') EXECUTE FUNCTION refuse_poison();"""


async def test_a_message_that_will_not_store_costs_only_itself_and_is_noted_after_five_tries(
    imap: ImapSetup,
) -> None:
    await imap.services.db.execute(POISON)
    imap.mail.deliver([message(i, subject="poison" if i == 30 else None) for i in range(1, 61)])
    await imap.sync()
    await imap.import_page()
    assert await imap.count() == 49  # the page stored everything but the one message
    await imap.import_all()
    assert [run.page.failed for run in imap.pages] == [1, 1, 1, 1, 0]
    assert await imap.count() == 59
    skips = await imap.services.db.fetch("SELECT source_ref, reason FROM ingest_skip WHERE account_id = $1",
                                         imap.account_id)
    assert [r["source_ref"] for r in skips] == ["INBOX:30"]
    assert skips[0]["reason"].startswith("gave up after 5 attempts") and "cannot be stored" in skips[0]["reason"]
    assert not (await imap.services.importer.progress(imap.account_id)).importing  # type: ignore[union-attr]

    # new mail behaves the same: the rest arrives at once, "new" waits at the failing one, then moves past it
    imap.mail.append([message(70), message(71, subject="poison"), message(72)])
    await imap.sync()
    assert {"seq-70@plmail.test", "seq-72@plmail.test"} <= (await imap.stored_ids())["INBOX"]
    last_seen = "SELECT last_seen_uid FROM mailbox WHERE account_id = $1 AND full_path = 'INBOX'"
    assert await imap.services.db.fetchval(last_seen, imap.account_id) == 61
    for _ in range(4):
        await imap.sync()
    assert await imap.services.db.fetchval(last_seen, imap.account_id) == 63
    assert await imap.count() == 61


async def test_a_wrong_password_marks_the_account_and_stops_all_retries(imap: ImapSetup) -> None:
    imap.mail.deliver([message(i) for i in range(1, 6)])
    async with imap_proxy(imap.mail.server.host, imap.mail.server.port) as proxy:
        await imap.services.db.execute(
            "UPDATE account SET settings = jsonb_set(settings, '{imap,port}', to_jsonb($2::int)), updated_at = now() "
            "WHERE id = $1", imap.account_id, proxy.port)
        await imap.sync_all()
        assert await imap.count() == 5
        # the password changes (at the provider, say): the next sign-in is refused
        await imap.services.db.execute("UPDATE account SET credentials = $2, updated_at = now() WHERE id = $1",
                                       imap.account_id, imap.services.providers.get(ImapConnector).seal("wrong"))
        await imap.services.operations.set_seen(imap.user.id, True, message_ids=[
            await imap.message_id_of("seq-1@plmail.test")])
        await imap.sync()
        record = await account_admin(imap.services).for_job(imap.account_id)
        assert record is not None and record.status is AccountStatus.AUTH_FAILED
        assert imap.mail.name in record.status_detail
        sent = len(proxy.client_bytes)
        # nothing tries again: not the sync, the import, the fallback poll, nor propagation (its change waits)
        assert await imap.sync() == []
        assert (await imap.import_page()).page.stored == 0
        assert await imap.services.sync.request_all() == 0
        assert not await imap.services.importer.ensure_running(imap.account_id)
        assert await imap.propagate() == 0
        assert len(proxy.client_bytes) == sent
        # the user fixes the password: the account syncs again, and the waiting change reaches the server
        server = imap.mail.imap()
        await imap.services.providers.get(ImapAccountService).update(
            imap.user.id, imap.account_id, MailServerAccountInput(
            email=f"{imap.mail.name}@example.org", host=server.host, port=server.port, tls="none",
            username=imap.mail.name, password=imap.mail.password), operator=True)
    record = await account_admin(imap.services).for_job(imap.account_id)
    assert record is not None and record.status is AccountStatus.OK and record.status_detail == ""
    assert await imap.propagate() == 1
    with imap.mail.peer() as peer:
        assert "\\Seen" in peer.flags(1)
    await imap.sync_all()
    assert await imap.count() == 5


async def test_adding_an_account_with_a_wrong_password_saves_nothing(imap: ImapSetup,
                                                                    dovecot_user: DovecotUser) -> None:
    server = dovecot_user.imap()
    with pytest.raises(ImapAuthError):
        await imap.services.providers.get(ImapAccountService).add(imap.user.id, MailServerAccountInput(
            email="x@example.org", host=server.host, port=server.port, tls="none", username=dovecot_user.name,
            password="not it"), operator=True)
    assert len(await imap.services.accounts.for_user(imap.user.id)) == 1


async def test_a_connection_dropped_mid_fetch_is_resumed(imap: ImapSetup) -> None:
    imap.mail.deliver([message(i, size=20_000) for i in range(1, 121)])
    async with imap_proxy(imap.mail.server.host, imap.mail.server.port) as proxy:
        user = imap.user
        account_id = await add_account(imap.services, user, imap.mail, port=proxy.port)
        setup = ImapSetup(imap.services, user, imap.mail, account_id)
        await setup.sync()
        proxy.cut_after(400_000)  # inside the first page's fetch
        with pytest.raises(ImapConnectionError):
            await setup.import_page()
        await setup.import_all()
        assert await setup.stored_ids() == imap.server_ids(["INBOX"])
        assert await setup.count() == 120

        imap.mail.append([message(i, size=20_000) for i in range(200, 260)])
        proxy.cut_after(500_000)  # inside the sync's fetch of new mail
        with pytest.raises(ImapConnectionError):
            await setup.sync()
        await setup.sync()
        assert await setup.stored_ids() == imap.server_ids(["INBOX"])
        assert await setup.count() == 180
