"""Sending through Cyrus when its SMTP relay refuses for now: Cyrus hands the relay's 4xx on as a `forbiddenToSend`
SetError whose description is the reply ("4.3.2 Service not available, try again later"). A 4xx is a transient
failure (RFC 5321 §4.2.1), so the send is tried again and goes out once, instead of being given up for good."""

from __future__ import annotations

import pytest

from plmail.domain.messages import Address
from plmail.domain.outgoing import DraftContent, SendError, SubmissionState
from tests.integration.providers.conftest import Connected, JmapSide


@pytest.mark.parametrize("provider", ["jmap-cyrus"])
async def test_a_temporary_refusal_by_cyruss_relay_is_tried_again_and_sent_once(connected: Connected) -> None:
    side = connected.side
    assert isinstance(side, JmapSide)
    services, user_id = connected.services, connected.user.id
    await services.sync.run_until_done(connected.account_id)
    [identity] = [i for i in await services.identities.for_account(user_id, connected.account_id)
                  if i.email.lower() == side.address.lower()]
    content = DraftContent(identity_id=identity.id, to=(Address("Bea Berg", "bea@example.net"),),
                           subject="Through a busy relay", text_body="Sent once the relay takes it.\n")
    saved = await services.drafts.save(user_id, content)
    submission = await services.outbox.submit(user_id, saved.message_id, identity.id)

    side.smtp.faults.temporary_failures = 1
    with pytest.raises(SendError) as first:
        await services.outbox.deliver(submission.id)
    assert first.value.retryable, first.value
    waiting = await services.outbox.owned(user_id, submission.id)
    assert waiting.state is SubmissionState.PENDING and "4.3.2" in (waiting.last_error or "")
    assert side.smtp.received == []

    assert await services.outbox.deliver(submission.id) == "sent"
    [(recipients, _)] = await side.delivered("Through a busy relay")
    assert recipients == {"bea@example.net"}
    # the refused try left nothing behind at Cyrus: one copy, in Sent
    ids = side.up.call("Email/query", {})["ids"]
    copies = [e for e in side.up.call("Email/get", {"ids": ids, "properties": ["subject", "mailboxIds"]})["list"]
              if e["subject"] == "Through a busy relay"]
    sent = side.up.mailboxes()["sent"]["id"]
    assert [set(c["mailboxIds"]) for c in copies] == [{sent}], copies
