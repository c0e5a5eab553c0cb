"""The vacation responder's post-ingest step: it only enqueues; the job (`mail/vacation.py`) decides and answers."""

from __future__ import annotations

from datetime import UTC, datetime

from plmail.db.database import Database
from plmail.domain.ingest import PostIngestResult
from plmail.domain.jobs import SEND_VACATION_REPLY
from plmail.domain.ports import Enqueuer
from plmail.mail.repos.vacation import VacationRepository
from plmail.mail.vacation import RECENT


class VacationStep:
    """After new mail is stored: each live message of an account whose user is away is answered by a job."""

    name = "vacation"

    def __init__(self, db: Database, queues: Enqueuer | None) -> None:
        self.repo = VacationRepository(db)
        self.queues = queues

    async def after_commit(self, result: PostIngestResult) -> None:
        if self.queues is None or not result.live:
            return  # a first import is old mail: nobody is waiting for an answer to it
        candidates = [m for m in result.messages if not m.is_draft and m.parsed.from_address
                      and m.parsed.from_address not in result.accounts[m.account_id].addresses]
        if not candidates:
            return
        now = datetime.now(UTC)
        recent = [m for m in candidates if m.occurred_at is not None and m.occurred_at >= now - RECENT]
        if not recent:
            return
        # Which users are away over the batch's arrivals; the job judges each arrival to the minute.
        earliest = min(min(m.occurred_at or now, now) for m in recent)
        answering = await self.repo.answering(sorted({m.account_id for m in recent}), earliest, now)
        for message in recent:
            if message.account_id in answering:
                await self.queues.enqueue(SEND_VACATION_REPLY, message_id=message.id)
