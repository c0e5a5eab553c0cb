"""Gmail accounts' mail as the Gmail syncer, importer and propagator see it: which ids are stored or noted,
the notes themselves (gmail_skipped_message), label bindings by Gmail id, relabels and deletions.

Raw SQL because every lookup here is a set of ids checked against the unique index of provider references
(a Gmail message id is its key, in the account-wide container '').
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from plmail.db.database import Database
from plmail.db.repos.threads import DeletedMessage
from plmail.domain.enums import LabelRole, ProviderKind


@dataclass(frozen=True, slots=True)
class SkippedNote:
    gmail_id: str
    reason: str  # chat | gone | gmailify
    thread_id: str | None = None
    label_ids: tuple[str, ...] | None = None
    from_address: str | None = None
    to_addresses: tuple[str, ...] = ()
    cc_addresses: tuple[str, ...] = ()
    delivered_to: tuple[str, ...] = ()
    subject: str | None = None
    detail: str = ""


@dataclass(frozen=True, slots=True)
class SkippedSummary:
    account_id: int
    email: str
    reason: str
    count: int
    latest: datetime | None


@dataclass(frozen=True, slots=True)
class GmailBinding:
    label_id: int
    binding_id: int
    gmail_label_id: str | None
    role: LabelRole | None
    path: str  # "Work/Invoices"


@dataclass(frozen=True, slots=True)
class StoredGmailMessage:
    """A stored message as a relabel reads it."""

    id: int
    gmail_id: str
    thread_id: int | None
    provider_labels: tuple[str, ...] | None
    from_address: str | None
    headers: dict[str, Any]
    category: str | None
    ai_category: str | None
    seen: bool
    starred: bool
    labels: frozenset[int]
    pending_change: bool  # plmail changed it and the change has not reached Gmail yet


@dataclass(frozen=True, slots=True)
class Sibling:
    """Another account of the same user, with the addresses it receives mail for."""

    id: int
    kind: ProviderKind
    addresses: frozenset[str]


def _json(value: Any) -> Any:
    return json.loads(value) if isinstance(value, str) else value


class GmailMessageRepository:
    def __init__(self, db: Database) -> None:
        self.db = db

    # -- what is here ------------------------------------------------------------------------------------
    async def known(self, account_id: int, gmail_ids: Sequence[str]) -> set[str]:
        """Ids stored as messages or noted as skipped: the listing treats both as done. So are the messages of
        drafts plmail wrote (gmail_draft): stored here already, or sent or replaced and about to be removed."""
        if not gmail_ids:
            return set()
        rows = await self.db.fetch(
            """SELECT x.g FROM unnest($2::text[]) AS x(g)
                WHERE EXISTS (SELECT 1 FROM message m WHERE m.provider_container = '' AND m.provider_key = x.g
                                AND m.account_id = $1)
                   OR EXISTS (SELECT 1 FROM gmail_skipped_message s WHERE s.gmail_id = x.g AND s.account_id = $1)
                   OR EXISTS (SELECT 1 FROM gmail_draft d WHERE d.gmail_message_id = x.g AND d.account_id = $1)""",
            account_id, list(gmail_ids),
        )
        return {r["g"] for r in rows}

    async def stored(self, account_id: int, gmail_ids: Sequence[str]) -> set[str]:
        if not gmail_ids:
            return set()
        rows = await self.db.fetch(
            "SELECT provider_key FROM message "
            "WHERE provider_container = '' AND provider_key = ANY($2::text[]) AND account_id = $1",
            account_id, list(gmail_ids),
        )
        return {r["provider_key"] for r in rows}

    async def counts(self, account_id: int) -> tuple[int, int]:
        """(messages stored with a Gmail id, ids noted as skipped)."""
        row = await self.db.fetchrow(
            """SELECT (SELECT count(*) FROM message WHERE account_id = $1 AND provider_key IS NOT NULL) AS stored,
                      (SELECT count(*) FROM gmail_skipped_message WHERE account_id = $1) AS skipped""",
            account_id,
        )
        assert row is not None
        return int(row["stored"]), int(row["skipped"])

    # -- skipped notes -----------------------------------------------------------------------------------
    async def note_skipped(self, account_id: int, notes: Sequence[SkippedNote]) -> None:
        if not notes:
            return
        await self.db.execute(
            """INSERT INTO gmail_skipped_message (account_id, gmail_id, gmail_thread_id, reason, label_ids,
                                                  from_address, to_addresses, cc_addresses, delivered_to, subject,
                                                  detail, created_at)
               SELECT $1, x.g, x.t, x.r, x.l::jsonb, x.f, x.to_::jsonb, x.cc::jsonb, x.d::jsonb, x.s, x.dt, now()
                 FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[],
                             $9::text[], $10::text[], $11::text[]) AS x(g, t, r, l, f, to_, cc, d, s, dt)
               ON CONFLICT (gmail_id, account_id) DO UPDATE
                  SET reason = EXCLUDED.reason, gmail_thread_id = EXCLUDED.gmail_thread_id,
                      label_ids = EXCLUDED.label_ids, from_address = EXCLUDED.from_address,
                      to_addresses = EXCLUDED.to_addresses, cc_addresses = EXCLUDED.cc_addresses,
                      delivered_to = EXCLUDED.delivered_to, subject = EXCLUDED.subject, detail = EXCLUDED.detail""",
            account_id, [n.gmail_id for n in notes], [n.thread_id for n in notes], [n.reason for n in notes],
            [json.dumps(list(n.label_ids)) if n.label_ids is not None else None for n in notes],
            [n.from_address for n in notes], [json.dumps(list(n.to_addresses)) for n in notes],
            [json.dumps(list(n.cc_addresses)) for n in notes], [json.dumps(list(n.delivered_to)) for n in notes],
            [n.subject for n in notes], [n.detail[:2000] for n in notes],
        )

    async def forget_skipped(self, account_id: int, gmail_ids: Sequence[str]) -> int:
        """A note disappears when its message is stored after all."""
        if not gmail_ids:
            return 0
        status = await self.db.execute(
            "DELETE FROM gmail_skipped_message WHERE account_id = $1 AND gmail_id = ANY($2::text[])",
            account_id, list(gmail_ids),
        )
        return int(status.rsplit(" ", 1)[-1])

    async def forget_account(self, account_id: int) -> int:
        status = await self.db.execute("DELETE FROM gmail_skipped_message WHERE account_id = $1", account_id)
        return int(status.rsplit(" ", 1)[-1])

    async def skipped_summary(self, account_id: int | None = None) -> list[SkippedSummary]:
        rows = await self.db.fetch(
            """SELECT s.account_id, a.email, s.reason, count(*) AS n, max(s.created_at) AS latest
                 FROM gmail_skipped_message s JOIN account a ON a.id = s.account_id
                WHERE ($1::int IS NULL OR s.account_id = $1)
                GROUP BY s.account_id, a.email, s.reason ORDER BY s.account_id, s.reason""",
            account_id,
        )
        return [SkippedSummary(r["account_id"], r["email"], r["reason"], int(r["n"]), r["latest"]) for r in rows]

    async def skipped_ids(self, account_id: int) -> dict[str, str]:
        rows = await self.db.fetch(
            "SELECT gmail_id, reason FROM gmail_skipped_message WHERE account_id = $1", account_id)
        return {r["gmail_id"]: r["reason"] for r in rows}

    # -- labels --------------------------------------------------------------------------------------------
    async def bindings(self, account_id: int) -> list[GmailBinding]:
        """The account's label bindings with the label's role and full path."""
        rows = await self.db.fetch(
            """WITH RECURSIVE chain AS (
                   SELECT l.id, l.parent_id, l.name::text AS path FROM label l
                    WHERE l.user_id = (SELECT user_id FROM account WHERE id = $1) AND l.parent_id IS NULL
                   UNION ALL
                   SELECT c.id, c.parent_id, p.path || '/' || c.name FROM label c JOIN chain p ON c.parent_id = p.id
               )
               SELECT b.id AS binding_id, b.label_id, b.provider_key AS gmail_label_id, l.role, chain.path
                 FROM label_binding b JOIN label l ON l.id = b.label_id JOIN chain ON chain.id = l.id
                WHERE b.account_id = $1""",
            account_id,
        )
        return [GmailBinding(r["label_id"], r["binding_id"], r["gmail_label_id"],
                             LabelRole(r["role"]) if r["role"] else None, r["path"]) for r in rows]

    async def label_paths(self, user_id: int, label_ids: Sequence[int]) -> dict[int, tuple[LabelRole | None, str]]:
        """(role, "Parent/Child") of the user's labels."""
        if not label_ids:
            return {}
        rows = await self.db.fetch(
            """WITH RECURSIVE chain AS (
                   SELECT l.id, l.parent_id, l.role, l.name::text AS path FROM label l
                    WHERE l.user_id = $1 AND l.parent_id IS NULL
                   UNION ALL
                   SELECT c.id, c.parent_id, c.role, p.path || '/' || c.name FROM label c
                     JOIN chain p ON c.parent_id = p.id
               )
               SELECT id, role, path FROM chain WHERE id = ANY($2::int[])""",
            user_id, list(label_ids),
        )
        return {r["id"]: (LabelRole(r["role"]) if r["role"] else None, r["path"]) for r in rows}

    # -- relabels ------------------------------------------------------------------------------------------
    async def for_relabel(self, account_id: int, gmail_ids: Sequence[str]) -> list[StoredGmailMessage]:
        if not gmail_ids:
            return []
        rows = await self.db.fetch(
            """SELECT m.id, m.provider_key AS gmail_id, m.thread_id, m.provider_labels, m.from_address, m.headers,
                      m.category,
                      m.ai_category, m.seen_at IS NOT NULL AS seen, m.starred_at IS NOT NULL AS starred,
                      coalesce((SELECT array_agg(ml.label_id) FROM message_label ml WHERE ml.message_id = m.id),
                               '{}') AS labels,
                      EXISTS (SELECT 1 FROM provider_change pc WHERE pc.message_id = m.id AND pc.done_at IS NULL)
                          AS pending
                 FROM message m WHERE m.provider_container = '' AND m.provider_key = ANY($2::text[])
                  AND m.account_id = $1 ORDER BY m.id""",
            account_id, list(gmail_ids),
        )
        result: list[StoredGmailMessage] = []
        for r in rows:
            labels = _json(r["provider_labels"])
            headers = _json(r["headers"])
            result.append(StoredGmailMessage(
                r["id"], r["gmail_id"], r["thread_id"],
                tuple(str(x) for x in labels) if isinstance(labels, list) else None, r["from_address"],
                headers if isinstance(headers, dict) else {}, r["category"], r["ai_category"], r["seen"],
                r["starred"], frozenset(r["labels"]), r["pending"],
            ))
        return result

    async def update_gmail_state(self, rows: Sequence[tuple[int, list[str], str, bool, bool]]) -> None:
        """(message id, Gmail labels, category, seen, starred): what a relabel read from Gmail."""
        if not rows:
            return
        await self.db.execute(
            """UPDATE message m
                  SET provider_labels = x.l::jsonb, category = x.c,
                      seen_at = CASE WHEN x.s THEN coalesce(m.seen_at, now()) ELSE NULL END,
                      starred_at = CASE WHEN x.f THEN coalesce(m.starred_at, now()) ELSE NULL END,
                      updated_at = now()
                 FROM unnest($1::bigint[], $2::text[], $3::text[], $4::bool[], $5::bool[]) AS x(i, l, c, s, f)
                WHERE m.id = x.i""",
            [r[0] for r in rows], [json.dumps(r[1]) for r in rows], [r[2] for r in rows], [r[3] for r in rows],
            [r[4] for r in rows],
        )

    async def replace_labels(self, adds: Sequence[tuple[int, int]], removes: Sequence[tuple[int, int]]) -> None:
        if removes:
            await self.db.execute(
                """DELETE FROM message_label ml USING unnest($1::bigint[], $2::int[]) AS x(m, l)
                    WHERE ml.message_id = x.m AND ml.label_id = x.l""",
                [p[0] for p in removes], [p[1] for p in removes],
            )
        if adds:
            await self.db.execute(
                """INSERT INTO message_label (message_id, label_id)
                   SELECT m, l FROM unnest($1::bigint[], $2::int[]) AS x(m, l) ON CONFLICT DO NOTHING""",
                [p[0] for p in adds], [p[1] for p in adds],
            )

    # -- deletions -----------------------------------------------------------------------------------------
    async def delete(self, account_id: int, gmail_ids: Sequence[str]) -> list[DeletedMessage]:
        """Remove messages Gmail deleted (parts, labels and links go with the rows)."""
        if not gmail_ids:
            return []
        rows = await self.db.fetch(
            """WITH gone AS (
                   SELECT m.id, m.thread_id,
                          coalesce((SELECT array_agg(ml.label_id) FROM message_label ml WHERE ml.message_id = m.id),
                                   '{}') AS labels
                     FROM message m WHERE m.provider_container = '' AND m.provider_key = ANY($2::text[])
                      AND m.account_id = $1
               ), deleted AS (DELETE FROM message m USING gone WHERE m.id = gone.id RETURNING m.id)
               SELECT gone.id, gone.thread_id, gone.labels FROM gone JOIN deleted ON deleted.id = gone.id""",
            account_id, list(gmail_ids),
        )
        return [DeletedMessage(r["id"], r["thread_id"], tuple(r["labels"])) for r in rows]

    # -- Gmailify: whose mail is it --------------------------------------------------------------------------
    async def siblings(self, account_id: int) -> list[Sibling]:
        """The user's other connected, non-Gmail accounts with their addresses (email and aliases)."""
        rows = await self.db.fetch(
            """SELECT s.id, s.provider_kind, s.email, s.settings FROM account a JOIN account s ON s.user_id = a.user_id
                WHERE a.id = $1 AND s.id <> a.id AND s.is_active AND s.provider_kind NOT IN ($2, $3)""",
            account_id, ProviderKind.GMAIL.value, ProviderKind.LOCAL.value,
        )
        found: list[Sibling] = []
        for r in rows:
            settings = _json(r["settings"]) or {}
            aliases = settings.get("aliases", []) if isinstance(settings, dict) else []
            addresses = {str(a).strip().lower() for a in [r["email"], *aliases] if str(a).strip()}
            found.append(Sibling(r["id"], ProviderKind(r["provider_kind"]), frozenset(addresses)))
        return found

    async def held_by(self, account_ids: Sequence[int], rfc_ids: Sequence[str]) -> dict[str, int]:
        """Message-ID -> an account among `account_ids` that stores a message with it."""
        if not account_ids or not rfc_ids:
            return {}
        rows = await self.db.fetch(
            """SELECT DISTINCT ON (rfc_message_id) rfc_message_id, account_id FROM message
                WHERE account_id = ANY($1::int[]) AND rfc_message_id = ANY($2::text[])
                ORDER BY rfc_message_id, account_id""",
            list(account_ids), list(rfc_ids),
        )
        return {r["rfc_message_id"]: r["account_id"] for r in rows}

    # -- propagation ---------------------------------------------------------------------------------------
    async def gmail_ids(self, account_id: int, message_ids: Sequence[int]) -> dict[int, str]:
        if not message_ids:
            return {}
        rows = await self.db.fetch(
            "SELECT id, provider_key FROM message "
            "WHERE account_id = $1 AND id = ANY($2::bigint[]) AND provider_key IS NOT NULL",
            account_id, list(message_ids),
        )
        return {r["id"]: r["provider_key"] for r in rows}

    async def set_gmail_labels(self, message_ids: Sequence[int], add: Sequence[str], remove: Sequence[str]) -> None:
        """Keep the stored Gmail label list in step with what propagation just told Gmail."""
        if not message_ids:
            return
        await self.db.execute(
            """UPDATE message SET provider_labels = (
                       SELECT coalesce(jsonb_agg(DISTINCT v), '[]'::jsonb) FROM (
                           SELECT jsonb_array_elements_text(coalesce(provider_labels, '[]'::jsonb)) AS v
                           UNION SELECT unnest($2::text[])) AS s
                        WHERE v <> ALL($3::text[]))
                WHERE id = ANY($1::bigint[]) AND provider_labels IS NOT NULL""",
            list(message_ids), list(add), list(remove),
        )
