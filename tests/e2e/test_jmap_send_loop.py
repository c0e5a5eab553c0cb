"""jmapc, a real JMAP client, through a whole mail loop against a running `plmail serve` (issue 35): it reads a
message that arrived in an IMAP account, writes a reply as a draft in the unified account, sends it with
EmailSubmission/set (onSuccessUpdateEmail: Drafts → Sent), sees undoStatus go from pending to final when the SMTP
server took it, and reads the correspondent's answer in the same thread."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
from jmapc import (
    Email,
    EmailAddress,
    EmailBodyPart,
    EmailBodyValue,
    EmailQueryFilterCondition,
    EmailSubmission,
    Ref,
    UndoStatus,
)
from jmapc.methods import (
    EmailChanges,
    EmailGet,
    EmailQuery,
    EmailSet,
    EmailSubmissionGet,
    EmailSubmissionSet,
    EmailSubmissionSetResponse,
    IdentityGet,
    MailboxGet,
    ThreadGet,
)

from plmail.config import Settings
from plmail.domain.enums import LabelRole
from plmail.mail.ingest import parse_message
from tests.e2e.test_jmap_client import LoopbackClient
from tests.integration.sending.conftest import Outgoing, dovecot, dovecot_user, outgoing, smtp, smtp_server
from tests.support.jobs import run_queued
from tests.support.mail import make_message
from tests.support.serve import ServeProcess

__all__ = ["dovecot", "dovecot_user", "outgoing", "smtp", "smtp_server"]


@pytest.fixture
def live(settings: Settings, database_url: str) -> Iterator[ServeProcess]:
    server = ServeProcess(settings.data_dir, database_url=database_url, args=["--queues", ""]).start()
    try:
        server.wait_healthy()
        yield server
    finally:
        server.terminate()


async def _arrives(outgoing: Outgoing, raw: bytes) -> int:
    inbox = (await outgoing.services.labels.role_ids(outgoing.user.id))[LabelRole.INBOX]
    result = await outgoing.services.pipeline.ingest([parse_message(raw, account_id=outgoing.account_id,
                                                                    label_ids=(inbox,))])
    return result.messages[0].id


async def test_read_draft_send_and_the_reply_with_jmapc(outgoing: Outgoing, live: ServeProcess) -> None:
    token = (await outgoing.services.app_passwords.create(outgoing.user.id, "jmapc")).token
    client = LoopbackClient.create_with_api_token(host=f"127.0.0.1:{live.port}", api_token=token)
    await _arrives(outgoing, make_message(message_id="question@example.net", subject="Dinner on Friday?",
                                          sender="Bea Berg <bea@example.net>", to=[outgoing.address],
                                          body="Shall we meet at eight?\n"))

    # read
    mailboxes = await asyncio.to_thread(client.request, MailboxGet(ids=None))
    roles = {m.role: m for m in mailboxes.data}
    _, got = await asyncio.to_thread(client.request, [
        EmailQuery(filter=EmailQueryFilterCondition(in_mailbox=roles["inbox"].id)),
        EmailGet(ids=Ref("/ids"), properties=["subject", "from", "messageId", "threadId", "textBody", "bodyValues"],
                 fetch_text_body_values=True)])
    [question] = got.response.data
    assert question.subject == "Dinner on Friday?"
    assert question.body_values is not None
    assert [v.value for v in question.body_values.values()] == ["Shall we meet at eight?\n"]
    seen = await asyncio.to_thread(client.request, EmailSet(update={question.id: {"keywords/$seen": True}}))
    assert seen.updated == {question.id: None}

    # draft
    [identity] = (await asyncio.to_thread(client.request, IdentityGet())).data
    assert identity.email == outgoing.address
    drafted = await asyncio.to_thread(client.request, EmailSet(create={"reply": Email(
        mailbox_ids={roles["drafts"].id: True}, keywords={"$draft": True, "$seen": True},
        mail_from=[EmailAddress(name="Owner", email=identity.email)],
        to=[EmailAddress(name="Bea Berg", email="bea@example.net")], subject="Re: Dinner on Friday?",
        in_reply_to=question.message_id, references=question.message_id,
        text_body=[EmailBodyPart(part_id="t", type="text/plain")],
        body_values={"t": EmailBodyValue(value="Eight is fine.\n")})}))
    assert drafted.created is not None, drafted.not_created
    reply_id = drafted.created["reply"].id
    assert reply_id is not None

    # send
    submitted = await asyncio.to_thread(client.request, EmailSubmissionSet(
        create={"send": EmailSubmission(identity_id=identity.id, email_id=reply_id)},
        on_success_update_email={"#send": {f"mailboxIds/{roles['drafts'].id}": None,
                                           f"mailboxIds/{roles['sent'].id}": True, "keywords/$draft": None}}))
    # jmapc answers with the submission's response and the implicit Email/set's that follows it (RFC 8621 §7.5)
    assert isinstance(submitted, list) and len(submitted) == 2, submitted
    first = submitted[0]
    assert isinstance(first, EmailSubmissionSetResponse)
    assert first.created is not None, first.not_created
    submission = first.created["send"]
    assert submission.undo_status is UndoStatus.PENDING  # until the SMTP server took it
    await run_queued(outgoing.services, ("send_submission", "push_draft", "file_sent_copy"))
    [received] = outgoing.smtp.wait_for(1)
    assert received.message["Subject"] == "Re: Dinner on Friday?"
    assert received.message["In-Reply-To"].strip() == "<question@example.net>"
    after = await asyncio.to_thread(client.request, EmailSubmissionGet(ids=[submission.id]))
    assert after.data[0].undo_status is UndoStatus.FINAL
    sent = await asyncio.to_thread(client.request, EmailGet(ids=[reply_id], properties=["mailboxIds", "keywords"]))
    assert sent.data[0].mailbox_ids == {roles["sent"].id: True} and "$draft" not in (sent.data[0].keywords or {})
    state = (await asyncio.to_thread(client.request, EmailGet(ids=[]))).state

    # the reply to it
    rfc_id = received.message["Message-ID"].strip()[1:-1]
    answer = await _arrives(outgoing, make_message(
        message_id="answer@example.net", subject="Re: Dinner on Friday?", sender="Bea Berg <bea@example.net>",
        to=[outgoing.address], in_reply_to=rfc_id, references=["question@example.net", rfc_id],
        date=datetime.now(UTC) + timedelta(minutes=1), body="See you then!\n"))
    changes = await asyncio.to_thread(client.request, EmailChanges(since_state=state))
    assert changes.created == [str(answer)]
    thread = await asyncio.to_thread(client.request, ThreadGet(ids=[question.thread_id]))
    assert thread.data[0].email_ids == [question.id, reply_id, str(answer)]
