"""An IMAP account on the suite's Dovecot that sends through the suite's SMTP server, and the steps the
workers would run (drafts pushed, submissions sent, Sent copies filed), run here one at a time."""

from __future__ import annotations

import email
import email.policy
from dataclasses import dataclass
from email.message import Message
from typing import Any

import pytest

from plmail.domain.account_services import MailServerAccountInput
from plmail.domain.messages import Address
from plmail.domain.models import User
from plmail.domain.outgoing import DraftContent, Identity, Submission
from plmail.mail.drafts import SavedDraft
from plmail.providers.imap.accounts import ImapAccountService
from plmail.services import Services
from tests.integration.imap_sync.conftest import message_ids
from tests.support.dovecot import DovecotUser, dovecot, dovecot_user
from tests.support.jobs import run_queued
from tests.support.smtp import SmtpServer, confirmation_link, smtp, smtp_server

__all__ = ["Outgoing", "dovecot", "dovecot_user", "outgoing", "smtp", "smtp_server"]


@dataclass
class Outgoing:
    services: Services
    user: User
    mail: DovecotUser
    smtp: SmtpServer
    account_id: int

    @property
    def address(self) -> str:
        return f"{self.mail.name}@example.org"

    async def identity(self) -> Identity:
        primary = await self.services.identities.primary(self.user.id, self.account_id)
        assert primary is not None
        return primary

    async def verified_alias(self, email: str, *, name: str = "") -> Identity:
        """An alias confirmed the way its owner would: the link in the mail that went to it, opened (issue 39).
        The confirmation mail is taken off the SMTP server's list, so counts of what was sent stay the tests'."""
        before = len(self.smtp.received)
        alias = await self.services.identities.add_alias(self.user.id, self.account_id, email, name=name,
                                                         confirm_base="http://plmail.test/")
        arrived = (await self.smtp.arrival(before + 1))[before]
        link = confirmation_link(arrived, email)
        await self.services.identities.confirm(link.rsplit("/", 1)[1])
        with self.smtp.lock:
            self.smtp.received.remove(arrived)
        confirmed = await self.services.identities.owned(self.user.id, alias.id)
        assert confirmed.verified
        return confirmed

    async def content(self, **fields: Any) -> DraftContent:
        values: dict[str, Any] = {"to": (Address("Bea Berg", "bea@example.net"),), "subject": "Hello",
                                  "text_body": "Hi Bea,\n\nsee you.\n"}
        values.update(fields)
        identity_id = values.pop("identity_id", None) or (await self.identity()).id
        return DraftContent(identity_id=identity_id, **values)

    async def save(self, content: DraftContent, *, replaces: int | None = None) -> SavedDraft:
        saved = await self.services.drafts.save(self.user.id, content, replaces=replaces)
        await self.run_jobs()
        return saved

    async def send(self, content: DraftContent, **options: Any) -> Submission:
        """Save, submit to go now, and run what the workers would: the send, then the Sent copy."""
        saved = await self.services.drafts.save(self.user.id, content)
        submission = await self.services.outbox.submit(
            self.user.id, saved.message_id, content.identity_id, answers=content.answers,
            answer_keyword=content.answer_keyword, **options)
        await self.run_jobs()
        return await self.deliver(submission.id)

    async def deliver(self, submission_id: int) -> Submission:
        try:
            await self.services.outbox.deliver(submission_id)
        except Exception as exc:  # a temporary failure: saq would try again
            if not getattr(exc, "retryable", False):
                raise
        await self.run_jobs()
        return await self.services.outbox.owned(self.user.id, submission_id)

    async def run_jobs(self) -> list[str]:
        """The draft and Sent-copy jobs the services enqueued on ingest, run as a worker would."""
        return await run_queued(self.services, ("push_draft", "discard_draft", "file_sent_copy"))

    async def sync(self) -> None:
        await self.services.sync.run(self.account_id)
        await self.services.importer.run_page(self.account_id, chain=False)
        await self.services.sync.run(self.account_id)

    def folder(self, name: str) -> set[str]:
        with self.mail.peer() as peer:
            return message_ids(peer.conn, name)

    def raw_in(self, folder: str, message_id: str) -> bytes:
        with self.mail.peer() as peer:
            for uid in peer.uids(folder):
                raw = peer.raw(uid, folder)
                if f"<{message_id}>".encode() in raw.split(b"\r\n\r\n", 1)[0]:
                    return raw
        raise AssertionError(f"{message_id} is not in {folder}")

    def flags_of(self, folder: str, message_id: str) -> set[str]:
        with self.mail.peer() as peer:
            for uid in peer.uids(folder):
                if f"<{message_id}>".encode() in peer.raw(uid, folder).split(b"\r\n\r\n", 1)[0]:
                    return peer.flags(uid, folder)
        raise AssertionError(f"{message_id} is not in {folder}")


def parsed(raw: bytes) -> Message:
    return email.message_from_bytes(raw, policy=email.policy.compat32)


async def add_sending_account(services: Services, user: User, mail: DovecotUser, smtp: SmtpServer,
                              **smtp_overrides: Any) -> int:
    server = mail.imap()
    data = MailServerAccountInput(email=f"{mail.name}@example.org", host=server.host, port=server.port, tls="none",
                            username=mail.name, password=mail.password, ca_file=str(smtp.ca_file),
                            **smtp.settings(**smtp_overrides))
    # As the operator would (the command line): the test servers are on free ports, not mail ports.
    return await services.providers.get(ImapAccountService).add(user.id, data, operator=True)


@pytest.fixture
async def outgoing(services: Services, dovecot_user: DovecotUser, smtp: SmtpServer) -> Outgoing:
    user = await services.users.create_user("owner@example.org", "correct horse", time_zone="Europe/Berlin")
    account_id = await add_sending_account(services, user, dovecot_user, smtp)
    setup = Outgoing(services, user, dovecot_user, smtp, account_id)
    await setup.sync()
    return setup


