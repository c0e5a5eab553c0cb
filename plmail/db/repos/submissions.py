"""The outbox: submissions, the atomic claim that lets exactly one worker send each, and what became of them."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any

import asyncpg

from plmail.db.database import Database
from plmail.domain.outgoing import Envelope, Submission, SubmissionState

_COLUMNS = ("s.id, s.account_id, s.message_id, s.identity_id, s.envelope, s.send_at, s.state, s.attempts, "
            "s.last_error, s.delivery, s.created_at, s.updated_at, s.sent_at, s.origin")


def _json(value: Any) -> Any:
    return json.loads(value) if isinstance(value, str) else value


def envelope_json(envelope: Envelope) -> str:
    return json.dumps({"mailFrom": {"email": envelope.mail_from, "parameters": None},
                       "rcptTo": [{"email": r, "parameters": None} for r in envelope.rcpt_to]})


def _envelope(value: Any) -> Envelope:
    loaded = _json(value) or {}
    mail_from = (loaded.get("mailFrom") or {}).get("email") or ""
    rcpt = tuple(str(r.get("email")) for r in loaded.get("rcptTo") or [] if isinstance(r, dict) and r.get("email"))
    return Envelope(str(mail_from), rcpt)


def _submission(row: asyncpg.Record) -> Submission:
    return Submission(
        id=row["id"], account_id=row["account_id"], message_id=row["message_id"], identity_id=row["identity_id"],
        envelope=_envelope(row["envelope"]), send_at=row["send_at"], state=SubmissionState(row["state"]),
        attempts=row["attempts"], last_error=row["last_error"] or "", delivery=_json(row["delivery"]) or {},
        created_at=row["created_at"], updated_at=row["updated_at"], sent_at=row["sent_at"], origin=row["origin"],
    )


class SubmissionRepository:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def create(self, *, account_id: int, message_id: int, identity_id: int, envelope: Envelope,
                     send_at: datetime, origin: str, answers_message_id: int | None,
                     answer_keyword: str | None) -> int:
        value = await self.db.fetchval(
            """INSERT INTO submission (account_id, message_id, identity_id, envelope, send_at, state, attempts,
                                       last_error, delivery, answers_message_id, answer_keyword, awaiting_copy,
                                       origin, created_at, updated_at)
               VALUES ($1, $2, $3, $4::jsonb, $5, 'pending', 0, '', '{}', $6, $7, false, $8, now(), now())
               RETURNING id""",
            account_id, message_id, identity_id, envelope_json(envelope), send_at, answers_message_id, answer_keyword,
            origin,
        )
        return int(value)

    async def owned(self, user_id: int, submission_id: int) -> Submission | None:
        row = await self.db.fetchrow(
            f"""SELECT {_COLUMNS} FROM submission s JOIN account a ON a.id = s.account_id
                 WHERE s.id = $2 AND a.user_id = $1""",
            user_id, submission_id,
        )
        return _submission(row) if row else None

    async def get(self, submission_id: int) -> Submission | None:
        row = await self.db.fetchrow(f"SELECT {_COLUMNS} FROM submission s WHERE s.id = $1", submission_id)
        return _submission(row) if row else None

    async def for_accounts(self, account_ids: Sequence[int], *, ids: Sequence[int] | None = None,
                           limit: int = 500) -> list[Submission]:
        rows = await self.db.fetch(
            f"""SELECT {_COLUMNS} FROM submission s
                 WHERE s.account_id = ANY($1::int[]) AND ($2::bigint[] IS NULL OR s.id = ANY($2::bigint[]))
                 ORDER BY s.id LIMIT $3""",
            list(account_ids), list(ids) if ids is not None else None, limit,
        )
        return [_submission(r) for r in rows]

    async def outbox(self, user_id: int | None) -> list[Submission]:
        """What has not gone (pending, scheduled, sending) or went wrong (failed, may have been sent), oldest send
        time first; a user's, or everyone's for the operator."""
        rows = await self.db.fetch(
            f"""SELECT {_COLUMNS} FROM submission s JOIN account a ON a.id = s.account_id
                 WHERE ($1::int IS NULL OR a.user_id = $1) AND s.state IN ('pending', 'sending', 'failed', 'uncertain')
                 ORDER BY s.send_at, s.id""",
            user_id,
        )
        return [_submission(r) for r in rows]

    async def created_since(self, user_id: int, since: datetime) -> int:
        """Submissions the user made since then (whatever became of them): the send rate limit counts these."""
        return int(await self.db.fetchval(
            """SELECT count(*) FROM submission s JOIN account a ON a.id = s.account_id
                WHERE a.user_id = $1 AND s.created_at >= $2 AND s.state <> 'canceled'""",
            user_id, since,
        ))

    async def claim(self, submission_id: int) -> Submission | None:
        """Take a due pending submission for sending; None when it is not due, not pending, or another worker has it.
        One UPDATE decides, so two workers racing for one submission cannot both win."""
        row = await self.db.fetchrow(
            f"""UPDATE submission s SET state = 'sending', attempts = attempts + 1, updated_at = now()
                 WHERE s.id = $1 AND s.state = 'pending' AND s.send_at <= now()
                 RETURNING {_COLUMNS}""",
            submission_id,
        )
        return _submission(row) if row else None

    async def answer_of(self, submission_id: int) -> tuple[int | None, str | None]:
        row = await self.db.fetchrow("SELECT answers_message_id, answer_keyword FROM submission WHERE id = $1",
                                     submission_id)
        return (row["answers_message_id"], row["answer_keyword"]) if row else (None, None)

    async def retry_later(self, submission_id: int, error: str) -> None:
        await self.db.execute(
            "UPDATE submission SET state = 'pending', last_error = $2, updated_at = now() WHERE id = $1 "
            "AND state = 'sending'", submission_id, error[:1000])

    async def finish(self, submission_id: int, state: SubmissionState, *, error: str = "",
                     delivery: dict[str, dict[str, str]] | None = None, awaiting_copy: bool = False) -> None:
        await self.db.execute(
            """UPDATE submission SET state = $2::varchar, last_error = $3, delivery = coalesce($4::jsonb, delivery),
                                     awaiting_copy = $5, updated_at = now(),
                                     sent_at = CASE WHEN $2::varchar = 'sent' THEN now() ELSE sent_at END
                WHERE id = $1""",
            submission_id, state.value, error[:1000], json.dumps(delivery) if delivery is not None else None,
            awaiting_copy,
        )

    async def cancel(self, submission_id: int) -> bool:
        """Undo: only a submission nobody has started sending can be canceled."""
        status = await self.db.execute(
            "UPDATE submission SET state = 'canceled', updated_at = now() WHERE id = $1 AND state = 'pending'",
            submission_id)
        return status.endswith(" 1")

    async def overdue(self, grace_seconds: int, limit: int = 200) -> list[int]:
        """Pending submissions whose send time passed a while ago: their job was lost (a worker killed)."""
        rows = await self.db.fetch(
            """SELECT id FROM submission WHERE state = 'pending' AND send_at < now() - make_interval(secs => $1)
                ORDER BY send_at LIMIT $2""",
            grace_seconds, limit,
        )
        return [r["id"] for r in rows]

    async def stuck_sending(self, older_than_seconds: int) -> list[int]:
        """Submissions a worker claimed and never finished (it died mid-send): whether they went is unknown."""
        rows = await self.db.fetch(
            "SELECT id FROM submission WHERE state = 'sending' AND updated_at < now() - make_interval(secs => $1)",
            older_than_seconds,
        )
        return [r["id"] for r in rows]

    async def detach_message(self, message_id: int) -> None:
        """A draft deleted while a finished submission still names it: the submission stays, without it."""
        await self.db.execute("UPDATE submission SET message_id = NULL WHERE message_id = $1", message_id)

    async def adopt_copies(self, account_id: int, rfc_message_ids: Sequence[str]) -> dict[str, int]:
        """rfc Message-ID -> stored message id, for sent messages of the account whose provider files its own
        Sent copy, now that sync brought the copy; those submissions stop waiting for it."""
        if not rfc_message_ids:
            return {}
        rows = await self.db.fetch(
            """UPDATE submission s SET awaiting_copy = false, updated_at = now()
                 FROM message m
                WHERE s.account_id = $1 AND s.awaiting_copy AND m.id = s.message_id
                  AND m.rfc_message_id = ANY($2::text[])
                RETURNING m.rfc_message_id, m.id""",
            account_id, list(rfc_message_ids),
        )
        return {r["rfc_message_id"]: r["id"] for r in rows}
