"""Several Gmail accounts: one account's trouble (a withdrawn grant, a spent quota) costs no other account;
mail a sibling account already holds goes to that account (Gmailify); `plmail gmail skipped` lists and forgets
the notes."""

from __future__ import annotations

import os
import subprocess
import sys

from plmail.config import Settings
from plmail.domain.enums import AccountStatus, ProviderKind
from plmail.mail.ingest import parse_message
from tests.integration.gmail.conftest import GmailSetup, connect_account
from tests.support.fakes import rfc822
from tests.support.repos import account_admin, account_rows


async def test_a_withdrawn_grant_and_a_spent_quota_cost_only_their_own_account(gmail: GmailSetup) -> None:
    bob = gmail.fake.add_mailbox("bob@gmail.com")
    bob_id = await connect_account(gmail.services, gmail.user, gmail.fake, "bob@gmail.com")
    for n in range(5):
        gmail.mailbox.add_message(rfc822(f"For Alice {n}"))
        bob.add_message(rfc822(f"For Bob {n}"))
    for account_id in (gmail.account_id, bob_id):
        await gmail.sync_service.run(account_id)
    await gmail.import_all()
    while (await gmail.importer.progress(bob_id)).importing:  # type: ignore[union-attr]
        await gmail.importer.run_page(bob_id, chain=False)

    gmail.fake.oauth.revoke_user("alice@gmail.com")
    gmail.mailbox.add_message(rfc822("Alice cannot see this yet"))
    late = bob.add_message(rfc822("Bob sees this")).id
    assert await gmail.sync_service.run(gmail.account_id) == []  # no exception: the account waits for its user
    alice = await account_admin(gmail.services).for_job(gmail.account_id)
    assert alice is not None and alice.status is AccountStatus.RECONNECT
    await gmail.sync_service.run(bob_id)
    assert await gmail.services.db.fetchval(
        "SELECT count(*) FROM message WHERE account_id = $1 AND provider_key = $2", bob_id, late) == 1
    bob_record = await account_admin(gmail.services).for_job(bob_id)
    assert bob_record is not None and bob_record.status is AccountStatus.OK
    assert await account_admin(gmail.services).syncable_ids() == [bob_id]

    # Bob's quota runs out; Alice's pacer state (and anyone else's) is untouched by it
    until = await gmail.gmail.pacer.rejected(bob_id, gmail.fake.client_id, limit_value=None, retry_after=50)
    run = await gmail.importer.run_page(gmail.account_id, chain=False)
    assert run.page.stored == 0  # a reconnect account's import does nothing
    bob.add_message(rfc822("after the refusal"))
    await gmail.sync_service.run(bob_id)  # put back, not failed
    blocked = await gmail.services.db.fetchval(
        "SELECT blocked_until FROM gmail_quota_account WHERE account_id = $1", bob_id)
    assert blocked == until
    assert await gmail.services.db.fetchval(
        "SELECT count(*) FROM gmail_quota_account WHERE account_id = $1 AND blocked_until IS NOT NULL",
        gmail.account_id) == 0


async def test_mail_a_sibling_account_already_holds_is_that_accounts(gmail: GmailSetup) -> None:
    services = gmail.services
    sibling = await account_rows(services).create(user_id=gmail.user.id, provider_kind=ProviderKind.LOCAL,
                                             name="placeholder", email="me@work.example")
    # a connected (IMAP) sibling account named in the headers, holding the message Gmail fetched from it
    await services.db.execute("UPDATE account SET provider_kind = 'imap' WHERE id = $1", sibling)
    fetched_copy = rfc822("Gmailified", to="me@work.example", message_id="<gmailify-1@work.example>")
    await services.pipeline.ingest([parse_message(fetched_copy, account_id=sibling)])
    claimed = gmail.mailbox.add_message(fetched_copy).id
    sent_as = gmail.mailbox.add_message(
        rfc822("Sent as work", sender="me@work.example", to="me@work.example", message_id="<sent@work.example>"),
        label_ids=("SENT",)).id
    forwarded = gmail.mailbox.add_message(rfc822("Forwarded", to="old@elsewhere.example")).id
    not_held = gmail.mailbox.add_message(rfc822("Not there", to="me@work.example")).id
    await gmail.sync()
    await gmail.import_all()
    stored = await gmail.gmail_ids()
    assert stored == {sent_as, forwarded, not_held}
    note = await services.db.fetchrow("SELECT reason, detail FROM gmail_skipped_message WHERE gmail_id = $1", claimed)
    assert note is not None and note["reason"] == "gmailify" and f"account {sibling}" in note["detail"]


async def test_plmail_gmail_skipped_lists_and_forgets(gmail: GmailSetup, settings: Settings,
                                                      database_url: str) -> None:
    gmail.mailbox.add_chat("one")
    gmail.mailbox.add_chat("two")
    gone = gmail.mailbox.add_message(rfc822("gone"))
    gmail.mailbox.mark_gone(gone.id)
    await gmail.sync()
    await gmail.import_all()

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("PLMAIL_")}
        env.update(PLMAIL_DATA_DIR=str(settings.data_dir), PLMAIL_DATABASE_URL=database_url)
        return subprocess.run([sys.executable, "-m", "plmail.cli", "gmail", "skipped", *args], env=env,
                              capture_output=True, text=True, timeout=60)

    listed = run()
    assert listed.returncode == 0, listed.stderr
    lines = listed.stdout.splitlines()
    assert lines[0] == f"account {gmail.account_id} (alice@gmail.com)"
    assert lines[1].split()[:2] == ["chat", "2"] and lines[2].split()[:2] == ["gone", "1"]
    forgot = run("--forget", str(gmail.account_id))
    assert forgot.returncode == 0 and f"forgot 3 skipped message(s) of account {gmail.account_id}" in forgot.stdout
    assert "no skipped Gmail messages" in run().stdout
    assert await gmail.gmail.importer.has_history(gmail.account_id)  # the next listing asks Gmail again
