"""A user with one live IMAP account, a fake model host, and the enrich and release workers running."""

from __future__ import annotations

import asyncio
import itertools
import json
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import pytest

from plmail.domain.enums import Category, LabelRole, ProviderKind, QueueName
from plmail.domain.ingest import StoredMessage
from plmail.domain.models import User
from plmail.jobs.catalog import default_catalog
from plmail.jobs.workers import WorkerSupervisor
from plmail.mail.ingest import parse_message
from plmail.services import Services
from tests.support.fakes.model import ModelFake
from tests.support.fakes.server import FakeServer
from tests.support.mail import make_message
from tests.support.repos import account_rows

ASSISTANT_QUEUES = (QueueName.ENRICH_LIVE, QueueName.ENRICH, QueueName.ENRICH_BACKLOG, QueueName.RELEASE)
_serial = itertools.count(1)


@dataclass
class Desk:
    services: Services
    user: User
    account_id: int  # an IMAP account whose first import has finished: its mail is live
    inbox: int
    model: ModelFake
    model_url: str

    async def configure(self, *, hold: bool = True, hold_max_seconds: int = 60, timeout_seconds: float = 10.0,
                        url: str | None = None, kind: str = "openai") -> None:
        await self.services.assistant_settings.save(
            kind=kind, url=url if url is not None else self.model_url, model="gpt-4o-mini", api_key=None,
            hold_enabled=hold, hold_max_seconds=hold_max_seconds, timeout_seconds=timeout_seconds,
        )

    async def imap_account(self, name: str, *, importing: bool) -> int:
        """An IMAP account with one synced folder; with history still below its floor it is importing."""
        account_id = await account_rows(self.services).create(
            user_id=self.user.id, provider_kind=ProviderKind.IMAP, name=name, email=f"{name}@example.org"
        )
        await self.services.db.execute(
            """INSERT INTO mailbox (account_id, name, full_path, special_use, uid_validity, last_seen_uid,
                                    import_floor_uid, is_sync_enabled, is_idle_enabled, created_at, updated_at)
               VALUES ($1, 'INBOX', 'INBOX', 'inbox', 1, 100, $2, true, false, now(), now())""",
            account_id, 5000 if importing else 1,
        )
        return account_id

    async def arrive(self, *, subject: str | None = None, sender: str = "Deals <deals@shop.example>",
                     account_id: int | None = None, date: datetime | None = None, body: str = "Hello there.\n",
                     headers: dict[str, str] | None = None, message_id: str | None = None,
                     in_reply_to: str | None = None, to: tuple[str, ...] | None = None) -> StoredMessage:
        """One message arrives now through the real pipeline (and its steps)."""
        stored = await self.arrive_many([dict(subject=subject, sender=sender, date=date, body=body,
                                              headers=headers, message_id=message_id, in_reply_to=in_reply_to, to=to)],
                                        account_id=account_id)
        assert len(stored) == 1, stored
        return stored[0]

    async def arrive_many(self, specs: list[dict[str, Any]], *, account_id: int | None = None
                          ) -> list[StoredMessage]:
        now = datetime.now(UTC)
        batch = []
        for spec in specs:
            n = next(_serial)
            raw = make_message(
                subject=spec.get("subject") or f"Message {n}", sender=spec.get("sender") or "x@shop.example",
                to=spec.get("to") or (f"{self.user.email}",), date=spec.get("date") or now,
                body=spec.get("body") or "Hello.\n",
                headers=spec.get("headers"), message_id=spec.get("message_id") or f"m{n}.{time.time_ns()}@test",
                in_reply_to=spec.get("in_reply_to"),
            )
            batch.append(parse_message(raw, account_id=account_id or self.account_id, label_ids=(self.inbox,),
                                       received_at=spec.get("date") or now, source_ref=f"test:{n}"))
        result = await self.services.pipeline.ingest(batch)
        return list(result.messages)

    async def message(self, message_id: int) -> dict[str, Any]:
        row = await self.services.db.fetchrow(
            """SELECT m.category, m.category_held_at, m.category_released_at, m.ai_categorised_at, m.ai_category,
                      m.ai_reason, m.ai_error, m.thread_id, t.category AS thread_category
                 FROM message m LEFT JOIN message_thread t ON t.id = m.thread_id WHERE m.id = $1""",
            message_id,
        )
        assert row is not None
        return dict(row)

    async def tabs_showing(self, thread_id: int) -> list[str]:
        """The inbox tabs whose list holds this thread, read the way the inbox page reads them."""
        shown = []
        for tab in Category:
            page = await self.services.reader.inbox(self.user.id, tab)
            if any(t.id == thread_id for t in page.threads):
                shown.append(tab.value)
        return shown

    async def jobs(self, queue: QueueName, function: str | None = None) -> list[dict[str, Any]]:
        rows = await self.services.db.fetch(
            "SELECT status, convert_from(job, 'UTF8')::jsonb AS job FROM saq_jobs WHERE queue = $1",
            queue.value,
        )
        found = []
        for r in rows:
            job = json.loads(r["job"]) if isinstance(r["job"], str) else r["job"]
            if function is None or job.get("function") == function:
                found.append({"status": r["status"], **job})
        return found


async def eventually(check: Callable[[], Awaitable[bool]], timeout: float = 15.0, what: str = "") -> float:
    """Poll until `check()` is true; returns the seconds it took."""
    started = time.monotonic()
    while not await check():
        if time.monotonic() - started > timeout:
            raise AssertionError(f"not within {timeout}s: {what}")
        await asyncio.sleep(0.05)
    return time.monotonic() - started


@pytest.fixture
async def model_host() -> AsyncIterator[FakeServer[ModelFake]]:
    async with FakeServer(ModelFake()) as server:
        yield server


@pytest.fixture
async def desk(services: Services, model_host: FakeServer[ModelFake]) -> Desk:
    user = await services.users.create_user("reader@example.org", "correct horse", time_zone="Europe/Berlin")
    roles = await services.labels.role_ids(user.id)
    desk = Desk(services, user, 0, roles[LabelRole.INBOX], model_host.app, model_host.url)
    desk.account_id = await desk.imap_account("live", importing=False)
    return desk


@pytest.fixture
async def workers(services: Services) -> AsyncIterator[WorkerSupervisor]:
    # No crons: the minute's overdue release would otherwise race the delayed release job a test watches
    # whenever the test spans a minute boundary (the cron has a test of its own).
    supervisor = WorkerSupervisor(services, default_catalog().without_schedules(), ASSISTANT_QUEUES, grace_seconds=1)
    supervisor.start()
    try:
        yield supervisor
    finally:
        await supervisor.stop()
