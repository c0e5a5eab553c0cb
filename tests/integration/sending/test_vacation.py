"""VacationResponse (RFC 8621 §8) on the unified account, sent by the sending engine to the suite's SMTP server:
one reply per sender per 7 days, never to a list, bulk mail, a no-reply sender or the user's own address, only
between fromDate and toDate, marked Auto-Submitted: auto-replied (RFC 3834 §5). Also Quota/get (RFC 9425)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import httpx
import pytest

from plmail.domain.outgoing import VacationSettings
from plmail.mail.vacation import VacationService
from plmail.services import Services
from tests.integration.jmap.conftest import JmapBox
from tests.integration.sending.conftest import Outgoing, add_sending_account
from tests.support.dovecot import DovecotServer
from tests.support.jobs import run_queued
from tests.support.smtp import SmtpServer

USING = ["urn:ietf:params:jmap:core", "urn:ietf:params:jmap:mail", "urn:ietf:params:jmap:vacationresponse"]
QUOTA = ["urn:ietf:params:jmap:core", "urn:ietf:params:jmap:quota"]


@pytest.fixture
async def phone(outgoing: Outgoing, client: httpx.AsyncClient) -> JmapBox:
    token = (await outgoing.services.app_passwords.create(outgoing.user.id, "Phone")).token
    return JmapBox(outgoing.services, client, outgoing.user, outgoing.account_id, token,
                   await outgoing.services.labels.role_ids(outgoing.user.id))


def _mail(n: int, sender: str, *headers: str, to: str = "owner@example.org", date: datetime | None = None) -> bytes:
    extra = "".join(f"{h}\r\n" for h in headers)
    return (f"From: {sender}\r\nTo: {to}\r\nSubject: Question {n}\r\nMessage-ID: <v{n}@example.net>\r\n"
            f"Date: {format_datetime(date or datetime.now(UTC))}\r\n{extra}\r\nHello?\r\n").encode()


async def _call(phone: JmapBox, name: str, arguments: dict[str, object], using: list[str] = USING
                ) -> tuple[str, dict[str, object]]:
    response = await phone.request([[name, {"accountId": f"u{phone.user.id}", **arguments}, "c"]], using=using)
    assert response.status_code == 200, response.text
    result_name, result, _ = response.json()["methodResponses"][0]
    return result_name, result


async def test_vacation_response_answers_once_per_sender_and_never_lists(phone: JmapBox, outgoing: Outgoing) -> None:
    name, got = await _call(phone, "VacationResponse/get", {"ids": None})
    assert name == "VacationResponse/get"
    assert got["list"] == [{"id": "singleton", "isEnabled": False, "fromDate": None, "toDate": None, "subject": None,
                            "textBody": None, "htmlBody": None}]
    wrong = await phone.request([["VacationResponse/get", {"accountId": phone.account}, "c"]], using=USING)
    assert wrong.json()["methodResponses"][0][1]["type"] == "accountNotSupportedByMethod"  # the user's, not one box's

    now = datetime.now(UTC)
    _, refused = await _call(phone, "VacationResponse/set", {
        "create": {"x": {"isEnabled": True}}, "destroy": ["singleton"],
        "update": {"singleton": {"fromDate": "2026-08-10T00:00:00Z", "toDate": "2026-08-01T00:00:00Z"}}})
    assert refused["notCreated"]["x"]["type"] == "singleton" and refused["notDestroyed"]["singleton"]["type"] == \
        "singleton"
    assert refused["notUpdated"]["singleton"]["type"] == "invalidProperties"  # it would end before it starts
    before = refused["newState"]
    _, done = await _call(phone, "VacationResponse/set", {"ifInState": before, "update": {"singleton": {
        "isEnabled": True, "fromDate": (now - timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "toDate": (now + timedelta(days=14)).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "subject": "Away until the 15th", "textBody": "I am away and read your mail later."}}})
    assert done["updated"] == {"singleton": None} and done["newState"] != before
    _, shown = await _call(phone, "VacationResponse/get", {"ids": ["singleton", "other"]})
    assert shown["list"][0]["isEnabled"] is True and shown["list"][0]["subject"] == "Away until the 15th"
    assert shown["notFound"] == ["other"]

    me = outgoing.address
    outgoing.mail.deliver([
        _mail(1, "Carl <carl@example.net>", to=me),
        _mail(2, "News <news@lists.example.net>", "List-Id: <news.lists.example.net>", to=me),
        _mail(3, "Shop <no-reply@shop.example>", to=me),
        _mail(4, "Bulk <offers@example.com>", "Precedence: bulk", to=me),
        _mail(5, f"Me <{outgoing.address}>", to=me),
        _mail(6, "Robot <robot@example.com>", "Auto-Submitted: auto-replied", to=me),
    ])
    await outgoing.services.sync.run(outgoing.account_id)
    ran = await run_queued(outgoing.services, ("send_vacation_reply", "send_submission", "push_draft",
                                               "file_sent_copy"))
    assert "send_vacation_reply" in ran
    [reply] = outgoing.smtp.wait_for(1)
    assert reply.rcpt_to == ("carl@example.net",)
    message = reply.message
    assert message["Subject"] == "Away until the 15th" and message["Auto-Submitted"] == "auto-replied"
    assert message["In-Reply-To"] == "<v1@example.net>"
    assert "I am away" in message.get_payload(decode=True).decode()

    outgoing.mail.deliver([_mail(7, "Carl <carl@example.net>", to=me)])  # the same sender within the week
    await outgoing.services.sync.run(outgoing.account_id)
    await run_queued(outgoing.services, ("send_vacation_reply", "send_submission", "push_draft", "file_sent_copy"))
    assert len(outgoing.smtp.received) == 1
    answered = await outgoing.services.db.fetchval(
        "SELECT count(*) FROM message WHERE rfc_message_id = 'v1@example.net' AND flags ? '$answered'")
    assert answered == 0  # an automatic reply is not the user's answer


async def test_no_reply_outside_the_dates(phone: JmapBox, outgoing: Outgoing) -> None:
    later = datetime.now(UTC) + timedelta(days=3)
    await _call(phone, "VacationResponse/set", {"update": {"singleton": {
        "isEnabled": True, "fromDate": later.strftime("%Y-%m-%dT%H:%M:%SZ"), "textBody": "Away."}}})
    outgoing.mail.deliver([_mail(8, "Dora <dora@example.net>", to=outgoing.address)])
    await outgoing.services.sync.run(outgoing.account_id)
    await run_queued(outgoing.services, ("send_vacation_reply", "send_submission", "push_draft", "file_sent_copy"))
    assert outgoing.smtp.received == []


async def test_quota_reports_the_space_the_users_mail_takes(phone: JmapBox, outgoing: Outgoing) -> None:
    name, empty = await _call(phone, "Quota/get", {"ids": None}, using=QUOTA)
    assert name == "Quota/get", empty
    quota = next(q for q in empty["list"] if q["id"] == "mail")  # beside it: the pending uploads' (issue 39)
    assert quota["resourceType"] == "octets" and quota["scope"] == "account"
    assert quota["types"] == ["Mail"] and (quota["hardLimit"] is None or quota["hardLimit"] > quota["used"])
    start = int(quota["used"])
    outgoing.mail.deliver([_mail(10 + n, "Eve <eve@example.net>", "X-Pad: " + "x" * 900) for n in range(21)])
    await outgoing.services.sync.run(outgoing.account_id)
    _, after = await _call(phone, "Quota/get", {"ids": None}, using=QUOTA)
    assert int(next(q for q in after["list"] if q["id"] == "mail")["used"]) > start  # 21 more messages take more room
    assert after["state"] != empty["state"]  # the quota's state moves with the mail


# -- RFC 3834 §2 and issue 30: which mail gets an automatic reply, each asserted on what the SMTP server received --

JOBS = ("send_vacation_reply", "send_submission", "push_draft", "file_sent_copy")


async def _away(outgoing: Outgoing, **fields: object) -> None:
    now = datetime.now(UTC)
    values: dict[str, object] = {"is_enabled": True, "from_date": now - timedelta(days=1),
                                 "to_date": now + timedelta(days=14), "subject": "Away", "text_body": "I am away."}
    values.update(fields)
    await outgoing.services.vacation.set(outgoing.user.id, VacationSettings(**values))  # type: ignore[arg-type]


async def _arrive(outgoing: Outgoing, messages: list[bytes], folder: str = "INBOX",
                  internaldate: datetime | None = None) -> list[str]:
    """Deliver into the account's mailbox, sync as the live account would, and run what the workers would."""
    outgoing.mail.deliver(messages, folder, internaldate=internaldate)
    await outgoing.services.sync.run(outgoing.account_id)
    await run_queued(outgoing.services, JOBS)
    return sorted(rcpt for received in outgoing.smtp.received for rcpt in received.rcpt_to)


async def test_only_recent_mail_addressed_to_the_user_by_a_person_is_answered(outgoing: Outgoing) -> None:
    services, me = outgoing.services, outgoing.address
    alias = await outgoing.verified_alias("holiday@example.org", name="Owner on holiday")
    await _away(outgoing)
    now = datetime.now(UTC)
    answered = [
        _mail(101, "Carl <carl@example.net>", to=me),
        _mail(102, "Dana <dana@example.net>", f"Cc: {me}", to="team@else.example"),  # addressed in Cc
        _mail(103, "Erin <erin@example.net>", "Auto-Submitted: no", to=me),  # "no" is a person's mail
        _mail(104, "Fred <fred@example.net>", to=me, date=now - timedelta(days=3)),  # within four days
        _mail(105, "Gina <gina@example.net>", to="holiday@example.org"),  # to the alias: answered from it
    ]
    silent = [
        _mail(111, "Hugo <hugo@example.net>", to="team@else.example"),  # Bcc or a list copy: not addressed
        _mail(112, f"Me <{me}>", to=me),  # the user's own mail
        _mail(113, "Ivy <ivy@example.net>", "List-Unsubscribe: <mailto:leave@example.net>", to=me),
        _mail(114, "Jan <jan@example.net>", "List-Post: <mailto:list@example.net>", to=me),
        _mail(115, "Kai <kai@example.net>", "Precedence: junk", to=me),
        _mail(116, "Lea <lea@example.net>", "Precedence: list", to=me),
        _mail(117, "Max <max@example.net>", "Precedence: bulk", to=me),
        _mail(118, "Nia <nia@example.net>", "Auto-Submitted: auto-generated", to=me),
        _mail(119, "Oli <oli@example.net>", "Auto-Submitted: auto-replied", to=me),
        _mail(120, "Shop <noreply@shop.example>", to=me),
        _mail(121, "Mail Delivery System <MAILER-DAEMON@example.net>", to=me),
        _mail(122, "Postmaster <postmaster@example.net>", to=me),
        _mail(123, "Pia <pia@example.net>", to=me, date=now - timedelta(days=5)),  # older than four days
        _mail(124, "Quinn <quinn@example.net>", to=me, date=now - timedelta(days=730)),  # the old mail
    ]
    received = await _arrive(outgoing, [*answered, *silent])
    assert received == ["carl@example.net", "dana@example.net", "erin@example.net", "fred@example.net",
                        "gina@example.net"]
    by_rcpt = {r.rcpt_to[0]: r for r in outgoing.smtp.received}
    carl = by_rcpt["carl@example.net"].message
    assert carl["Auto-Submitted"] == "auto-replied"
    assert carl["In-Reply-To"] == "<v101@example.net>" and "<v101@example.net>" in carl["References"]
    assert me in carl["From"] and by_rcpt["carl@example.net"].mail_from == me
    gina = by_rcpt["gina@example.net"]
    assert gina.mail_from == alias.email and "holiday@example.org" in gina.message["From"]

    outgoing.smtp.reset()
    spam = await _arrive(outgoing, [_mail(125, "Rita <rita@example.net>", to=me)], folder="Junk")
    assert spam == []  # Spam is never answered
    assert await services.db.fetchval(
        """SELECT l.role FROM message m JOIN message_label ml ON ml.message_id = m.id JOIN label l ON l.id = ml.label_id
            WHERE m.rfc_message_id = 'v125@example.net'""") == "spam"  # it did arrive, in Spam
    replies = {received.message["Message-ID"].strip("<>") for received in by_rcpt.values()}
    assert replies <= outgoing.folder("Sent")  # filed in Sent like anything the user sends


async def test_a_first_import_is_never_answered_but_live_mail_after_it_is(
    services: Services, dovecot: DovecotServer, smtp: SmtpServer,
) -> None:
    mail = dovecot.add_user()
    user = await services.users.create_user("away@example.org", "correct horse", time_zone="Europe/Berlin")
    now = datetime.now(UTC)
    await services.vacation.set(user.id, VacationSettings(True, now - timedelta(days=1), None, "Away", "Later."))
    address = f"{mail.name}@example.org"
    mail.deliver([_mail(201, "Sam <sam@example.net>", to=address)])  # recent, but there before the account
    account_id = await add_sending_account(services, user, mail, smtp)
    setup = Outgoing(services, user, mail, smtp, account_id)
    await setup.sync()
    await run_queued(services, JOBS)
    assert smtp.received == []
    assert await _arrive(setup, [_mail(202, "Tom <tom@example.net>", to=address)]) == ["tom@example.net"]


async def test_once_per_sender_per_interval_remembered_across_a_restart(outgoing: Outgoing) -> None:
    services, me = outgoing.services, outgoing.address
    await _away(outgoing)
    assert await _arrive(outgoing, [_mail(301, "Carl <carl@example.net>", to=me)]) == ["carl@example.net"]
    # A restarted installation builds its services afresh; what was answered is in the database.
    restarted = VacationService(services.db, services.identities, services.replies, services.drafts,
                                services.outbox)
    outgoing.mail.deliver([_mail(302, "Carl <carl@example.net>", to=me)])
    await services.sync.run(outgoing.account_id)
    second = await services.db.fetchval("SELECT id FROM message WHERE rfc_message_id = 'v302@example.net'")
    assert await restarted.answer(second) == "answered in this interval already"
    # Two days later: a one-day interval (PLMAIL_VACATION_REPLY_DAYS=1) answers again, the default week does not.
    await services.db.execute("UPDATE vacation_reply SET replied_at = replied_at - interval '2 days'")
    assert await restarted.answer(second) == "answered in this interval already"
    daily = VacationService(services.db, services.identities, services.replies, services.drafts, services.outbox,
                            reply_interval_days=1)
    assert await daily.answer(second) == "sent"
    await run_queued(services, JOBS)
    assert [r.rcpt_to for r in outgoing.smtp.received] == [("carl@example.net",), ("carl@example.net",)]


async def test_the_dates_are_honoured_to_the_minute_of_arrival(outgoing: Outgoing) -> None:
    me = outgoing.address
    start = datetime.now(UTC).replace(second=0, microsecond=0) - timedelta(minutes=10)
    await _away(outgoing, from_date=start, to_date=start + timedelta(minutes=5))
    arrivals = [("early", start - timedelta(seconds=1)), ("first", start),
                ("last", start + timedelta(minutes=4, seconds=59)), ("late", start + timedelta(minutes=5))]
    for n, (name, arrived) in enumerate(arrivals):
        outgoing.mail.deliver([_mail(400 + n, f"{name} <{name}@example.net>", to=me)], internaldate=arrived)
    await outgoing.services.sync.run(outgoing.account_id)
    await run_queued(outgoing.services, JOBS)
    assert sorted(r.rcpt_to[0] for r in outgoing.smtp.received) == ["first@example.net", "last@example.net"]


async def test_the_reply_goes_through_the_outbox_and_its_send_limit(outgoing: Outgoing) -> None:
    services, me = outgoing.services, outgoing.address
    await _away(outgoing)
    services.outbox.sends_per_hour = 1  # as PLMAIL_SENDS_PER_HOUR=1 would configure it
    assert await _arrive(outgoing, [_mail(501, "Uma <uma@example.net>", to=me),
                                    _mail(502, "Vic <vic@example.net>", to=me)]) == ["uma@example.net"]
    outcomes = await services.db.fetch("SELECT state FROM submission WHERE account_id = $1", outgoing.account_id)
    assert len(outcomes) == 1  # the second reply was refused by the outbox's limit, not sent around it
