"""Destroy is destroy on Dovecot (RFC 8621 §4.6): \\Deleted and UID EXPUNGE in the folder holding the message (a
plain EXPUNGE without UIDPLUS), gone for a second IMAP connection and never back after the next sync; and every
keyword: $answered, $forwarded and a custom keyword set in plmail appear as flags on the server, a keyword
another client sets appears in plmail after a sync. Checked with a second, independent IMAP connection."""

from __future__ import annotations

import httpx
import pytest

from plmail.domain.enums import LabelRole
from tests.integration.imap_sync.conftest import ImapSetup, message_ids
from tests.support.imap_mail import message
from tests.support.jobs import queued


async def _setup(imap: ImapSetup, *seqs: int) -> dict[int, int]:
    imap.mail.deliver([message(i) for i in seqs])
    await imap.sync_all()
    return {n: await imap.message_id_of(f"seq-{n}@plmail.test") for n in seqs}


@pytest.mark.parametrize("uidplus", [True, False], ids=["UID EXPUNGE", "EXPUNGE"])
async def test_destroy_from_trash_removes_it_from_dovecot_and_it_never_returns(imap: ImapSetup,
                                                                              uidplus: bool) -> None:
    if not uidplus:
        await imap.services.db.execute(
            "UPDATE account SET settings = jsonb_set(settings, '{imap,ignore_capabilities}', '[\"UIDPLUS\"]') "
            "WHERE id = $1", imap.account_id)
    ids = await _setup(imap, 1, 2, 3)
    user = imap.user.id
    await imap.services.operations.trash(user, message_ids=[ids[1], ids[2]])
    await imap.propagate()
    with imap.mail.peer() as peer:
        assert {"seq-1@plmail.test", "seq-2@plmail.test"} <= message_ids(peer.conn, "Trash")
    await imap.services.db.execute("DELETE FROM saq_jobs")  # the move's job ran above (propagate)

    outcome = await imap.services.destroyer.destroy(user, [ids[1]])
    assert outcome.destroyed == (ids[1],) and outcome.refused == {}
    assert await imap.count("id = $2", ids[1]) == 0  # gone from plmail at once
    assert [f for f, _ in await queued(imap.services, ["propagate_provider_changes"])] == \
        ["propagate_provider_changes"]
    await imap.propagate()
    with imap.mail.peer() as peer:  # a second connection no longer finds it; its neighbour stays
        in_trash = message_ids(peer.conn, "Trash")
    assert "seq-1@plmail.test" not in in_trash and "seq-2@plmail.test" in in_trash
    await imap.sync_all()
    assert await imap.count("rfc_message_id = 'seq-1@plmail.test'") == 0  # the next sync does not bring it back
    assert await imap.count("rfc_message_id = 'seq-2@plmail.test'") == 1
    pending = await imap.services.db.fetchval(
        "SELECT count(*) FROM message_tombstone WHERE account_id = $1 AND done_at IS NULL", imap.account_id)
    assert pending == 0


async def test_a_destroyed_message_the_server_still_lists_is_not_stored_again(imap: ImapSetup) -> None:
    """Between the local delete and the server's expunge a sync still sees the message: it stays out."""
    ids = await _setup(imap, 4)
    await imap.services.destroyer.destroy(imap.user.id, [ids[4]])
    await imap.services.db.execute("DELETE FROM saq_jobs")  # the deletion at the server has not run yet
    imap.mail.deliver([message(5)])
    await imap.sync_all()
    assert await imap.count("rfc_message_id = 'seq-4@plmail.test'") == 0
    assert await imap.count("rfc_message_id = 'seq-5@plmail.test'") == 1
    with imap.mail.peer() as peer:
        assert "seq-4@plmail.test" in message_ids(peer.conn, "INBOX")
    await imap.propagate()
    with imap.mail.peer() as peer:
        assert "seq-4@plmail.test" not in message_ids(peer.conn, "INBOX")


async def test_keywords_reach_dovecot_as_flags_and_come_back(imap: ImapSetup) -> None:
    ids = await _setup(imap, 6, 7)
    writer = imap.services.operations
    user = imap.user.id
    for keyword in ("$answered", "$forwarded", "project-x"):
        await writer.set_keyword(user, [ids[6]], keyword, True)
    await imap.propagate()
    with imap.mail.peer() as peer:
        uid = next(u for u in peer.uids("INBOX") if b"seq-6@plmail.test" in peer.raw(u, "INBOX"))
        flags = peer.flags(uid, "INBOX")
        assert {"\\Answered", "$Forwarded", "project-x"} <= flags  # RFC 8621 §4.1.1 keywords as IMAP flags
        other = next(u for u in peer.uids("INBOX") if b"seq-7@plmail.test" in peer.raw(u, "INBOX"))
        peer.store(other, "+FLAGS", "(Urgent $Forwarded)")  # another client
    await imap.sync()
    stored = await imap.services.db.fetchval("SELECT flags FROM message WHERE id = $1", ids[7])
    assert "Urgent" in stored and "$Forwarded" in stored
    await writer.set_keyword(user, [ids[6]], "$answered", False)
    await imap.propagate()
    with imap.mail.peer() as peer:
        assert "\\Answered" not in peer.flags(uid, "INBOX") and "project-x" in peer.flags(uid, "INBOX")


async def test_jmap_keywords_on_an_imap_account(imap: ImapSetup, client: httpx.AsyncClient) -> None:
    """The same through JMAP, in the unified account: the keywords a phone sets are the server's flags."""
    ids = await _setup(imap, 8)
    token = (await imap.services.app_passwords.create(imap.user.id, "Phone")).token
    body = {"using": ["urn:ietf:params:jmap:core", "urn:ietf:params:jmap:mail"], "methodCalls": [
        ["Email/set", {"accountId": f"u{imap.user.id}", "update": {str(ids[8]): {
            "keywords/$answered": True, "keywords/$forwarded": True, "keywords/Client-Tag": True}}}, "s"],
        ["Email/get", {"accountId": f"u{imap.user.id}", "ids": [str(ids[8])], "properties": ["keywords"]}, "g"]]}
    answer = (await client.post("/jmap/api", json=body, headers={"Authorization": f"Bearer {token}"})).json()
    updated, got = answer["methodResponses"][0][1], answer["methodResponses"][1][1]
    assert updated["updated"] == {str(ids[8]): None}
    assert got["list"][0]["keywords"] == {"$answered": True, "$forwarded": True, "client-tag": True}
    await imap.propagate()
    with imap.mail.peer() as peer:
        uid = next(u for u in peer.uids("INBOX") if b"seq-8@plmail.test" in peer.raw(u, "INBOX"))
        assert {"\\Answered", "$Forwarded", "client-tag"} <= peer.flags(uid, "INBOX")
    labels = await imap.labels_of("seq-8@plmail.test")
    assert labels == {LabelRole.INBOX.value}
