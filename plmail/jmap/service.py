"""The JMAP server's parts, built once per process from the shared services."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from plmail.db.database import Database
from plmail.db.repos.jmap_changes import JmapChangeRepository
from plmail.db.repos.jmap_email import JmapEmailRepository
from plmail.jmap.api import ApiProcessor
from plmail.jmap.auth import AppPasswordService
from plmail.jmap.blobs import BlobService
from plmail.jmap.email_query import EmailQueryService
from plmail.jmap.email_writes import EmailWriter
from plmail.jmap.emails import EmailReader
from plmail.jmap.mailboxes import MailboxService
from plmail.jmap.methods import build_registry
from plmail.jmap.push import PushHub
from plmail.mail.blobs import BlobStore, RawMessageResolver
from plmail.mail.operations import ThreadOperations
from plmail.mail.pipeline import PostIngestPipeline

UPLOAD_LIFETIME = timedelta(days=7)
CHANGE_LOG_LIFETIME = timedelta(days=90)  # a phone away longer than this starts over (cannotCalculateChanges)


class JmapService:
    def __init__(self, db: Database, *, store: BlobStore, raw_messages: RawMessageResolver,
                 operations: ThreadOperations, pipeline: PostIngestPipeline) -> None:
        self.db = db
        self.auth = AppPasswordService(db)
        self.changes = JmapChangeRepository(db)
        self.email_repo = JmapEmailRepository(db)
        self.mailboxes = MailboxService(db)
        self.blobs = BlobService(db, store, raw_messages)
        self.emails = EmailReader(db, self.blobs)
        self.email_query = EmailQueryService(db)
        self.email_writer = EmailWriter(db, operations, pipeline)
        self.api = ApiProcessor(build_registry())
        self.push = PushHub(db)

    async def prune(self, now: datetime | None = None) -> tuple[int, int]:
        """Expired uploads and old change-log rows: (blobs removed, log rows removed)."""
        moment = now or datetime.now(UTC)
        blobs = await self.blobs.prune_uploads(moment - UPLOAD_LIFETIME)
        rows = await self.changes.prune(moment - CHANGE_LOG_LIFETIME)
        return blobs, rows

    async def close(self) -> None:
        await self.push.close()
