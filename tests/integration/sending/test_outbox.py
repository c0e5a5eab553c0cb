"""The outbox against a real SMTP server: undo inside the delay, a scheduled send at its time, temporary and
permanent failures, a connection lost after the final dot, a wrong password, two workers racing, and the
refusals (header injection, a From the user does not own, too many recipients, the rate limit)."""

from __future__ import annotations

import asyncio
import dataclasses
from datetime import UTC, datetime, timedelta

import pytest

from plmail.config import Settings
from plmail.domain.errors import ForbiddenError, ValidationError
from plmail.domain.messages import Address
from plmail.domain.outgoing import SendError, SubmissionRefused, SubmissionState
from plmail.providers.imap.accounts import ImapAccountService
from plmail.services import open_services
from tests.integration.sending.conftest import Outgoing, add_sending_account
from tests.support.jobs import queued
from tests.support.smtp import SmtpServer


async def in_drafts(outgoing: Outgoing, message_id: int) -> bool:
    return bool(await outgoing.services.db.fetchval(
        """SELECT EXISTS (SELECT 1 FROM message m JOIN message_label ml ON ml.message_id = m.id
             JOIN label l ON l.id = ml.label_id WHERE m.id = $1 AND l.role = 'drafts' AND m.flags ? '$draft')""",
        message_id))


async def submit(outgoing: Outgoing, **options: object) -> tuple[int, int]:
    """A saved draft put in the outbox; (message id, submission id)."""
    content = await outgoing.content()
    saved = await outgoing.save(content)
    submission = await outgoing.services.outbox.submit(outgoing.user.id, saved.message_id, content.identity_id,
                                                       **options)  # type: ignore[arg-type]
    return saved.message_id, submission.id


async def test_undo_inside_the_delay_sends_nothing_and_keeps_the_draft(outgoing: Outgoing) -> None:
    delay = await outgoing.services.outbox.undo_delay(outgoing.user.id)
    assert delay == 10  # the default
    message_id, submission_id = await submit(outgoing, send_at=datetime.now(UTC) + timedelta(seconds=delay))
    # The send job waits for the end of the undo window.
    [(_, args)] = await queued(outgoing.services, ["send_submission"])
    assert args == {"submission_id": submission_id}
    canceled = await outgoing.services.outbox.cancel(outgoing.user.id, submission_id)
    assert canceled.state is SubmissionState.CANCELED and canceled.undo_status == "canceled"
    # Its job still runs at the end of the window and finds nothing to send.
    assert await outgoing.services.outbox.deliver(submission_id) == "canceled"
    assert outgoing.smtp.received == []
    assert await in_drafts(outgoing, message_id)
    with pytest.raises(SubmissionRefused) as refused:
        await outgoing.services.outbox.cancel(outgoing.user.id, submission_id)
    assert refused.value.reason == "cannotUnsend"


async def test_a_scheduled_send_goes_at_its_time_and_not_before(outgoing: Outgoing) -> None:
    when = datetime.now(UTC) + timedelta(seconds=1.5)  # a short clock instead of minutes
    message_id, submission_id = await submit(outgoing, send_at=when)
    listed = await outgoing.services.outbox.outbox(outgoing.user.id)
    assert [e.submission.id for e in listed] == [submission_id] and listed[0].submission.undo_status == "pending"
    assert await outgoing.services.outbox.deliver(submission_id) == "pending"  # woken early: it waits
    assert outgoing.smtp.received == []
    await asyncio.sleep(max((when - datetime.now(UTC)).total_seconds(), 0) + 0.1)
    assert await outgoing.services.outbox.deliver(submission_id) == "sent"
    [received] = outgoing.smtp.wait_for(1)
    assert received.at > 0 and not await in_drafts(outgoing, message_id)


async def test_a_send_more_than_thirty_days_ahead_is_refused(outgoing: Outgoing) -> None:
    with pytest.raises(ValidationError):
        await submit(outgoing, send_at=datetime.now(UTC) + timedelta(days=30, minutes=1))


async def test_a_421_is_tried_again_and_sent_once(outgoing: Outgoing) -> None:
    outgoing.smtp.faults.temporary_failures = 1
    message_id, submission_id = await submit(outgoing)
    with pytest.raises(SendError) as first:
        await outgoing.services.outbox.deliver(submission_id)
    assert first.value.retryable  # saq tries again, with backoff
    waiting = await outgoing.services.outbox.owned(outgoing.user.id, submission_id)
    assert waiting.state is SubmissionState.PENDING and "421" in waiting.last_error  # "retrying: reason"
    assert await in_drafts(outgoing, message_id)
    assert await outgoing.services.outbox.deliver(submission_id) == "sent"
    assert len(outgoing.smtp.wait_for(1)) == 1


async def test_a_refused_recipient_returns_the_message_to_drafts_with_the_reason(outgoing: Outgoing) -> None:
    outgoing.smtp.faults.rejected = {"bea@example.net"}
    message_id, submission_id = await submit(outgoing)
    assert await outgoing.services.outbox.deliver(submission_id) == "failed"
    failed = await outgoing.services.outbox.owned(outgoing.user.id, submission_id)
    assert failed.state is SubmissionState.FAILED
    assert "550" in failed.last_error and "bea@example.net" in failed.last_error
    assert failed.delivery["bea@example.net"]["delivered"] == "no"
    assert await in_drafts(outgoing, message_id)
    assert outgoing.smtp.received == []


async def test_a_connection_lost_after_the_final_dot_is_not_sent_again(outgoing: Outgoing) -> None:
    outgoing.smtp.faults.drop_after_data = True
    _, submission_id = await submit(outgoing)
    assert await outgoing.services.outbox.deliver(submission_id) == "uncertain"
    uncertain = await outgoing.services.outbox.owned(outgoing.user.id, submission_id)
    assert uncertain.state is SubmissionState.UNCERTAIN and "may have been sent" in uncertain.last_error
    outgoing.smtp.faults.drop_after_data = False
    assert await outgoing.services.outbox.deliver(submission_id) == "uncertain"  # never resent blindly
    await outgoing.services.outbox.send_due()  # nor by the safety net
    assert len(outgoing.smtp.received) == 1
    listed = await outgoing.services.outbox.outbox(outgoing.user.id)
    assert [e.submission.state for e in listed] == [SubmissionState.UNCERTAIN]


async def test_a_wrong_smtp_password_flags_the_account_and_loses_nothing(outgoing: Outgoing) -> None:
    outgoing.smtp.password = "changed on the server"
    message_id, submission_id = await submit(outgoing)
    assert await outgoing.services.outbox.deliver(submission_id) == "failed"
    failed = await outgoing.services.outbox.owned(outgoing.user.id, submission_id)
    assert "sign-in" in failed.last_error and "535" in failed.last_error
    assert await in_drafts(outgoing, message_id)
    overview = await outgoing.services.providers.get(ImapAccountService).overview(outgoing.user.id,
                                                                                 outgoing.account_id)
    assert overview.send_problem and "535" in overview.send_problem
    assert overview.account.status.value == "ok"  # reading mail goes on


async def test_two_workers_racing_for_one_submission_deliver_it_once(
    outgoing: Outgoing, settings: Settings, database_url: str
) -> None:
    _, submission_id = await submit(outgoing)
    other = await open_services(settings, database_url)
    try:
        results = await asyncio.gather(outgoing.services.outbox.deliver(submission_id),
                                       other.outbox.deliver(submission_id))
    finally:
        await other.close()
    # One worker claimed and sent it; the other found it taken (still sending, or sent by then).
    assert results.count("sent") >= 1 and set(results) <= {"sending", "sent"}
    await asyncio.sleep(0.3)
    assert len(outgoing.smtp.received) == 1


async def test_header_injection_is_refused(outgoing: Outgoing) -> None:
    with pytest.raises(ValidationError) as refused:
        await outgoing.services.drafts.save(outgoing.user.id, await outgoing.content(subject="hi\r\nBcc: x@evil"))
    assert refused.value.field == "subject"
    with pytest.raises(ValidationError):
        await outgoing.services.drafts.save(outgoing.user.id, await outgoing.content(
            to=(Address("Eve\r\nBcc: x@evil", "eve@example.net"),)))
    with pytest.raises(ValidationError):
        await outgoing.services.drafts.save(outgoing.user.id, await outgoing.content(
            to=(Address("", "eve@example.net\nBcc: x@evil"),)))


async def test_a_from_the_user_does_not_own_is_refused(outgoing: Outgoing, smtp: SmtpServer) -> None:
    stranger = await outgoing.services.users.create_user("other@example.org", "correct horse")
    theirs = await add_sending_account(outgoing.services, stranger, outgoing.mail.server.add_user(), smtp)
    their_identity = await outgoing.services.identities.primary(stranger.id, theirs)
    assert their_identity is not None
    with pytest.raises(ForbiddenError, match="not one of your identities"):
        await outgoing.services.drafts.save(outgoing.user.id, await outgoing.content(identity_id=their_identity.id))
    # A submission naming another's identity for one's own draft: forbiddenFrom.
    saved = await outgoing.save(await outgoing.content())
    with pytest.raises(SubmissionRefused) as submission:
        await outgoing.services.outbox.submit(outgoing.user.id, saved.message_id, their_identity.id)
    assert submission.value.reason == "forbiddenFrom"


async def test_more_than_a_hundred_recipients_is_refused(outgoing: Outgoing) -> None:
    many = tuple(Address("", f"r{i}@example.net") for i in range(101))
    with pytest.raises(ValidationError):
        await outgoing.services.drafts.save(outgoing.user.id, await outgoing.content(to=many))
    hundred = many[:100]
    saved = await outgoing.save(await outgoing.content(to=hundred))
    submission = await outgoing.services.outbox.submit(outgoing.user.id, saved.message_id,
                                                       (await outgoing.identity()).id)
    assert submission.state is SubmissionState.PENDING


async def test_the_send_rate_limit_gives_a_clear_error(
    outgoing: Outgoing, settings: Settings, database_url: str
) -> None:
    limited = await open_services(dataclasses.replace(settings, sends_per_hour=2), database_url)
    try:
        identity = (await outgoing.identity()).id
        for _ in range(2):
            saved = await outgoing.save(await outgoing.content())
            await limited.outbox.submit(outgoing.user.id, saved.message_id, identity)
        saved = await outgoing.save(await outgoing.content())
        with pytest.raises(SubmissionRefused) as refused:
            await limited.outbox.submit(outgoing.user.id, saved.message_id, identity)
        assert refused.value.reason == "forbiddenToSend" and "2 messages in the last hour" in str(refused.value)
        assert await in_drafts(outgoing, saved.message_id)  # what was written stays
    finally:
        await limited.close()
