"""JMAP accounts (issue 31) against a real JMAP server: a second plmail started by the suite. An account is added
by its server's address and an app password (the session checked, clear errors for a refused password, a missing
or non-JMAP server), its mail imported newest first with its mailboxes as labels, the upstream's changes picked
up by `Email/changes`, and what the user does here sent upstream with `Email/set`."""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from plmail.domain.enums import LabelRole, ProviderKind
from plmail.domain.errors import ValidationError
from plmail.domain.messages import Address
from plmail.domain.outgoing import DraftContent
from plmail.providers.jmap.accounts import JmapAccountInput, JmapAccountService
from plmail.providers.jmap.client import JmapClient, JmapCredentials
from plmail.providers.jmap.errors import JmapBlocked, NotJmapError
from plmail.providers.jmap.push import EventSourceWatcher
from plmail.services import Services
from tests.integration.jmap_accounts.conftest import (
    UpstreamServer,
    UpstreamUser,
    make_upstream_user,
    upstream_sends_through,
)
from tests.support.dovecot import DovecotUser, dovecot, dovecot_user
from tests.support.jobs import run_queued
from tests.support.mail import make_message
from tests.support.smtp import SmtpServer, smtp, smtp_server

__all__ = ["dovecot", "dovecot_user", "smtp", "smtp_server"]


async def _downstream(services: Services, up: UpstreamUser, *, bearer: bool = False) -> tuple[int, int]:
    user = await services.users.create_user("down@example.com", "another correct horse")
    accounts = services.providers.get(JmapAccountService)
    account_id = await accounts.add(user.id, JmapAccountInput(email=up.email, secret=up.token, server=up.url,
                                                              bearer=bearer))
    return user.id, account_id


async def _ids(services: Services, account_id: int) -> dict[str, int]:
    rows = await services.db.fetch("SELECT id, subject FROM message WHERE account_id = $1", account_id)
    return {r["subject"]: r["id"] for r in rows}


async def _labels_of(services: Services, message_id: int) -> set[str]:
    rows = await services.db.fetch(
        "SELECT l.name FROM message_label ml JOIN label l ON l.id = ml.label_id WHERE ml.message_id = $1",
        message_id)
    return {r["name"] for r in rows}


def _in(up: UpstreamUser, role: str) -> dict[str, dict[str, Any]]:
    """The upstream's Emails in the mailbox of this role, by subject (each subject at most once)."""
    box = up.mailboxes()[role]["id"]
    ids = up.call("Email/query", {"filter": {"inMailbox": box}})["ids"]
    listed = up.call("Email/get", {"ids": ids, "properties": ["subject", "keywords", "preview"]})["list"]
    subjects = [e["subject"] for e in listed]
    assert len(subjects) == len(set(subjects)), subjects
    return {e["subject"]: e for e in listed}


async def test_an_account_is_added_only_with_a_session_that_offers_mail(
    services: Services, upstream_server: UpstreamServer, tmp_path: Path,
) -> None:
    up = make_upstream_user(upstream_server, tmp_path, inbox=0, projects=0)
    user = await services.users.create_user("down@example.com", "another correct horse")
    accounts = services.providers.get(JmapAccountService)

    with pytest.raises(ValidationError, match="refused") as refused:
        await accounts.add(user.id, JmapAccountInput(email=up.email, secret="not-the-password", server=up.url))
    assert refused.value.field == "secret"
    with pytest.raises(ValidationError, match="no JMAP server"):  # 404
        await accounts.add(user.id, JmapAccountInput(email=up.email, secret=up.token,
                                                     server=f"{up.url}/no/such/session"))
    with pytest.raises(ValidationError, match="not with a JMAP session"):  # something else answers 200
        await accounts.add(user.id, JmapAccountInput(email=up.email, secret=up.token, server=f"{up.url}/healthz"))
    assert not await services.db.fetchval("SELECT count(*) FROM account WHERE user_id = $1", user.id)

    # the server's address alone: the session is found at /.well-known/jmap (RFC 8620 §2.2); an app password as
    # Basic with the address as user name, and the same secret as a bearer token
    basic = await accounts.add(user.id, JmapAccountInput(email=up.email, secret=up.token, server=up.url))
    bearer = await accounts.add(user.id, JmapAccountInput(email=up.email, secret=up.token, server=up.url,
                                                          bearer=True))
    rows = await services.db.fetch("SELECT provider_kind, settings, credentials FROM account WHERE id = ANY($1)",
                                   [basic, bearer])
    assert {r["provider_kind"] for r in rows} == {"jmap"}
    for row in rows:
        assert up.token.encode() not in row["credentials"]  # sealed, never the plain secret
        assert '"session_url": "' + up.url + '/jmap/session"' in row["settings"]
    for account_id in (basic, bearer):
        await services.sync.run(account_id)
        record = await services.db.fetchrow("SELECT status, status_detail FROM account WHERE id = $1", account_id)
        assert record is not None and (record["status"], record["status_detail"]) == ("ok", "")


async def test_a_typed_address_never_reaches_this_machine_or_the_local_network(
    upstream_server: UpstreamServer,
) -> None:
    """Outside tests nothing is allowed besides the public internet (server-side request forgery), and a secret
    goes over plain http only to this machine."""
    client = JmapClient()
    credentials = JmapCredentials("me@example.org", "secret")
    try:
        for url in (f"{upstream_server.serve.url}/jmap/session", "https://10.1.2.3/jmap/session",
                    "https://[fd00::1]/.well-known/jmap"):
            with pytest.raises(JmapBlocked):
                await client.session(url, credentials)
        with pytest.raises(NotJmapError, match="https"):
            await client.session("http://jmap.example.org/.well-known/jmap", credentials)
    finally:
        await client.close()


async def test_import_newest_first_then_changes_both_ways(
    services: Services, upstream_server: UpstreamServer, tmp_path: Path,
) -> None:
    up = make_upstream_user(upstream_server, tmp_path, inbox=12, projects=3)
    user_id, account_id = await _downstream(services, up)

    progress = await services.sync.run_until_done(account_id)
    assert progress is not None and not progress.importing
    assert (progress.done, progress.total) == (15, 15)
    ids = await _ids(services, account_id)
    assert len(ids) == 15
    # newest first: the rows were stored in the upstream's receivedAt order, descending
    received = await services.db.fetch(
        "SELECT received_at FROM message WHERE account_id = $1 ORDER BY id", account_id)
    stamps = [r["received_at"] for r in received]
    assert stamps == sorted(stamps, reverse=True)
    roles = await services.labels.role_ids(user_id)
    assert await _labels_of(services, ids["Inbox 4"]) == {"Inbox"}
    assert await _labels_of(services, ids["Projects 1"]) == {"Projects"}
    inbox_count = await services.db.fetchval(
        "SELECT count(*) FROM message_label WHERE label_id = $1", roles[LabelRole.INBOX])
    assert inbox_count == 12
    assert await services.import_state.is_importing(ProviderKind("jmap"), account_id) is False

    # archived mail comes in read (the upstream's import-mbox marks it so), as the upstream says
    assert not await services.db.fetchval(
        "SELECT count(*) FROM message WHERE account_id = $1 AND seen_at IS NULL", account_id)

    # at the upstream: one marked unread, one new, one deleted; the next sync brings all three
    upstream = up.emails()
    up.call("Email/set", {"update": {upstream["Inbox 3"]["id"]: {"keywords/$seen": None}}})
    up.call("Email/set", {"destroy": [upstream["Inbox 0"]["id"]]})
    up.deliver(make_message(subject="Fresh news", message_id=f"fresh-{up.email}", to=[up.email]))
    await services.sync.run(account_id)
    ids = await _ids(services, account_id)
    assert "Inbox 0" not in ids and "Fresh news" in ids
    assert await _labels_of(services, ids["Fresh news"]) == {"Inbox"}
    unread = await services.db.fetch("SELECT subject FROM message WHERE account_id = $1 AND seen_at IS NULL",
                                     account_id)
    assert sorted(r["subject"] for r in unread) == ["Fresh news", "Inbox 3"]

    # here: unread, starred, trashed, filed under Projects, archived; all of it reaches the upstream
    ops = services.operations
    projects = await services.labels.find_path(user_id, "Projects")
    assert projects is not None
    await ops.set_seen(user_id, False, message_ids=[ids["Inbox 5"]])
    await ops.set_starred(user_id, True, message_ids=[ids["Inbox 6"]])
    await ops.trash(user_id, message_ids=[ids["Inbox 7"]])
    await ops.move_to_label(user_id, projects, message_ids=[ids["Inbox 8"]])
    await ops.archive(user_id, message_ids=[ids["Inbox 9"]])
    assert await services.propagation.run(account_id) > 0
    assert not await services.db.fetchval(
        "SELECT count(*) FROM provider_change WHERE account_id = $1 AND done_at IS NULL", account_id)
    boxes = {m["id"]: (m.get("role") or m["name"]) for m in up.mailboxes().values()}
    after = up.emails()

    def where(subject: str) -> set[str]:
        return {boxes[m] for m, on in after[subject]["mailboxIds"].items() if on}

    assert "$seen" not in after["Inbox 5"]["keywords"] and after["Inbox 4"]["keywords"]["$seen"] is True
    assert after["Inbox 6"]["keywords"].get("$flagged") is True
    assert where("Inbox 7") == {"trash"}
    assert where("Inbox 8") == {"Projects"}
    assert where("Inbox 9") == {"archive"}
    assert where("Inbox 10") == {"inbox"}

    # and the upstream's echo of those changes leaves them as they are here
    await services.sync.run(account_id)
    assert await _labels_of(services, ids["Inbox 7"]) == {"Trash"}
    assert await _labels_of(services, ids["Inbox 8"]) == {"Projects"}

    # an upstream that cannot tell what changed since the state we hold (RFC 8620 §5.2 cannotCalculateChanges):
    # what it no longer has goes here, and the rest is walked again with its state applied, nothing stored twice
    await services.db.execute(
        """UPDATE account SET sync_state = jsonb_set(sync_state, '{jmap,email_state}', '"not-from-this-server"')
            WHERE id = $1""", account_id)
    now = up.emails()
    up.call("Email/set", {"destroy": [now["Inbox 11"]["id"]],
                          "update": {now["Inbox 10"]["id"]: {"keywords/$flagged": True}}})
    await services.sync.run_until_done(account_id)
    ids = await _ids(services, account_id)
    assert "Inbox 11" not in ids and len(ids) == 14
    starred = await services.db.fetch(
        "SELECT subject FROM message WHERE account_id = $1 AND starred_at IS NOT NULL", account_id)
    assert sorted(r["subject"] for r in starred) == ["Inbox 10", "Inbox 6"]

    # "Delete forever" destroys the Email at the upstream too (RFC 8621 §4.6), and the next sync brings nothing back
    gone = await services.destroyer.destroy(user_id, [ids["Inbox 10"]])
    assert gone.destroyed == (ids["Inbox 10"],) and not gone.refused
    assert "Inbox 10" not in await _ids(services, account_id)
    await services.propagation.run(account_id)
    assert "Inbox 10" not in up.emails()
    await services.sync.run(account_id)
    assert "Inbox 10" not in await _ids(services, account_id)


async def test_a_message_is_sent_through_the_upstreams_email_submission(
    services: Services, upstream_server: UpstreamServer, tmp_path: Path, dovecot_user: DovecotUser,
    smtp: SmtpServer,
) -> None:
    up = make_upstream_user(upstream_server, tmp_path, inbox=1, projects=0)
    sender = upstream_sends_through(upstream_server, up, dovecot_user, smtp)
    user_id, account_id = await _downstream(services, up)
    await services.sync.run_until_done(account_id)

    # its identities are the upstream's Identity/get
    identities = {i.email: i for i in await services.identities.for_account(user_id, account_id)}
    assert sender in identities
    content = DraftContent(identity_id=identities[sender].id, to=(Address("Bea Berg", "bea@example.net"),),
                           bcc=(Address("", "hidden@example.net"),), subject="Through JMAP",
                           text_body="Sent by the upstream.\n")
    saved = await services.drafts.save(user_id, content)
    submission = await services.outbox.submit(user_id, saved.message_id, content.identity_id)
    await services.outbox.deliver(submission.id)
    assert (await services.outbox.owned(user_id, submission.id)).state.value == "sent"

    # the upstream's worker hands it to its SMTP server, to every recipient and without the Bcc header
    [received] = await smtp.arrival(1, timeout=60)
    assert received.message["Subject"] == "Through JMAP"
    assert sorted(received.rcpt_to) == ["bea@example.net", "hidden@example.net"]
    assert received.message["Bcc"] is None
    # filed in the upstream's Sent, and the next sync adopts that copy instead of storing it twice
    sent = up.emails()["Through JMAP"]
    boxes = {m["id"]: (m.get("role") or m["name"]) for m in up.mailboxes().values()}
    assert {boxes[m] for m, on in sent["mailboxIds"].items() if on} == {"sent"}
    assert "$draft" not in sent["keywords"]
    await services.sync.run(account_id)
    copies = await services.db.fetchval(
        "SELECT count(*) FROM message WHERE account_id = $1 AND subject = 'Through JMAP'", account_id)
    assert copies == 1


async def test_new_mail_at_the_upstream_is_pushed_by_its_event_source(
    services: Services, upstream_server: UpstreamServer, tmp_path: Path,
) -> None:
    up = make_upstream_user(upstream_server, tmp_path, inbox=2, projects=0)
    _, account_id = await _downstream(services, up)
    await services.sync.run_until_done(account_id)
    await services.db.execute("DELETE FROM saq_jobs")
    [watcher] = [w for w in services.provider_roles.watchers if isinstance(w, EventSourceWatcher)]
    watcher.refresh_seconds = 0.1
    watcher.start()
    try:
        await _until(lambda: account_id in watcher.listening, "the event stream to open")
        up.deliver(make_message(subject="Pushed", message_id=f"pushed-{up.email}", to=[up.email]))

        async def sync_queued() -> bool:
            return bool(await services.db.fetchval(
                """SELECT count(*) FROM saq_jobs WHERE status = 'queued'
                      AND convert_from(job, 'UTF8')::jsonb ->> 'function' = 'sync_account'"""))

        await _until(sync_queued, "a sync asked for by the upstream's StateChange")
    finally:
        await watcher.stop()
    assert await run_queued(services, ("sync_account",)) == ["sync_account"]
    assert "Pushed" in await _ids(services, account_id)


async def _until(check: Callable[[], Any], what: str, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if inspect.isawaitable(value):
            value = await value
        if value:
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"no {what} within {timeout} s")


async def test_a_draft_is_kept_once_in_the_upstreams_drafts_and_goes_when_sent(
    services: Services, upstream_server: UpstreamServer, tmp_path: Path, dovecot_user: DovecotUser,
    smtp: SmtpServer,
) -> None:
    up = make_upstream_user(upstream_server, tmp_path, inbox=1, projects=0)
    sender = upstream_sends_through(upstream_server, up, dovecot_user, smtp)
    user_id, account_id = await _downstream(services, up)
    await services.sync.run_until_done(account_id)
    identity = {i.email: i for i in await services.identities.for_account(user_id, account_id)}[sender]
    content = DraftContent(identity_id=identity.id, to=(Address("Bea Berg", "bea@example.net"),),
                           subject="Half written", text_body="First words.\n")

    # saved twice: one draft at the upstream, the newer one, marked as a draft (RFC 8621 §4.1.1 $draft)
    first = await services.drafts.save(user_id, content)
    await run_queued(services, ("push_draft", "discard_draft"))
    assert _in(up, "drafts")["Half written"]["keywords"].get("$draft") is True
    second = await services.drafts.save(user_id, dataclasses.replace(content, text_body="More words.\n"),
                                        replaces=first.message_id)
    await run_queued(services, ("push_draft", "discard_draft"))
    kept = _in(up, "drafts")
    assert list(kept) == ["Half written"] and "More words" in kept["Half written"]["preview"]
    # the upstream's copy is the draft plmail has, not a second message
    await services.sync.run(account_id)
    copies = await services.db.fetchval(
        "SELECT count(*) FROM message WHERE account_id = $1 AND subject = 'Half written'", account_id)
    assert copies == 1

    # sent: gone from the upstream's Drafts, once in its Sent, once here
    submission = await services.outbox.submit(user_id, second.message_id, identity.id)
    await services.outbox.deliver(submission.id)
    await run_queued(services, ("file_sent_copy", "push_draft", "discard_draft"))
    [received] = await smtp.arrival(1, timeout=60)
    assert received.message["Subject"] == "Half written"
    assert "Half written" not in _in(up, "drafts")
    assert "$draft" not in _in(up, "sent")["Half written"]["keywords"]
    await services.sync.run(account_id)
    copies = await services.db.fetchval(
        "SELECT count(*) FROM message WHERE account_id = $1 AND subject = 'Half written'", account_id)
    assert copies == 1
