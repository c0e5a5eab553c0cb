"""Writes behind thread operations: labels, read and star state, snooze, and the provider-change queue.

Every query is scoped to the user through the account that owns the message.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime

from plmail.db.database import Database
from plmail.domain.enums import LabelRole
from plmail.domain.mailstore import OwnedMessage
from plmail.domain.providers import PendingChange


def _ids(value: object) -> tuple[int, ...]:
    loaded = json.loads(value) if isinstance(value, str) else value
    return tuple(int(v) for v in loaded) if isinstance(loaded, list) else ()


class OperationRepository:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def messages(self, user_id: int, message_ids: Sequence[int]) -> list[OwnedMessage]:
        rows = await self.db.fetch(
            """SELECT m.id, m.account_id, m.thread_id, m.mailbox_id, m.seen_at IS NOT NULL AS seen,
                      m.starred_at IS NOT NULL AS starred, coalesce(m.received_at, m.sent_at, m.created_at) AS at,
                      coalesce(array_agg(ml.label_id) FILTER (WHERE ml.label_id IS NOT NULL), '{}') AS labels
                 FROM message m JOIN account a ON a.id = m.account_id
                 LEFT JOIN message_label ml ON ml.message_id = m.id
                WHERE a.user_id = $1 AND m.id = ANY($2::bigint[])
                GROUP BY m.id ORDER BY m.id""",
            user_id, list(message_ids),
        )
        return [OwnedMessage(r["id"], r["account_id"], r["thread_id"], r["mailbox_id"], frozenset(r["labels"]),
                             r["seen"], r["starred"], r["at"]) for r in rows]

    async def thread_message_ids(self, user_id: int, thread_ids: Sequence[int]) -> list[int]:
        rows = await self.db.fetch(
            """SELECT m.id FROM message m JOIN account a ON a.id = m.account_id
                WHERE a.user_id = $1 AND m.thread_id = ANY($2::bigint[]) ORDER BY m.id""",
            user_id, list(thread_ids),
        )
        return [r["id"] for r in rows]

    async def newest_message_ids(self, user_id: int, thread_ids: Sequence[int]) -> list[int]:
        rows = await self.db.fetch(
            """SELECT DISTINCT ON (m.thread_id) m.id FROM message m JOIN account a ON a.id = m.account_id
                WHERE a.user_id = $1 AND m.thread_id = ANY($2::bigint[])
                ORDER BY m.thread_id, coalesce(m.received_at, m.sent_at, m.created_at) DESC, m.id DESC""",
            user_id, list(thread_ids),
        )
        return [r["id"] for r in rows]

    async def owned_labels(self, user_id: int, label_ids: Sequence[int]) -> set[int]:
        rows = await self.db.fetch(
            "SELECT id FROM label WHERE user_id = $1 AND id = ANY($2::int[])", user_id, list(label_ids)
        )
        return {r["id"] for r in rows}

    async def role_label(self, user_id: int, role: LabelRole) -> int:
        value = await self.db.fetchval("SELECT id FROM label WHERE user_id = $1 AND role = $2", user_id, role.value)
        if value is None:  # created with the user; only a damaged database lacks them
            raise LookupError(f"user {user_id} has no {role.value} label")
        return int(value)

    async def add_labels(self, pairs: Sequence[tuple[int, int]]) -> None:
        if pairs:
            await self.db.execute(
                """INSERT INTO message_label (message_id, label_id)
                   SELECT m, l FROM unnest($1::bigint[], $2::int[]) AS x(m, l) ON CONFLICT DO NOTHING""",
                [p[0] for p in pairs], [p[1] for p in pairs],
            )

    async def remove_labels(self, pairs: Sequence[tuple[int, int]]) -> None:
        if pairs:
            await self.db.execute(
                """DELETE FROM message_label ml USING unnest($1::bigint[], $2::int[]) AS x(m, l)
                    WHERE ml.message_id = x.m AND ml.label_id = x.l""",
                [p[0] for p in pairs], [p[1] for p in pairs],
            )

    async def set_seen(self, message_ids: Sequence[int], seen: bool) -> list[int]:
        """Returns the messages whose state actually changed."""
        rows = await self.db.fetch(
            """UPDATE message SET seen_at = CASE WHEN $2 THEN now() ELSE NULL END, updated_at = now()
                WHERE id = ANY($1::bigint[]) AND (seen_at IS NOT NULL) <> $2 RETURNING id""",
            list(message_ids), seen,
        )
        return [r["id"] for r in rows]

    async def set_starred(self, message_ids: Sequence[int], starred: bool) -> list[int]:
        rows = await self.db.fetch(
            """UPDATE message SET starred_at = CASE WHEN $2 THEN now() ELSE NULL END, updated_at = now()
                WHERE id = ANY($1::bigint[]) AND (starred_at IS NOT NULL) <> $2 RETURNING id""",
            list(message_ids), starred,
        )
        return [r["id"] for r in rows]

    async def set_flag(self, message_ids: Sequence[int], flag: str, value: bool,
                       spellings: Sequence[str] = ()) -> list[int]:
        """A keyword kept with the message's flags, added or removed; returns the messages that changed.
        `spellings` (lower-cased) are every stored form that means it (\\Answered for $answered, a server's
        $Forwarded): present in any of them, the keyword is there; removing it removes them all."""
        forms = sorted({flag.lower(), *(s.lower() for s in spellings)})
        rows = await self.db.fetch(
            """UPDATE message SET flags = CASE WHEN $3 THEN flags || to_jsonb($2::text) ELSE
                       (SELECT coalesce(jsonb_agg(f), '[]'::jsonb) FROM jsonb_array_elements_text(flags) f
                         WHERE lower(f) <> ALL($4::text[])) END,
                                  flags_touched_at = now(), updated_at = now()
                WHERE id = ANY($1::bigint[])
                  AND EXISTS (SELECT 1 FROM jsonb_array_elements_text(flags) f WHERE lower(f) = ANY($4::text[])) <> $3
                RETURNING id""",
            list(message_ids), flag, value, forms,
        )
        return [r["id"] for r in rows]

    async def set_snoozed_until(self, thread_ids: Sequence[int], until: datetime | None) -> None:
        await self.db.execute(
            "UPDATE message_thread SET snoozed_until = $2, updated_at = now() WHERE id = ANY($1::bigint[])",
            list(thread_ids), until,
        )

    async def due_snoozes(self, now: datetime, limit: int) -> list[tuple[int, int]]:
        """(user id, thread id) of snoozed threads whose time has come; a thread moved out of Snoozed (to the
        Trash, to Spam) keeps its alarm asleep until it is back there."""
        rows = await self.db.fetch(
            """SELECT a.user_id, t.id FROM message_thread t JOIN account a ON a.id = t.account_id
                WHERE t.snoozed_until IS NOT NULL AND t.snoozed_until <= $1
                  AND EXISTS (SELECT 1 FROM thread_label tl JOIN label l ON l.id = tl.label_id
                               WHERE tl.thread_id = t.id AND l.role = 'snoozed')
                ORDER BY t.snoozed_until LIMIT $2""",
            now, limit,
        )
        return [(r["user_id"], r["id"]) for r in rows]

    async def bindings(self, pairs: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
        """(account id, binding id) for (account id, label id) pairs that have a binding."""
        if not pairs:
            return []
        rows = await self.db.fetch(
            """SELECT b.account_id, b.id FROM label_binding b
                 JOIN unnest($1::int[], $2::int[]) AS x(a, l) ON b.account_id = x.a AND b.label_id = x.l""",
            [p[0] for p in pairs], [p[1] for p in pairs],
        )
        return [(r["account_id"], r["id"]) for r in rows]

    async def queue_provider_changes(self, rows: Sequence[tuple[int, int, str, list[int], list[int], bool | None,
                                                                int | None]], *, hold_until: datetime | None = None,
                                     undo_key: str | None = None) -> None:
        """(account, message, kind, added, removed, flag value, source mailbox) rows for the propagator; a held
        row waits until `hold_until`, and `undo_key` finds the rows of one action again."""
        if rows:
            await self.db.execute(
                """INSERT INTO provider_change (account_id, message_id, kind, added, removed, flag_value,
                                                source_mailbox_id, attempts, last_error, created_at, hold_until,
                                                undo_key)
                   SELECT a, m, k, ad::jsonb, re::jsonb, f, s, 0, '', now(), $8, $9
                     FROM unnest($1::int[], $2::bigint[], $3::text[], $4::text[], $5::text[], $6::bool[], $7::int[])
                          AS x(a, m, k, ad, re, f, s)""",
                [r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows],
                [json.dumps(r[3]) for r in rows], [json.dumps(r[4]) for r in rows], [r[5] for r in rows],
                [r[6] for r in rows], hold_until, undo_key,
            )

    async def undoable_changes(self, user_id: int, undo_key: str) -> list[tuple[int, int, tuple[int, ...],
                                                                             tuple[int, ...], bool]]:
        """(change id, message id, added, removed, still waiting) of the user's action `undo_key`, newest last."""
        rows = await self.db.fetch(
            """SELECT c.id, c.message_id, c.added, c.removed, c.done_at IS NULL AS waiting
                 FROM provider_change c JOIN account a ON a.id = c.account_id
                WHERE c.undo_key = $2 AND a.user_id = $1 AND c.kind = 'labels' ORDER BY c.id""",
            user_id, undo_key,
        )
        return [(r["id"], r["message_id"], _ids(r["added"]), _ids(r["removed"]), r["waiting"]) for r in rows]

    async def drop_changes(self, change_ids: Sequence[int]) -> None:
        """Withdraw changes the provider has not been told yet (an undo inside its window)."""
        if change_ids:
            await self.db.execute("DELETE FROM provider_change WHERE id = ANY($1::bigint[]) AND done_at IS NULL",
                                  list(change_ids))

    async def release_undo_key(self, undo_key: str) -> None:
        """An action undone once cannot be undone again."""
        await self.db.execute("UPDATE provider_change SET undo_key = NULL WHERE undo_key = $1", undo_key)

    async def added_order(self, account_id: int, message_ids: Sequence[int]) -> dict[tuple[int, int], int]:
        """(message, label) -> the id of the latest change that added that label: later means added later.
        Labels a message arrived with have no entry."""
        rows = await self.db.fetch(
            """SELECT message_id, id, added FROM provider_change
                WHERE account_id = $1 AND message_id = ANY($2::bigint[]) AND kind = 'labels'""",
            account_id, list(message_ids),
        )
        order: dict[tuple[int, int], int] = {}
        for r in rows:
            added = json.loads(r["added"]) if isinstance(r["added"], str) else r["added"]
            for label_id in added or []:
                key = (r["message_id"], int(label_id))
                order[key] = max(order.get(key, 0), r["id"])
        return order

    async def pending_changes(self, account_id: int, limit: int) -> list[PendingChange]:
        rows = await self.db.fetch(
            """SELECT id, message_id, kind, added, removed, flag_value, source_mailbox_id, attempts
                 FROM provider_change
                WHERE account_id = $1 AND done_at IS NULL AND (hold_until IS NULL OR hold_until <= now())
                ORDER BY id LIMIT $2""",
            account_id, limit,
        )
        return [PendingChange(r["id"], r["message_id"], r["kind"], _ids(r["added"]), _ids(r["removed"]),
                              r["flag_value"], r["source_mailbox_id"], r["attempts"]) for r in rows]

    async def mark_done(self, change_ids: Sequence[int]) -> None:
        if change_ids:
            await self.db.execute(
                "UPDATE provider_change SET done_at = now(), last_error = '' WHERE id = ANY($1::bigint[])",
                list(change_ids),
            )

    async def mark_failed(self, change_ids: Sequence[int], error: str) -> None:
        if change_ids:
            await self.db.execute(
                "UPDATE provider_change SET attempts = attempts + 1, last_error = $2 WHERE id = ANY($1::bigint[])",
                list(change_ids), error[:4000],
            )

    async def failing_changes(self, limit: int = 50) -> list[tuple[int, int, str, int, str]]:
        """(change id, account id, kind, attempts, last error) of changes that keep failing, for the admin page."""
        rows = await self.db.fetch(
            """SELECT id, account_id, kind, attempts, last_error FROM provider_change
                WHERE done_at IS NULL AND attempts > 0 ORDER BY id DESC LIMIT $1""",
            limit,
        )
        return [(r["id"], r["account_id"], r["kind"], r["attempts"], r["last_error"]) for r in rows]

    async def accounts_with_pending_changes(self) -> list[int]:
        """Active, signed-in accounts that still owe their provider a change."""
        rows = await self.db.fetch(
            """SELECT a.id AS account_id FROM account a
                WHERE a.is_active AND a.status = 'ok'
                  AND (EXISTS (SELECT 1 FROM provider_change c WHERE c.account_id = a.id AND c.done_at IS NULL)
                       OR EXISTS (SELECT 1 FROM message_tombstone t WHERE t.account_id = a.id AND t.done_at IS NULL))
                ORDER BY a.id"""
        )
        return [r["account_id"] for r in rows]

    async def try_lock_account(self, account_id: int) -> bool:
        """Serialises propagation per account (held until the surrounding transaction ends)."""
        return bool(await self.db.fetchval("SELECT pg_try_advisory_xact_lock(1886221165, $1)", account_id))
