"""A draft's life against Dovecot and the suite's SMTP server (issue 29, "Drafts never outlive what they
became"): whatever the timing — an autosave and its push still under way while Send is pressed, a send after
Undo, a scheduled send, a second window, JMAP's onSuccessDestroyEmail — the message arrives once and no draft is
left, neither in plmail nor in Dovecot's Drafts."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
from datetime import UTC, datetime, timedelta

import pytest

from plmail.domain.errors import ConflictError, NotFoundError
from plmail.domain.outgoing import BodyFormat, DraftContent
from plmail.mail.composer import ComposerInput
from plmail.mail.drafts import SavedDraft
from tests.integration.sending.conftest import Outgoing

ROUNDS = 20  # the "20 times in a row"


async def drafts_in_plmail(outgoing: Outgoing) -> list[str]:
    rows = await outgoing.services.db.fetch(
        "SELECT rfc_message_id FROM message WHERE account_id = $1 AND (flags ? '$draft' OR flags ? '\\Draft')",
        outgoing.account_id)
    return [r["rfc_message_id"] for r in rows]


async def no_draft_anywhere(outgoing: Outgoing) -> None:
    await outgoing.run_jobs()
    assert await drafts_in_plmail(outgoing) == []
    assert outgoing.folder("Drafts") == set()
    await outgoing.sync()  # and none comes back from the server
    assert await drafts_in_plmail(outgoing) == []


async def test_send_while_an_autosave_and_its_push_are_under_way_leaves_no_draft_twenty_times(
    outgoing: Outgoing,
) -> None:
    services, user = outgoing.services, outgoing.user
    for round_ in range(ROUNDS):
        content = await outgoing.content(subject=f"Race {round_}", text_body="First words.\n")
        first = await services.drafts.save(user.id, content)  # the first autosave, its push job queued

        async def autosave(content: DraftContent = content, first: SavedDraft = first) -> None:
            with contextlib.suppress(ConflictError):  # it came after the send: refused, nothing stored
                await services.drafts.save(user.id, dataclasses.replace(content, text_body="More words.\n"),
                                           replaces=first.message_id)

        async def push() -> None:
            await outgoing.run_jobs()

        async def send(content: DraftContent = content, first: SavedDraft = first) -> int:  # Send, as pressed
            written = ComposerInput(dataclasses.replace(content, text_body="Final words.\n"), BodyFormat.PLAIN,
                                    draft_id=first.message_id)
            submission = await services.composer.send(user.id, written, send_at=datetime.now(UTC))
            return submission.id

        # The three at once, in an order that changes with each round.
        steps = [autosave(), push(), send()]
        order = [steps[(i + round_) % 3] for i in range(3)]
        results = await asyncio.gather(*order)
        submission_id = next(r for r in results if isinstance(r, int))
        await outgoing.deliver(submission_id)
    received = outgoing.smtp.wait_for(ROUNDS, timeout=30)
    assert sorted(r.message["Subject"] for r in received) == sorted(f"Race {i}" for i in range(ROUNDS))
    assert all("Final words." in r.message.get_payload() for r in received)
    await no_draft_anywhere(outgoing)
    assert len(outgoing.folder("Sent")) == ROUNDS


async def test_send_after_undo_and_a_scheduled_send_leave_no_draft(outgoing: Outgoing) -> None:
    services, user = outgoing.services, outgoing.user
    content = await outgoing.content(subject="Second thoughts")
    saved = await outgoing.save(content)
    submission = await services.outbox.submit(user.id, saved.message_id, content.identity_id,
                                              send_at=datetime.now(UTC) + timedelta(seconds=30))
    await services.outbox.cancel(user.id, submission.id)  # Undo: a draft again, in Dovecot too
    await outgoing.run_jobs()
    assert saved.rfc_message_id in outgoing.folder("Drafts")
    again = await outgoing.save(dataclasses.replace(content, text_body="Now for real.\n"), replaces=saved.message_id)
    submission = await services.outbox.submit(user.id, again.message_id, content.identity_id)
    assert (await outgoing.deliver(submission.id)).state.value == "sent"
    await no_draft_anywhere(outgoing)

    later = await outgoing.save(await outgoing.content(subject="Tomorrow morning"))
    scheduled = await services.outbox.submit(user.id, later.message_id, content.identity_id,
                                             send_at=datetime.now(UTC) + timedelta(hours=12))
    await outgoing.run_jobs()
    assert later.rfc_message_id in outgoing.folder("Drafts")  # waiting, it is still a draft at the server
    await services.db.execute("UPDATE submission SET send_at = now() WHERE id = $1", scheduled.id)
    assert (await outgoing.deliver(scheduled.id)).state.value == "sent"
    await no_draft_anywhere(outgoing)
    assert [r.message["Subject"] for r in outgoing.smtp.received] == ["Second thoughts", "Tomorrow morning"]


async def test_a_second_window_sends_the_composition_once_and_the_first_cannot_bring_a_draft_back(
    outgoing: Outgoing,
) -> None:
    services, user = outgoing.services, outgoing.user
    content = await outgoing.content(subject="Two windows")
    opened = await outgoing.save(content)  # both windows opened this version
    await outgoing.save(dataclasses.replace(content, text_body="Typed in window A.\n"), replaces=opened.message_id)
    # Window B still names the version it opened: its send replaces A's newer one too.
    from_b = await services.drafts.save(user.id, dataclasses.replace(content, text_body="Typed in window B.\n"),
                                        replaces=opened.message_id)
    submission = await services.outbox.submit(user.id, from_b.message_id, content.identity_id)
    assert (await outgoing.deliver(submission.id)).state.value == "sent"
    with pytest.raises(ConflictError):  # window A's next autosave: refused, never a draft again
        await services.drafts.save(user.id, dataclasses.replace(content, text_body="A again.\n"),
                                   replaces=opened.message_id)
    await no_draft_anywhere(outgoing)
    [received] = outgoing.smtp.received
    assert "Typed in window B." in received.message.get_payload()


async def test_a_version_another_window_replaced_is_not_submitted_and_its_replacement_stays_the_draft(
    outgoing: Outgoing,
) -> None:
    services, user = outgoing.services, outgoing.user
    content = await outgoing.content(subject="Stale")
    opened = await outgoing.save(content)
    newer = await outgoing.save(dataclasses.replace(content, text_body="Newer words.\n"), replaces=opened.message_id)
    with pytest.raises(NotFoundError, match="changed in another window"):
        await services.outbox.submit(user.id, opened.message_id, content.identity_id)
    await outgoing.run_jobs()
    assert outgoing.smtp.received == []
    assert await drafts_in_plmail(outgoing) == [newer.rfc_message_id]
    assert outgoing.folder("Drafts") == {newer.rfc_message_id}


async def test_jmap_on_success_destroy_email_removes_the_draft_at_the_server_too(outgoing: Outgoing) -> None:
    services, user = outgoing.services, outgoing.user
    content: DraftContent = await outgoing.content(subject="From the phone")
    saved = await outgoing.save(content)
    submission = await services.outbox.submit(user.id, saved.message_id, content.identity_id)
    await services.outbox.forget_message(user.id, submission.id)  # onSuccessDestroyEmail
    assert (await outgoing.deliver(submission.id)).state.value == "sent"
    await no_draft_anywhere(outgoing)
    assert [r.message["Subject"] for r in outgoing.smtp.received] == ["From the phone"]


async def test_a_change_while_the_compositions_push_job_runs_queues_another_push_behind_it(
    outgoing: Outgoing,
) -> None:
    """The queue refuses a job's key while that job runs. A send or save landing after the running push's last look
    must still be pushed (its copy at the provider deleted) by a job of its own, not wait for the minute's sweep."""
    services, user = outgoing.services, outgoing.user
    first = await services.drafts.save(user.id, await outgoing.content(subject="Behind", text_body="One.\n"))
    # A worker has taken the push job: saq marks it active while it runs.
    taken = await services.db.fetch(
        "UPDATE saq_jobs SET status = 'active' WHERE status = 'queued' AND key LIKE 'push_draft:%' RETURNING key")
    assert len(taken) == 1
    await services.drafts.save(user.id, await outgoing.content(subject="Behind", text_body="Two.\n"),
                               replaces=first.message_id)
    queued = await services.db.fetch(
        "SELECT key, scheduled FROM saq_jobs WHERE status = 'queued' AND key LIKE 'push_draft:%'")
    assert [r["key"] for r in queued] == [f"{taken[0]['key']}:again"], queued
    await services.db.execute("DELETE FROM saq_jobs WHERE key = $1", taken[0]["key"])  # the worker finished it
    assert "push_draft" in await outgoing.run_jobs()
    assert len(outgoing.folder("Drafts")) == 1  # the second version, pushed by the job behind
