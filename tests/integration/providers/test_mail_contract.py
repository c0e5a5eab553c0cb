"""The mail contract every provider keeps (issue 31), run over IMAP, Gmail, Graph and JMAP accounts alike: new
mail at the provider arrives here once; what the user does here (read, star, archive, delete) reaches the
provider and its echo changes nothing; what another client does there (read, star, delete for good) comes back
on the next sync; a message sent here goes out through the provider once, to every recipient, without its Bcc
header, and its Sent copy is kept once."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from email import message_from_bytes
from email import policy as email_policy

from plmail.domain.messages import Address
from plmail.domain.outgoing import DraftContent, SubmissionState
from tests.integration.providers.conftest import Connected, Remote
from tests.support.mail import make_message


def _mail(subject: str, n: int = 0) -> bytes:
    return make_message(subject=subject, message_id=f"{uuid.uuid4().hex}@contract.example",
                        sender="Carol <carol@example.net>", to=["owner@example.org"],
                        date=datetime.now(UTC) - timedelta(minutes=10 - n))


async def _sync(c: Connected) -> None:
    await c.services.sync.run_until_done(c.account_id)
    await c.services.sync.run(c.account_id)  # what a sync judges only once the import is in


async def _local(c: Connected) -> dict[str, tuple[set[str], bool, bool]]:
    """Subject -> (role or name of each label, read, starred) as plmail holds the account's mail."""
    rows = await c.services.db.fetch(
        """SELECT m.subject, m.seen_at IS NOT NULL AS seen, m.starred_at IS NOT NULL AS starred,
                  array_remove(array_agg(coalesce(l.role, l.name)), NULL) AS labels
             FROM message m LEFT JOIN message_label ml ON ml.message_id = m.id
             LEFT JOIN label l ON l.id = ml.label_id
            WHERE m.account_id = $1 AND m.vanished_at IS NULL
            GROUP BY m.id""", c.account_id)
    found: dict[str, tuple[set[str], bool, bool]] = {}
    for r in rows:
        assert r["subject"] not in found, f"{r['subject']} is stored twice"
        found[r["subject"]] = (set(r["labels"]), r["seen"], r["starred"])
    return found


async def _ids(c: Connected) -> dict[str, int]:
    rows = await c.services.db.fetch(
        "SELECT id, subject FROM message WHERE account_id = $1 AND vanished_at IS NULL", c.account_id)
    return {r["subject"]: r["id"] for r in rows}


async def test_new_mail_at_the_provider_arrives_once_in_the_inbox(connected: Connected) -> None:
    for n in range(3):
        connected.side.deliver(_mail(f"Arrival {n}", n))
    await _sync(connected)
    local = await _local(connected)
    assert {s for s in local if s.startswith("Arrival")} == {"Arrival 0", "Arrival 1", "Arrival 2"}
    assert all(local[f"Arrival {n}"] == ({"inbox"}, False, False) for n in range(3)), local

    connected.side.deliver(_mail("Arrival 3", 3))
    await _sync(connected)
    await _sync(connected)
    again = await _local(connected)
    assert {s for s in again if s.startswith("Arrival")} == {f"Arrival {n}" for n in range(4)}


async def test_what_the_user_does_here_reaches_the_provider_and_its_echo_changes_nothing(
        connected: Connected) -> None:
    subjects = ["Read me", "Star me", "Archive me", "Delete me", "Leave me"]
    for n, subject in enumerate(subjects):
        connected.side.deliver(_mail(subject, n))
    await _sync(connected)
    ids = await _ids(connected)
    ops = connected.services.operations
    user = connected.user.id
    await ops.set_seen(user, True, message_ids=[ids["Read me"]])
    await ops.set_starred(user, True, message_ids=[ids["Star me"]])
    await ops.archive(user, message_ids=[ids["Archive me"]])
    await ops.trash(user, message_ids=[ids["Delete me"]])

    assert await connected.services.propagation.run(connected.account_id) > 0
    pending = await connected.services.db.fetchval(
        "SELECT count(*) FROM provider_change WHERE account_id = $1 AND done_at IS NULL", connected.account_id)
    assert pending == 0
    side = connected.side
    assert side.remote("Read me") == Remote("inbox", seen=True, starred=False)
    assert side.remote("Star me") == Remote("inbox", seen=False, starred=True)
    assert side.remote("Archive me") == Remote("archive", seen=False, starred=False)
    assert side.remote("Delete me") == Remote("trash", seen=False, starred=False)
    assert side.remote("Leave me") == Remote("inbox", seen=False, starred=False)

    await _sync(connected)
    local = await _local(connected)
    assert local["Read me"] == ({"inbox"}, True, False)
    assert local["Star me"][1:] == (False, True) and "inbox" in local["Star me"][0]
    assert local["Archive me"] == ({"archive"}, False, False)
    assert local["Delete me"] == ({"trash"}, False, False)
    assert local["Leave me"] == ({"inbox"}, False, False)


async def test_what_another_client_does_at_the_provider_comes_back(connected: Connected) -> None:
    for n, subject in enumerate(["Marked there", "Deleted there", "Untouched"]):
        connected.side.deliver(_mail(subject, n))
    await _sync(connected)
    assert set(await _local(connected)) >= {"Marked there", "Deleted there", "Untouched"}

    connected.side.mark("Marked there")
    connected.side.delete("Deleted there")
    assert connected.side.remote("Deleted there") is None
    await _sync(connected)
    local = await _local(connected)
    assert local["Marked there"][1:] == (True, True)
    assert "Deleted there" not in local
    assert local["Untouched"] == ({"inbox"}, False, False)


async def test_a_message_is_sent_through_the_provider_once_to_every_recipient_without_its_bcc(
        connected: Connected) -> None:
    connected.side.deliver(_mail("Before sending"))
    await _sync(connected)
    services, user_id = connected.services, connected.user.id
    identities = {i.email.lower(): i for i in await services.identities.for_account(user_id, connected.account_id)}
    identity = identities[connected.side.address.lower()]
    content = DraftContent(identity_id=identity.id, to=(Address("Bea Berg", "bea@example.net"),),
                           bcc=(Address("", "hidden@example.net"),), subject="Contract send",
                           text_body="Sent through the account's own provider.\n")
    saved = await services.drafts.save(user_id, content)
    submission = await services.outbox.submit(user_id, saved.message_id, content.identity_id)
    await services.outbox.deliver(submission.id)
    assert (await services.outbox.owned(user_id, submission.id)).state is SubmissionState.SENT

    [(recipients, received)] = await connected.side.delivered("Contract send")
    assert recipients == {"bea@example.net", "hidden@example.net"}
    message = message_from_bytes(received, policy=email_policy.compat32)
    assert message["Bcc"] is None and "hidden@example.net" not in received.decode(errors="replace")
    assert connected.side.address.lower() in (message["From"] or "").lower()

    # the provider's Sent copy comes back once, where the draft was: no draft left, no second copy
    await _sync(connected)
    local = await _local(connected)
    assert local["Contract send"][0] == {"sent"}
    drafts = await services.db.fetchval(
        "SELECT count(*) FROM message WHERE account_id = $1 AND subject = 'Contract send' AND vanished_at IS NULL",
        connected.account_id)
    assert drafts == 1
