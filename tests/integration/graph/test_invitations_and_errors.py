"""An Outlook invitation (an eventMessage) reaches the ICS extractor through its raw MIME; other mail's
original is fetched on first use; and one account's refused sign-in never costs another account."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from email.message import EmailMessage
from email.policy import SMTP
from email.utils import format_datetime

import pytest

from plmail.domain.enums import AccountStatus, ProviderKind, QueueName
from plmail.domain.errors import NotFoundError
from plmail.jobs.calendar import extract_events
from plmail.jobs.context import SERVICES_KEY
from tests.integration.graph.conftest import GraphSetup, connect, old_message, rfc_id
from tests.support.fakes import rfc822
from tests.support.repos import account_admin


def invitation(uid: str, start: datetime) -> bytes:
    """What Exchange sends: text and a text/calendar alternative, METHOD:REQUEST."""
    message = EmailMessage(policy=SMTP)
    message["From"] = "Organizer <organizer@example.org>"
    message["To"] = "alex@outlook.com"
    message["Subject"] = "Quarterly planning"
    message["Date"] = format_datetime(datetime.now(UTC))
    message["Message-ID"] = f"<{uid}@example.org>"
    message.set_content("You are invited to Quarterly planning.")
    stamp = start.strftime("%Y%m%dT%H%M%SZ")
    end = (start + timedelta(hours=1)).strftime("%Y%m%dT%H%M%SZ")
    ics = "\r\n".join([
        "BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:Microsoft Exchange Server 2010", "METHOD:REQUEST",
        "BEGIN:VEVENT", f"UID:{uid}", "SEQUENCE:0", f"DTSTAMP:{stamp}", f"DTSTART:{stamp}", f"DTEND:{end}",
        "SUMMARY:Quarterly planning", "ORGANIZER;CN=Organizer:mailto:organizer@example.org",
        "ATTENDEE;PARTSTAT=NEEDS-ACTION;RSVP=TRUE:mailto:alex@outlook.com", "END:VEVENT", "END:VCALENDAR", "",
    ])
    message.add_alternative(ics.encode(), maintype="text", subtype="calendar", params={"method": "REQUEST"})
    return message.as_bytes()


async def test_an_invitation_reaches_the_calendar_extractor_via_its_raw_mime(graph: GraphSetup) -> None:
    start = (datetime.now(UTC) + timedelta(days=3)).replace(microsecond=0)
    invite = graph.mailbox.add_message(invitation("planning-2026", start), meeting_message_type="meetingRequest")
    plain = graph.mailbox.add_message(rfc822("Just mail", message_id="<just-mail@example.org>"))
    await graph.sync()  # new mail: the sync stores it while the folders wait for their import

    values = [c for c in graph.fake.calls if c.path.endswith("/$value")]
    assert [c.path.split("/")[-2] for c in values] == [invite.id]  # only the invitation's MIME, at sync time
    row = await graph.row("planning-2026@example.org")
    assert row["raw_path"] is not None
    parts = await graph.services.db.fetchval(
        "SELECT count(*) FROM message_part WHERE message_id = $1 AND is_calendar", row["id"])
    assert parts == 1
    queued = await graph.services.db.fetch(
        "SELECT convert_from(job, 'UTF8')::jsonb ->> 'function' AS f FROM saq_jobs WHERE queue = ANY($1::text[])",
        [QueueName.ENRICH.value, QueueName.ENRICH_LIVE.value])
    assert "extract_events" in {r["f"] for r in queued}

    summary = await extract_events({SERVICES_KEY: graph.services}, user_id=graph.user.id, message_ids=[row["id"]])
    assert summary["claims"] == 1, summary
    event = await graph.services.db.fetchrow(
        "SELECT uid, starts_at, title FROM calendar_event WHERE user_id = $1", graph.user.id)
    assert event is not None
    assert (event["uid"], event["starts_at"], event["title"]) == ("planning-2026", start, "Quarterly planning")

    # Any other message's original is fetched on first use, and kept.
    other = await graph.row(rfc_id(plain))
    assert other["raw_path"] is None
    kept: list[str] = []

    async def remember(digest: str) -> None:
        kept.append(digest)

    data = await graph.services.raw_messages.load(raw_path=None, account_id=graph.account_id,
                                                  message_id=other["id"], kind=ProviderKind.GRAPH, remember=remember)
    assert data == plain.raw and len(kept) == 1
    graph.mailbox.delete(plain.id)
    with pytest.raises(NotFoundError, match="Microsoft"):
        await graph.services.raw_messages.load(raw_path=None, account_id=graph.account_id, message_id=other["id"],
                                               kind=ProviderKind.GRAPH, remember=remember)


async def test_a_revoked_grant_marks_only_its_account_for_reconnecting(graph: GraphSetup) -> None:
    fake = graph.fake
    second = fake.add_mailbox("sam@contoso.example", "Sam Contoso")
    other_id = await connect(graph.services, graph.user, graph.server, second.user_principal_name)
    old_message(graph.mailbox, "inbox", 0)
    second.add_message(rfc822("For Sam", message_id="<for-sam@example.org>", date=datetime.now(UTC)))
    fake.oauth.revoke_user(graph.mailbox.user_principal_name)
    fake.oauth.expire_access_tokens()

    assert await graph.services.sync.request_all() == 2
    await graph.sync()  # no exception escapes: the account waits for its user
    await graph.services.sync.run(other_id)
    first = await account_admin(graph.services).for_job(graph.account_id)
    assert first is not None and first.status is AccountStatus.RECONNECT
    assert "Connect the account again" in first.status_detail
    sam = await account_admin(graph.services).for_job(other_id)
    assert sam is not None and sam.status is AccountStatus.OK and sam.last_synced_at is not None
    assert await graph.services.db.fetchval(
        "SELECT count(*) FROM message WHERE account_id = $1 AND rfc_message_id = 'for-sam@example.org'", other_id) == 1
    # Its jobs stop: a page of its import does nothing until it is connected again.
    assert (await graph.import_page()).page.stored == 0
