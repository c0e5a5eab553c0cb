"""The JMAP provider's SQL: its own tables (`jmap_mailbox`, `jmap_email`, migration `2026-12-07T10:00`) and the
few writes it makes to stored messages when the upstream reports a change.

Every read of `jmap_email` joins `message`: a row whose message was never stored (a crash between noting the id
and the pipeline's commit) or has since been deleted counts as unknown.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from plmail.db.database import Database
from plmail.db.repos.threads import DeletedMessage

# A message whose local change of a kind (seen, starred, labels) the upstream has not been told about keeps its
# local state of that kind: the upstream's word is older than the user's (the EXISTS clauses in `apply`).


@dataclass(frozen=True, slots=True)
class UpstreamMailbox:
    mailbox_id: str
    label_id: int | None
    role: str | None
    name: str


@dataclass(frozen=True, slots=True)
class KnownEmail:
    email_id: str
    message_id: int
    thread_id: int | None


@dataclass(frozen=True, slots=True)
class EmailState:
    """What the upstream says of one stored message: read, flagged, and the labels of its mailboxes."""

    message_id: int
    seen: bool
    flagged: bool
    label_ids: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class LocalState:
    """A stored message as plmail has it now, for propagation."""

    message_id: int
    email_id: str
    seen: bool
    starred: bool
    label_ids: frozenset[int]


class JmapStore:
    def __init__(self, db: Database) -> None:
        self.db = db

    # -- mailboxes ------------------------------------------------------------------------------------------

    async def mailboxes(self, account_id: int) -> list[UpstreamMailbox]:
        rows = await self.db.fetch(
            "SELECT mailbox_id, label_id, role, name FROM jmap_mailbox WHERE account_id = $1 ORDER BY mailbox_id",
            account_id)
        return [UpstreamMailbox(r["mailbox_id"], r["label_id"], r["role"], r["name"]) for r in rows]

    async def put_mailboxes(self, account_id: int, found: Sequence[UpstreamMailbox]) -> None:
        if found:
            await self.db.execute(
                """INSERT INTO jmap_mailbox (account_id, mailbox_id, label_id, role, name)
                   SELECT $1, * FROM unnest($2::text[], $3::int[], $4::text[], $5::text[])
                   ON CONFLICT (account_id, mailbox_id) DO UPDATE
                       SET label_id = excluded.label_id, role = excluded.role, name = excluded.name""",
                account_id, [m.mailbox_id for m in found], [m.label_id for m in found], [m.role for m in found],
                [m.name for m in found])

    async def drop_mailboxes(self, account_id: int, mailbox_ids: Sequence[str]) -> None:
        if mailbox_ids:
            await self.db.execute("DELETE FROM jmap_mailbox WHERE account_id = $1 AND mailbox_id = ANY($2::text[])",
                                  account_id, list(mailbox_ids))

    # -- emails ---------------------------------------------------------------------------------------------

    async def known(self, account_id: int, email_ids: Sequence[str]) -> dict[str, KnownEmail]:
        if not email_ids:
            return {}
        rows = await self.db.fetch(
            """SELECT e.email_id, m.id, m.thread_id FROM jmap_email e JOIN message m ON m.id = e.message_id
                WHERE e.account_id = $1 AND m.account_id = $1 AND e.email_id = ANY($2::text[])""",
            account_id, list(email_ids))
        return {r["email_id"]: KnownEmail(r["email_id"], r["id"], r["thread_id"]) for r in rows}

    async def unmatched_by_rfc_id(self, account_id: int, rfc_ids: Sequence[str]) -> dict[str, tuple[int, int | None]]:
        """Message-ID -> (id, thread) of the account's stored messages with no upstream Email yet."""
        if not rfc_ids:
            return {}
        rows = await self.db.fetch(
            """SELECT DISTINCT ON (m.rfc_message_id) m.rfc_message_id, m.id, m.thread_id FROM message m
                WHERE m.account_id = $1 AND m.rfc_message_id = ANY($2::text[])
                  AND NOT EXISTS (SELECT 1 FROM jmap_email e WHERE e.account_id = $1 AND e.message_id = m.id)
                ORDER BY m.rfc_message_id, m.id""",
            account_id, list(rfc_ids))
        return {r["rfc_message_id"]: (r["id"], r["thread_id"]) for r in rows}

    async def note(self, account_id: int, pairs: Sequence[tuple[str, int]]) -> None:
        """Upstream Email id -> message id, noted before the message is stored (its id was allocated ahead)."""
        if pairs:
            await self.db.execute(
                """INSERT INTO jmap_email (account_id, email_id, message_id)
                   SELECT $1, * FROM unnest($2::text[], $3::bigint[])
                   ON CONFLICT (account_id, email_id) DO UPDATE SET message_id = excluded.message_id""",
                account_id, [p[0] for p in pairs], [p[1] for p in pairs])

    async def forget(self, account_id: int, email_ids: Sequence[str]) -> None:
        if email_ids:
            await self.db.execute("DELETE FROM jmap_email WHERE account_id = $1 AND email_id = ANY($2::text[])",
                                  account_id, list(email_ids))

    async def stored_count(self, account_id: int) -> int:
        return int(await self.db.fetchval(
            """SELECT count(*) FROM jmap_email e JOIN message m ON m.id = e.message_id
                WHERE e.account_id = $1 AND m.account_id = $1""", account_id))

    async def local_states(self, account_id: int, message_ids: Sequence[int]) -> list[LocalState]:
        rows = await self.db.fetch(
            """SELECT m.id, e.email_id, m.seen_at IS NOT NULL AS seen, m.starred_at IS NOT NULL AS starred,
                      coalesce((SELECT array_agg(ml.label_id) FROM message_label ml WHERE ml.message_id = m.id),
                               '{}') AS labels
                 FROM message m JOIN jmap_email e ON e.message_id = m.id AND e.account_id = m.account_id
                WHERE m.account_id = $1 AND m.id = ANY($2::bigint[])""",
            account_id, list(message_ids))
        return [LocalState(r["id"], r["email_id"], r["seen"], r["starred"], frozenset(r["labels"])) for r in rows]

    async def apply(self, account_id: int, states: Sequence[EmailState], mailbox_labels: Sequence[int]
                    ) -> tuple[set[int], set[int]]:
        """Make read, flagged and the mailbox labels of stored messages what the upstream says, except where a
        local change of that kind still waits to be propagated; labels that are no upstream mailbox (the user's
        own, Snoozed) stay. Returns (messages changed, labels put on or taken off)."""
        if not states:
            return set(), set()
        ids = [s.message_id for s in states]
        flagged = await self.db.fetch(
            """UPDATE message m SET
                       seen_at = CASE WHEN EXISTS (SELECT 1 FROM provider_change pc
                                       WHERE pc.message_id = m.id AND pc.kind = 'seen'
                                             AND pc.done_at IS NULL) THEN m.seen_at
                                      WHEN x.seen THEN coalesce(m.seen_at, now()) ELSE NULL END,
                       starred_at = CASE WHEN EXISTS (SELECT 1 FROM provider_change pc
                                       WHERE pc.message_id = m.id AND pc.kind = 'starred'
                                             AND pc.done_at IS NULL) THEN m.starred_at
                                         WHEN x.starred THEN coalesce(m.starred_at, now()) ELSE NULL END,
                       synced_at = now(), updated_at = now()
                  FROM unnest($2::bigint[], $3::bool[], $4::bool[]) AS x(id, seen, starred)
                 WHERE m.account_id = $1 AND m.id = x.id
                   AND ((m.seen_at IS NOT NULL) <> x.seen OR (m.starred_at IS NOT NULL) <> x.starred)
             RETURNING m.id""",
            account_id, ids, [s.seen for s in states], [s.flagged for s in states])
        wanted = [(s.message_id, label) for s in states for label in s.label_ids]
        removed = await self.db.fetch(
            """DELETE FROM message_label ml USING message m
                 WHERE m.id = ml.message_id AND m.account_id = $1 AND m.id = ANY($2::bigint[])
                   AND ml.label_id = ANY($3::int[]) AND NOT EXISTS (SELECT 1 FROM provider_change pc
                                       WHERE pc.message_id = m.id AND pc.kind = 'labels' AND pc.done_at IS NULL)
                   AND (ml.message_id, ml.label_id) NOT IN (SELECT * FROM unnest($4::bigint[], $5::int[]))
             RETURNING ml.message_id, ml.label_id""",
            account_id, ids, list(mailbox_labels), [w[0] for w in wanted], [w[1] for w in wanted])
        added = await self.db.fetch(
            """INSERT INTO message_label (message_id, label_id)
                SELECT x.m, x.l FROM unnest($2::bigint[], $3::int[]) AS x(m, l) JOIN message m ON m.id = x.m
                 WHERE m.account_id = $1 AND NOT EXISTS (SELECT 1 FROM provider_change pc
                                       WHERE pc.message_id = m.id AND pc.kind = 'labels' AND pc.done_at IS NULL)
                ON CONFLICT DO NOTHING RETURNING message_id, label_id""",
            account_id, [w[0] for w in wanted], [w[1] for w in wanted])
        changed = {r["id"] for r in flagged} | {r["message_id"] for r in (*removed, *added)}
        return changed, {r["label_id"] for r in (*removed, *added)}

    async def delete(self, account_id: int, email_ids: Sequence[str]) -> list[DeletedMessage]:
        """Delete the messages the upstream destroyed (parts, labels and links go with the rows)."""
        if not email_ids:
            return []
        rows = await self.db.fetch(
            """WITH doomed AS (
                   SELECT m.id, m.thread_id,
                          coalesce((SELECT array_agg(ml.label_id) FROM message_label ml WHERE ml.message_id = m.id),
                                   '{}') AS labels
                     FROM message m JOIN jmap_email e ON e.message_id = m.id
                    WHERE e.account_id = $1 AND m.account_id = $1 AND e.email_id = ANY($2::text[]))
               DELETE FROM message m USING doomed d WHERE m.id = d.id
               RETURNING d.id, d.thread_id, d.labels""",
            account_id, list(email_ids))
        await self.forget(account_id, email_ids)
        return [DeletedMessage(r["id"], r["thread_id"], tuple(r["labels"])) for r in rows]
