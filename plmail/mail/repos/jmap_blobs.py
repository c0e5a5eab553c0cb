"""Where JMAP blob ids lead: raw messages, stored parts, bodies and uploads, each scoped to an account."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from plmail.db.database import Database
from plmail.domain.enums import ProviderKind
from plmail.domain.mailstore import MessageSource, PartRow, Upload


class JmapBlobRepository:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def message_source(self, account_ids: Sequence[int], message_id: int) -> MessageSource | None:
        row = await self.db.fetchrow(
            """SELECT m.raw_path, a.provider_kind, coalesce(m.subject, '') AS subject, m.account_id
                 FROM message m JOIN account a ON a.id = m.account_id
                WHERE m.id = $1 AND m.account_id = ANY($2::bigint[])""",
            message_id, list(account_ids),
        )
        return MessageSource(row["raw_path"], ProviderKind(row["provider_kind"]), row["subject"], row["account_id"]) \
            if row else None

    async def remember_raw(self, message_id: int, digest: str) -> None:
        await self.db.execute("UPDATE message SET raw_path = $2 WHERE id = $1 AND raw_path IS NULL",
                              message_id, digest)

    async def part(self, account_ids: Sequence[int], part_id: int) -> PartRow | None:
        row = await self.db.fetchrow(
            """SELECT p.id, p.message_id, p.part_path, p.content_type, p.charset, p.filename, p.content_id,
                      p.disposition, coalesce(p.size, 0) AS size, p.sha256
                 FROM message_part p JOIN message m ON m.id = p.message_id
                WHERE p.id = $1 AND m.account_id = ANY($2::bigint[])""",
            part_id, list(account_ids),
        )
        if row is None:
            return None
        return PartRow(row["id"], row["message_id"], row["part_path"], row["content_type"], row["charset"],
                       row["filename"], row["content_id"], row["disposition"], row["size"], row["sha256"])

    async def bodies(self, account_ids: Sequence[int], message_id: int) -> tuple[str | None, str | None, str] | None:
        """(body_text, body_html_safe, subject); the raw body_html never leaves through JMAP."""
        row = await self.db.fetchrow(
            "SELECT body_text, body_html_safe, coalesce(subject, '') AS subject FROM message "
            "WHERE id = $1 AND account_id = ANY($2::bigint[])",
            message_id, list(account_ids),
        )
        return (row["body_text"], row["body_html_safe"], row["subject"]) if row else None

    async def record_upload(self, user_id: int, account_id: int | None, upload: Upload) -> None:
        """A repeated upload of the same bytes refreshes the row, so its week starts again. An upload to the
        unified account belongs to the user (account_id NULL)."""
        conflict = "(account_id, sha256)" if account_id is not None else "(user_id, sha256) WHERE account_id IS NULL"
        await self.db.execute(
            f"""INSERT INTO jmap_upload (user_id, account_id, sha256, content_type, size, created_at)
                VALUES ($1, $2, $3, $4, $5, now())
                ON CONFLICT {conflict} DO UPDATE
                   SET content_type = EXCLUDED.content_type, created_at = now()""",
            user_id, account_id, upload.sha256, upload.content_type, upload.size,
        )

    async def upload(self, user_id: int, account_id: int | None, sha256: str, since: datetime) -> Upload | None:
        """An upload to the account made since ``since``; with None (the unified account) any upload of the user."""
        row = await self.db.fetchrow(
            """SELECT sha256, content_type, size FROM jmap_upload
                WHERE user_id = $1 AND ($2::bigint IS NULL OR account_id = $2) AND sha256 = $3 AND created_at >= $4
                ORDER BY created_at DESC LIMIT 1""",
            user_id, account_id, sha256, since,
        )
        return Upload(row["sha256"], row["content_type"], row["size"]) if row else None

    async def pending_upload_bytes(self, user_id: int, since: datetime) -> int:
        value = await self.db.fetchval(
            "SELECT coalesce(sum(size), 0) FROM jmap_upload WHERE user_id = $1 AND created_at >= $2", user_id, since)
        return int(value)

    async def prune_uploads(self, older_than: datetime) -> list[str]:
        """Forget uploads older than the cut-off; returns the digests they named."""
        rows = await self.db.fetch("DELETE FROM jmap_upload WHERE created_at < $1 RETURNING sha256", older_than)
        return sorted({r["sha256"] for r in rows})
