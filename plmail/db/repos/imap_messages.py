"""Messages as the IMAP syncer sees them: which UIDs are stored, what vanished, flags from the server,
re-pointing a known message at a new folder or UID, and the attempt count of messages that fail to store.

Jobs call these by mailbox or account id; they act for the account's owner.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from plmail.db.database import Database

GIVE_UP_PREFIX = "gave up after "


@dataclass(frozen=True, slots=True)
class MessageRef:
    id: int
    thread_id: int | None


@dataclass(frozen=True, slots=True)
class AdoptionCandidate:
    """A vanished message that may turn up again: moved by another client, or its folder renumbered."""

    id: int
    thread_id: int | None
    mailbox_id: int | None
    content_hash: str | None
    rfc_message_id: str | None
    old_label_id: int | None


@dataclass(frozen=True, slots=True)
class GmailCopy:
    """A message a Gmail account of the same user stores, which an IMAP sibling may have the better claim on."""

    id: int
    account_id: int
    gmail_id: str
    gmail_thread_key: str | None
    thread_id: int | None
    rfc_message_id: str
    provider_labels: tuple[str, ...] | None
    ai_category: str | None


@dataclass(frozen=True, slots=True)
class TakenOver:
    """A row as it was in the account it was taken from."""

    id: int
    account_id: int
    thread_id: int | None
    labels: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class ServerFlags:
    uid: int
    flags: tuple[str, ...]  # sorted

    @property
    def seen(self) -> bool:
        return "\\Seen" in self.flags

    @property
    def starred(self) -> bool:
        return "\\Flagged" in self.flags


def _like_prefix(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


# The server's \Seen and \Flagged win unless the user changed that state here and the provider has not
# confirmed it yet, or confirmed it only after the server's flags were read (`$listed_at`).
_FLAG_STATE = """
    seen_at = CASE WHEN EXISTS (SELECT 1 FROM provider_change pc WHERE pc.message_id = m.id AND pc.kind = 'seen'
                                   AND (pc.done_at IS NULL OR pc.done_at >= $LISTED))
                   THEN m.seen_at WHEN x.seen THEN coalesce(m.seen_at, now()) ELSE NULL END,
    starred_at = CASE WHEN EXISTS (SELECT 1 FROM provider_change pc WHERE pc.message_id = m.id
                                      AND pc.kind = 'starred' AND (pc.done_at IS NULL OR pc.done_at >= $LISTED))
                      THEN m.starred_at WHEN x.starred THEN coalesce(m.starred_at, now()) ELSE NULL END"""


class ImapMessageRepository:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def now(self) -> datetime:
        value: datetime = await self.db.fetchval("SELECT clock_timestamp()")
        return value

    # -- what is stored ------------------------------------------------------------------------------

    async def stored_uids(self, mailbox_id: int, uids: Sequence[int]) -> set[int]:
        if not uids:
            return set()
        rows = await self.db.fetch(
            "SELECT provider_key FROM message WHERE provider_container = $1 AND provider_key = ANY($2::text[])",
            str(mailbox_id), [str(u) for u in uids],
        )
        return {int(r["provider_key"]) for r in rows}

    async def stored_uids_between(self, mailbox_id: int, low: int, high: int) -> set[int]:
        rows = await self.db.fetch(
            # A UID as a number, for a range: the expression `idx_message_key_number` indexes (foldered rows only).
            """SELECT provider_key FROM message
                WHERE provider_container = $1 AND provider_container <> ''
                  AND plmail_key_number(provider_key) BETWEEN $2 AND $3""",
            str(mailbox_id), low, high,
        )
        return {int(r["provider_key"]) for r in rows}

    async def live_uids(self, mailbox_id: int) -> set[int]:
        rows = await self.db.fetch(
            "SELECT provider_key FROM message WHERE provider_container = $1 AND provider_key IS NOT NULL "
            "AND vanished_at IS NULL",
            str(mailbox_id),
        )
        return {int(r["provider_key"]) for r in rows}

    # -- gone from the server ----------------------------------------------------------------------

    async def mark_vanished(self, mailbox_id: int, uids: Sequence[int]) -> list[MessageRef]:
        """The last listing did not find them here; that is not yet a delete (another folder may hold them)."""
        if not uids:
            return []
        rows = await self.db.fetch(
            """UPDATE message SET vanished_at = now(), updated_at = now()
                WHERE provider_container = $1 AND provider_key = ANY($2::text[]) AND vanished_at IS NULL
            RETURNING id, thread_id""",
            str(mailbox_id), [str(u) for u in uids],
        )
        return [MessageRef(r["id"], r["thread_id"]) for r in rows]

    async def orphan_folder(self, mailbox_id: int) -> int:
        """UIDVALIDITY changed: every stored UID of the folder is meaningless now. The rows wait, vanished and
        without a UID, for the re-import to match them up again."""
        status = await self.db.execute(
            """UPDATE message SET vanished_at = coalesce(vanished_at, now()), provider_key = NULL, updated_at = now()
                WHERE mailbox_id = $1""",
            mailbox_id,
        )
        return int(status.split()[-1])

    async def vanish_folder(self, mailbox_id: int) -> int:
        """The folder is gone from the server."""
        status = await self.db.execute(
            "UPDATE message SET vanished_at = now(), updated_at = now() WHERE mailbox_id = $1 AND vanished_at IS NULL",
            mailbox_id,
        )
        return int(status.split()[-1])

    async def has_vanished(self, account_id: int) -> bool:
        return bool(await self.db.fetchval(
            "SELECT EXISTS (SELECT 1 FROM message WHERE account_id = $1 AND vanished_at IS NOT NULL)", account_id
        ))

    async def vanished_labels(self, account_id: int) -> list[int]:
        rows = await self.db.fetch(
            """SELECT DISTINCT ml.label_id FROM message m JOIN message_label ml ON ml.message_id = m.id
                WHERE m.account_id = $1 AND m.vanished_at IS NOT NULL""",
            account_id,
        )
        return [r["label_id"] for r in rows]

    async def delete_vanished(self, account_id: int) -> list[MessageRef]:
        """Remove what no folder holds any more (parts, labels and links go with the rows)."""
        rows = await self.db.fetch(
            "DELETE FROM message WHERE account_id = $1 AND vanished_at IS NOT NULL RETURNING id, thread_id",
            account_id,
        )
        return [MessageRef(r["id"], r["thread_id"]) for r in rows]

    # -- turning up again ------------------------------------------------------------------------------

    async def adoption_candidates(
        self, account_id: int, hashes: Sequence[str], message_ids: Sequence[str]
    ) -> list[AdoptionCandidate]:
        rows = await self.db.fetch(
            """SELECT m.id, m.thread_id, m.mailbox_id, m.content_hash, m.rfc_message_id, b.label_id AS old_label_id
                 FROM message m LEFT JOIN label_binding b ON b.mailbox_id = m.mailbox_id
                WHERE m.account_id = $1 AND m.vanished_at IS NOT NULL
                  AND (m.content_hash = ANY($2::text[]) OR m.rfc_message_id = ANY($3::text[]))
                ORDER BY m.id""",
            account_id, list(hashes), list(message_ids),
        )
        return [AdoptionCandidate(r["id"], r["thread_id"], r["mailbox_id"], r["content_hash"], r["rfc_message_id"],
                                  r["old_label_id"]) for r in rows]

    async def repoint(
        self, candidate: AdoptionCandidate, *, mailbox_id: int, uid: int, server: ServerFlags, label_id: int | None,
        listed_at: datetime,
    ) -> None:
        """The known row now lives at (mailbox, uid): it keeps its id, thread and the user's own labels; only the
        location label follows the folder."""
        await self.db.execute(
            f"""UPDATE message m SET mailbox_id = $2, provider_container = $8, provider_key = $3,
                       vanished_at = NULL, flags = x.flags::jsonb,
                       synced_at = now(), updated_at = now(), {_FLAG_STATE.replace('$LISTED', '$7')}
                  FROM (SELECT $4::bool AS seen, $5::bool AS starred, $6::text AS flags) x
                 WHERE m.id = $1""",
            candidate.id, mailbox_id, str(uid), server.seen, server.starred, json.dumps(list(server.flags)), listed_at,
            str(mailbox_id),
        )
        if label_id is not None and candidate.old_label_id is not None and candidate.old_label_id != label_id:
            await self.db.execute("DELETE FROM message_label WHERE message_id = $1 AND label_id = $2",
                                  candidate.id, candidate.old_label_id)
        if label_id is not None:
            await self.db.execute(
                "INSERT INTO message_label (message_id, label_id) VALUES ($1, $2) ON CONFLICT DO NOTHING",
                candidate.id, label_id,
            )

    # -- Gmailify --------------------------------------------------------------------------------------

    async def gmail_copies(self, user_id: int, rfc_ids: Sequence[str]) -> list[GmailCopy]:
        """Rows of the user's Gmail accounts with these Message-IDs, oldest first."""
        if not rfc_ids:
            return []
        rows = await self.db.fetch(
            """SELECT m.id, m.account_id, m.provider_key, m.provider_thread_key, m.thread_id, m.rfc_message_id,
                      m.provider_labels, m.ai_category
                 FROM message m JOIN account a ON a.id = m.account_id
                WHERE m.rfc_message_id = ANY($2::text[]) AND a.user_id = $1 AND a.provider_kind = 'gmail'
                  AND m.provider_key IS NOT NULL
                ORDER BY m.id""",
            user_id, list(rfc_ids),
        )
        copies = []
        for r in rows:
            labels = json.loads(r["provider_labels"]) if isinstance(r["provider_labels"], str) else r["provider_labels"]
            copies.append(GmailCopy(r["id"], r["account_id"], r["provider_key"], r["provider_thread_key"],
                                    r["thread_id"], r["rfc_message_id"],
                                    tuple(labels) if isinstance(labels, list) else None, r["ai_category"]))
        return copies

    async def take_over(self, account_id: int, mailbox_id: int, label_id: int | None,
                        rows: Sequence[tuple[int, ServerFlags]]) -> list[TakenOver]:
        """Re-point rows of another account at (this account, mailbox, uid): same id, read state and the user's
        own labels; the place labels follow the folder, the provider's ids go, the thread is chosen anew."""
        if not rows:
            return []
        ids = [r[0] for r in rows]
        before = await self.db.fetch(
            """SELECT m.id, m.account_id, m.thread_id,
                      coalesce((SELECT array_agg(ml.label_id ORDER BY ml.label_id) FROM message_label ml
                                 WHERE ml.message_id = m.id), '{}') AS labels
                 FROM message m WHERE m.id = ANY($1::bigint[]) ORDER BY m.id FOR UPDATE""",
            ids,
        )
        await self.db.execute(
            """UPDATE message m
                  SET account_id = $1, mailbox_id = $2, provider_container = $6, provider_key = x.uid::text,
                      flags = x.flags::jsonb, provider_labels = NULL, provider_thread_key = NULL,
                      thread_id = NULL, vanished_at = NULL, synced_at = now(), updated_at = now()
                 FROM unnest($3::bigint[], $4::bigint[], $5::text[]) AS x(i, uid, flags)
                WHERE m.id = x.i""",
            account_id, mailbox_id, ids, [r[1].uid for r in rows], [json.dumps(list(r[1].flags)) for r in rows],
            str(mailbox_id),
        )
        await self.db.execute(
            """DELETE FROM message_label ml USING label l
                WHERE ml.label_id = l.id AND l.role IS NOT NULL AND ml.message_id = ANY($1::bigint[])""",
            ids,
        )
        if label_id is not None:
            await self.db.execute(
                """INSERT INTO message_label (message_id, label_id) SELECT i, $2 FROM unnest($1::bigint[]) AS x(i)
                   ON CONFLICT DO NOTHING""",
                ids, label_id,
            )
        return [TakenOver(r["id"], r["account_id"], r["thread_id"], tuple(r["labels"])) for r in before]

    # -- flags from the server -------------------------------------------------------------------------

    async def apply_flags(self, mailbox_id: int, states: Sequence[ServerFlags], listed_at: datetime
                          ) -> list[MessageRef]:
        """Write the server's flags where they differ, into seen_at and starred_at: unread follows seen_at, never
        the \\Seen flag read back as truth, which would let the two drift apart in the more confusing direction."""
        if not states:
            return []
        rows = await self.db.fetch(
            f"""UPDATE message m SET flags = x.flags::jsonb, synced_at = now(), updated_at = now(),
                       {_FLAG_STATE.replace('$LISTED', '$6')}
                  FROM unnest($2::bigint[], $3::bool[], $4::bool[], $5::text[]) AS x(uid, seen, starred, flags)
                 WHERE m.provider_container = $1 AND m.provider_key = x.uid::text AND m.vanished_at IS NULL
                   AND m.flags_touched_at IS NULL
                   AND (m.flags IS DISTINCT FROM x.flags::jsonb OR (m.seen_at IS NOT NULL) <> x.seen
                        OR (m.starred_at IS NOT NULL) <> x.starred)
             RETURNING m.id, m.thread_id""",
            str(mailbox_id), [s.uid for s in states], [s.seen for s in states], [s.starred for s in states],
            [json.dumps(list(s.flags)) for s in states], listed_at,
        )
        return [MessageRef(r["id"], r["thread_id"]) for r in rows]

    # -- messages that would not store ---------------------------------------------------------------

    async def skip_attempts(self, account_id: int, refs: Sequence[str]) -> dict[str, tuple[int, bool]]:
        """source ref -> (failed attempts noted, given up)."""
        if not refs:
            return {}
        rows = await self.db.fetch(
            """SELECT source_ref, count(*) AS n, bool_or(starts_with(reason, $3)) AS given_up FROM ingest_skip
                WHERE account_id = $1 AND source_ref = ANY($2::text[]) GROUP BY source_ref""",
            account_id, list(refs), GIVE_UP_PREFIX,
        )
        return {r["source_ref"]: (int(r["n"]), bool(r["given_up"])) for r in rows}

    async def given_up_uids(self, account_id: int, path: str) -> set[int]:
        rows = await self.db.fetch(
            """SELECT source_ref FROM ingest_skip
                WHERE account_id = $1 AND source_ref LIKE $2 AND starts_with(reason, $3)""",
            account_id, _like_prefix(path + ":") + "%", GIVE_UP_PREFIX,
        )
        found: set[int] = set()
        for r in rows:
            tail = str(r["source_ref"]).rsplit(":", 1)[-1]
            if tail.isdigit():
                found.add(int(tail))
        return found

    async def record_skip(self, account_id: int, ref: str, reason: str, content_hash: str | None) -> None:
        await self.db.execute(
            "INSERT INTO ingest_skip (account_id, source_ref, reason, content_hash, created_at) "
            "VALUES ($1, $2, $3, $4, now())",
            account_id, ref[:1000], reason[:4000], content_hash,
        )

    async def give_up(self, account_id: int, ref: str, attempts: int) -> None:
        """Replace the attempts' notes by one that says the message was given up, with the last reason."""
        await self.db.execute(
            """WITH gone AS (DELETE FROM ingest_skip WHERE account_id = $1 AND source_ref = $2
                             RETURNING reason, content_hash, created_at)
               INSERT INTO ingest_skip (account_id, source_ref, reason, content_hash, created_at)
               SELECT $1, $2, $3 || $4::text || ' attempts: ' || coalesce(
                          (SELECT reason FROM gone ORDER BY created_at DESC LIMIT 1), 'unknown'),
                      (SELECT content_hash FROM gone WHERE content_hash IS NOT NULL LIMIT 1), now()""",
            account_id, ref, GIVE_UP_PREFIX, str(attempts),
        )

    async def forget_skips(self, account_id: int, refs: Sequence[str]) -> None:
        """A message that did store after all loses its notes."""
        if refs:
            await self.db.execute(
                "DELETE FROM ingest_skip WHERE account_id = $1 AND source_ref = ANY($2::text[])", account_id, list(refs)
            )

    async def forget_folder_skips(self, account_id: int, path: str) -> None:
        """The folder was renumbered: its notes name UIDs that mean nothing now."""
        await self.db.execute(
            "DELETE FROM ingest_skip WHERE account_id = $1 AND source_ref LIKE $2",
            account_id, _like_prefix(path + ":") + "%",
        )
