"""Destroy is destroy at Gmail (RFC 8621 §4.6): users.messages.delete, which needs the full mail scope. An account
connected with gmail.modify only is refused with that reason (nothing is trashed or deleted); once reconnected
with full access the message goes at Gmail and does not return on the next sync."""

from __future__ import annotations

import httpx

from plmail.providers.gmail.destroyer import NEEDS_FULL_SCOPE
from plmail.providers.oauth import GOOGLE_SCOPES
from tests.integration.gmail.conftest import GmailSetup, connect_account
from tests.support.fakes import rfc822


async def test_without_full_access_the_delete_is_refused_and_says_why(gmail: GmailSetup) -> None:
    kept = gmail.mailbox.add_message(rfc822("Keep me"), label_ids=("TRASH",)).id
    await gmail.sync()
    await gmail.import_all()
    message_id = await gmail.message_id(kept)
    outcome = await gmail.services.destroyer.destroy(gmail.user.id, [message_id])
    assert outcome.destroyed == () and outcome.refused == {message_id: NEEDS_FULL_SCOPE}
    assert "full mail access" in NEEDS_FULL_SCOPE and "Reconnect" in NEEDS_FULL_SCOPE
    assert await gmail.count("id = $2", message_id) == 1
    assert kept in gmail.mailbox.messages and set(gmail.mailbox.messages[kept].label_ids) == {"TRASH"}


async def test_with_full_access_it_is_deleted_at_gmail_and_never_comes_back(gmail: GmailSetup) -> None:
    assert "https://mail.google.com/" in GOOGLE_SCOPES  # what plmail asks for when an account connects
    again = await connect_account(gmail.services, gmail.user, gmail.fake, scope=" ".join(GOOGLE_SCOPES))
    assert again == gmail.account_id  # the reconnect updates the account's grant
    doomed = gmail.mailbox.add_message(rfc822("Delete me"), label_ids=("TRASH",)).id
    other = gmail.mailbox.add_message(rfc822("Stay"), label_ids=("INBOX",)).id
    await gmail.sync()
    await gmail.import_all()
    message_id = await gmail.message_id(doomed)
    outcome = await gmail.services.destroyer.destroy(gmail.user.id, [message_id])
    assert outcome.destroyed == (message_id,) and outcome.refused == {}
    await gmail.propagate()
    deletes = [c for c in gmail.fake.calls if c.method == "users.messages.delete"]
    assert [c.status for c in deletes] == [204]
    assert doomed not in gmail.mailbox.messages and other in gmail.mailbox.messages
    await gmail.sync()
    assert doomed not in await gmail.gmail_ids() and other in await gmail.gmail_ids()


async def test_a_grant_without_the_scope_is_refused_by_gmail_too(gmail: GmailSetup) -> None:
    """The fake follows the published rule: even if plmail asked, gmail.modify cannot delete."""
    doomed = gmail.mailbox.add_message(rfc822("Try"), label_ids=("TRASH",)).id
    await gmail.sync()
    await gmail.import_all()
    async with httpx.AsyncClient(base_url=gmail.server.url) as http:
        response = await http.delete(f"/gmail/v1/users/me/messages/{doomed}", headers=gmail.fake.auth_headers())
    assert response.status_code == 403
    assert response.json()["error"]["errors"][0]["reason"] == "insufficientPermissions"
    assert doomed in gmail.mailbox.messages
