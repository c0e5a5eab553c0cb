"""The outbox: submissions, the atomic claim that lets exactly one worker send each, and what became of them."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any

import asyncpg

from plmail.db.database import Database
from plmail.domain.ingest import ProviderRef, ref_from_json, ref_json
from plmail.domain.outgoing import Envelope, OutboxEntry, Submission, SubmissionQuery, SubmissionState

_COLUMNS = ("s.id, s.account_id, s.message_id, s.identity_id, s.envelope, s.send_at, s.state, s.attempts, "
            "s.last_error, s.delivery, s.created_at, s.updated_at, s.sent_at, s.origin, s.raw_path, s.draft_ref, "
            "s.thread_key, s.email_id, s.thread_id")


# EmailSubmission/query's sort properties; sentAt is when it goes (or went).
_SORT_COLUMNS = {"emailId": "s.email_id", "threadId": "s.thread_id", "sentAt": "s.send_at"}


def _array(values: Sequence[int] | None) -> list[int] | None:
    return list(values) if values is not None else None


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
        raw_path=row["raw_path"], draft_ref=ref_from_json(_json(row["draft_ref"])), thread_key=row["thread_key"],
        email_id=row["email_id"], thread_id=row["thread_id"],
    )


class SubmissionRepository:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def create(self, *, account_id: int, message_id: int, identity_id: int, envelope: Envelope,
                     send_at: datetime, origin: str, answers_message_id: int | None, answer_keyword: str | None,
                     raw_path: str, draft_ref: ProviderRef | None, thread_key: str | None) -> int:
        draft = ref_json(draft_ref)
        value = await self.db.fetchval(
            """INSERT INTO submission (account_id, message_id, identity_id, envelope, send_at, state, attempts,
                                       last_error, delivery, answers_message_id, answer_keyword, awaiting_copy,
                                       origin, raw_path, draft_ref, thread_key, email_id, thread_id, created_at,
                                       updated_at)
               SELECT $1, $2, $3, $4::jsonb, $5, 'pending', 0, '', '{}', $6, $7, false, $8, $9, $10::jsonb, $11,
                      $2, m.thread_id, now(), now()
                 FROM message m WHERE m.id = $2
               RETURNING id""",
            account_id, message_id, identity_id, envelope_json(envelope), send_at, answers_message_id, answer_keyword,
            origin, raw_path, json.dumps(draft) if draft is not None else None, thread_key,
        )
        return int(value)

    async def set_draft_ref(self, message_id: int, ref: ProviderRef) -> None:
        """The provider stored the draft after it was submitted: the submission removes that one once it went."""
        await self.db.execute(
            "UPDATE submission SET draft_ref = $2::jsonb, updated_at = now() WHERE message_id = $1 "
            "AND state IN ('pending', 'sending')", message_id, json.dumps(ref_json(ref)))

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

    async def query(self, account_ids: Sequence[int], query: SubmissionQuery, *, limit: int = 10_000) -> list[int]:
        # as Submission.undo_status maps them
        states = {"pending": ["pending", "sending"], "canceled": ["canceled", "failed"],
                  "final": ["sent", "uncertain"]}.get(query.undo_status or "")
        order = ", ".join(f"{_SORT_COLUMNS[name]} {'ASC' if ascending else 'DESC'} NULLS LAST"
                          for name, ascending in query.sort) or "s.id"
        rows = await self.db.fetch(
            f"""SELECT s.id FROM submission s
                 WHERE s.account_id = ANY($1::bigint[])
                   AND ($2::int[] IS NULL OR s.identity_id = ANY($2::int[]))
                   AND ($3::bigint[] IS NULL OR s.email_id = ANY($3::bigint[]))
                   AND ($4::bigint[] IS NULL OR s.thread_id = ANY($4::bigint[]))
                   AND ($5::text[] IS NULL OR s.state = ANY($5::text[]))
                   AND ($6::timestamptz IS NULL OR s.send_at < $6)
                   AND ($7::timestamptz IS NULL OR s.send_at >= $7)
                 ORDER BY {order}, s.id LIMIT $8""",
            list(account_ids), _array(query.identity_ids), _array(query.email_ids), _array(query.thread_ids), states,
            query.before, query.after, limit,
        )
        return [r["id"] for r in rows]

    async def outbox(self, user_id: int | None, *, limit: int = 1000) -> list[OutboxEntry]:
        """What has not gone (pending, scheduled, sending) or went wrong (failed, may have been sent), oldest send
        time first; a user's, or everyone's for the operator."""
        rows = await self.db.fetch(
            f"""SELECT {_COLUMNS}, a.email AS account_email, coalesce(m.subject, '') AS subject
                  FROM submission s JOIN account a ON a.id = s.account_id LEFT JOIN message m ON m.id = s.message_id
                 WHERE ($1::int IS NULL OR a.user_id = $1) AND s.state IN ('pending', 'sending', 'failed', 'uncertain')
                 ORDER BY s.send_at, s.id LIMIT $2""",
            user_id, limit,
        )
        return [OutboxEntry(_submission(r), r["account_email"], r["subject"]) for r in rows]

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
                   AND NOT EXISTS (SELECT 1 FROM account a JOIN app_user u ON u.id = a.user_id
                                    WHERE a.id = s.account_id AND u.disabled_at IS NOT NULL)
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
            """UPDATE submission SET state = $2::text, last_error = $3, delivery = coalesce($4::jsonb, delivery),
                                     awaiting_copy = $5, updated_at = now(),
                                     sent_at = CASE WHEN $2::text = 'sent' THEN now() ELSE sent_at END
                WHERE id = $1""",
            submission_id, state.value, error[:1000], json.dumps(delivery) if delivery is not None else None,
            awaiting_copy,
        )

    async def pending_of_disabled(self, user_id: int | None = None, submission_id: int | None = None
                                  ) -> list[Submission]:
        """Pending submissions whose owner is disabled: of one user, or the one submission given."""
        rows = await self.db.fetch(
            f"""SELECT {_COLUMNS} FROM submission s JOIN account a ON a.id = s.account_id
                                  JOIN app_user u ON u.id = a.user_id
                 WHERE s.state = 'pending' AND u.disabled_at IS NOT NULL
                   AND ($1::int IS NULL OR a.user_id = $1) AND ($2::bigint IS NULL OR s.id = $2)""",
            user_id, submission_id,
        )
        return [_submission(row) for row in rows]

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

    async def stop_awaiting_copies(self, older_than_seconds: int) -> int:
        """Sent long enough ago that the provider's copy came (or never will): adoption stops looking."""
        status = await self.db.execute(
            "UPDATE submission SET awaiting_copy = false WHERE awaiting_copy "
            "AND sent_at < now() - make_interval(secs => $1)", older_than_seconds)
        return int(status.split()[-1])

    async def detach_message(self, message_id: int) -> None:
        """A message deleted while a submission names it: the submission stays, without it and without its
        provider draft (deleted with it)."""
        await self.db.execute("UPDATE submission SET message_id = NULL, draft_ref = NULL WHERE message_id = $1",
                              message_id)

    async def answered_by(self, message_id: int) -> int | None:
        """The message of the same account that this one's In-Reply-To names."""
        value = await self.db.fetchval(
            """SELECT p.id FROM message m
                 JOIN message p ON p.account_id = m.account_id AND p.rfc_message_id = m.in_reply_to ->> 0
                WHERE m.id = $1 AND jsonb_typeof(m.in_reply_to) = 'array' AND p.id <> m.id
                ORDER BY p.id LIMIT 1""",
            message_id)
        return int(value) if value is not None else None

    async def delete(self, submission_id: int) -> bool:
        """A finished submission forgotten (JMAP's destroy); one still to go cannot be."""
        status = await self.db.execute(
            "DELETE FROM submission WHERE id = $1 AND state NOT IN ('pending', 'sending')", submission_id)
        return status.endswith(" 1")

    async def cancel_pending_for(self, message_id: int) -> list[int]:
        rows = await self.db.fetch(
            "UPDATE submission SET state = 'canceled', updated_at = now() WHERE message_id = $1 AND state = 'pending' "
            "RETURNING id", message_id)
        return [r["id"] for r in rows]

    async def attach_message(self, submission_id: int, message_id: int) -> None:
        """A restored draft: the submission (and JMAP's emailId) name it from now on."""
        await self.db.execute(
            "UPDATE submission s SET message_id = $2, email_id = $2, thread_id = m.thread_id FROM message m "
            "WHERE s.id = $1 AND m.id = $2", submission_id, message_id)

    async def latest_for_message(self, user_id: int, message_id: int) -> Submission | None:
        """The newest submission of this stored message, if the user made one."""
        row = await self.db.fetchrow(
            f"""SELECT {_COLUMNS} FROM submission s JOIN account a ON a.id = s.account_id
                 WHERE a.user_id = $1 AND s.message_id = $2 ORDER BY s.created_at DESC, s.id DESC LIMIT 1""",
            user_id, message_id,
        )
        return _submission(row) if row else None
