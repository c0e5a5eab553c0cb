"""The user's filter rules, and the queries that run them."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import asyncpg

from plmail.db.database import Database
from plmail.domain.models import RulePreviewMatch


@dataclass(frozen=True, slots=True)
class RuleRow:
    id: int
    user_id: int
    account_id: int | None
    name: str
    conditions: dict[str, Any]
    actions: list[dict[str, Any]]
    is_enabled: bool
    sort_order: int
    stop_processing: bool
    run_state: str
    run_processed: int
    run_matched: int
    run_error: str
    run_finished_at: datetime | None


def _loads(value: Any) -> Any:
    return json.loads(value) if isinstance(value, str) else value


def _rule(r: asyncpg.Record) -> RuleRow:
    return RuleRow(r["id"], r["user_id"], r["account_id"], r["name"], _loads(r["conditions"]) or {},
                   _loads(r["actions"]) or [], r["is_enabled"], r["sort_order"], r["stop_processing"],
                   r["run_state"], r["run_processed"], r["run_matched"], r["run_error"], r["run_finished_at"])


class RuleRepository:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def for_user(self, user_id: int, *, enabled_only: bool = False) -> list[RuleRow]:
        rows = await self.db.fetch(
            "SELECT * FROM mail_rule WHERE user_id = $1 AND ($2 = false OR is_enabled) ORDER BY sort_order, id",
            user_id, enabled_only,
        )
        return [_rule(r) for r in rows]

    async def owned(self, user_id: int, rule_id: int) -> RuleRow | None:
        row = await self.db.fetchrow("SELECT * FROM mail_rule WHERE id = $1 AND user_id = $2", rule_id, user_id)
        return _rule(row) if row else None

    async def save(
        self, user_id: int, rule_id: int | None, *, name: str, account_id: int | None, conditions: dict[str, Any],
        actions: list[dict[str, Any]], is_enabled: bool, stop_processing: bool,
    ) -> int:
        if rule_id is None:
            return int(await self.db.fetchval(
                """INSERT INTO mail_rule (user_id, account_id, name, conditions, actions, is_enabled, sort_order,
                                          stop_processing, run_state, run_processed, run_matched, run_error,
                                          created_at, updated_at)
                   VALUES ($1, $2, $3, $4::jsonb, $5::jsonb, $6,
                           (SELECT coalesce(max(sort_order), 0) + 10 FROM mail_rule WHERE user_id = $1),
                           $7, 'idle', 0, 0, '', now(), now())
                   RETURNING id""",
                user_id, account_id, name, json.dumps(conditions), json.dumps(actions), is_enabled, stop_processing,
            ))
        await self.db.execute(
            """UPDATE mail_rule SET account_id = $3, name = $4, conditions = $5::jsonb, actions = $6::jsonb,
                                    is_enabled = $7, stop_processing = $8, updated_at = now()
                WHERE id = $1 AND user_id = $2""",
            rule_id, user_id, account_id, name, json.dumps(conditions), json.dumps(actions), is_enabled,
            stop_processing,
        )
        return rule_id

    async def delete(self, user_id: int, rule_id: int) -> bool:
        status = await self.db.execute("DELETE FROM mail_rule WHERE id = $1 AND user_id = $2", rule_id, user_id)
        return status.endswith(" 1")

    async def matching(self, where: str, params: Sequence[Any]) -> list[int]:
        """Message ids matched by a compiled filter; `where` already scopes to a batch or a user."""
        rows = await self.db.fetch(f"SELECT m.id FROM message m WHERE {where} ORDER BY m.id", *params)
        return [r["id"] for r in rows]

    async def count_matching(self, where: str, params: Sequence[Any], cap: int) -> int:
        return int(await self.db.fetchval(
            f"SELECT count(*) FROM (SELECT 1 FROM message m JOIN account a ON a.id = m.account_id "
            f"WHERE {where} LIMIT {int(cap)}) capped",
            *params,
        ))

    async def matching_conversations(self, where: str, params: Sequence[Any], limit: int
                                     ) -> list[RulePreviewMatch]:
        """The newest matching message of each of the `limit` most recently arrived matching conversations."""
        rows = await self.db.fetch(
            f"""SELECT * FROM (
                    SELECT DISTINCT ON (m.thread_id) m.thread_id, coalesce(m.from_name, '') AS from_name,
                           coalesce(m.from_address, '') AS from_address, coalesce(m.subject, '') AS subject,
                           coalesce(m.received_at, m.sent_at, m.created_at) AS arrived_at
                      FROM message m JOIN account a ON a.id = m.account_id
                     WHERE m.thread_id IS NOT NULL AND {where}
                     ORDER BY m.thread_id, coalesce(m.received_at, m.sent_at, m.created_at) DESC) newest
                ORDER BY arrived_at DESC LIMIT {int(limit)}""",
            *params,
        )
        return [RulePreviewMatch(r["thread_id"], r["from_name"] or r["from_address"], r["subject"], r["arrived_at"])
                for r in rows]

    async def move(self, user_id: int, rule_id: int, step: int) -> bool:
        """Swap the rule with its neighbour above (step -1) or below (+1) in the order filters run."""
        async with self.db.transaction():
            rows = await self.db.fetch(
                "SELECT id, sort_order FROM mail_rule WHERE user_id = $1 ORDER BY sort_order, id FOR UPDATE", user_id)
            ids = [r["id"] for r in rows]
            if rule_id not in ids:
                return False
            index = ids.index(rule_id)
            other = index + step
            if not 0 <= other < len(ids):
                return True
            ids[index], ids[other] = ids[other], ids[index]
            await self.db.execute(
                """UPDATE mail_rule r SET sort_order = x.position * 10
                     FROM unnest($1::int[]) WITH ORDINALITY AS x(id, position) WHERE r.id = x.id""", ids)
        return True

    async def set_run_state(self, rule_id: int, state: str, *, processed: int | None = None,
                            matched: int | None = None, error: str | None = None) -> None:
        await self.db.execute(
            """UPDATE mail_rule SET run_state = $2::text,
                      run_processed = coalesce($3, run_processed), run_matched = coalesce($4, run_matched),
                      run_error = coalesce($5, run_error),
                      run_started_at = CASE WHEN $2::text = 'running' AND run_state <> 'running' THEN now()
                                            ELSE run_started_at END,
                      run_finished_at = CASE WHEN $2::text IN ('completed', 'failed') THEN now()
                                             ELSE run_finished_at END
                WHERE id = $1""",
            rule_id, state, processed, matched, error,
        )

    async def claim_run(self, rule_id: int) -> bool:
        """Queue a run unless one is queued or running already."""
        status = await self.db.execute(
            """UPDATE mail_rule SET run_state = 'queued', run_processed = 0, run_matched = 0, run_error = ''
                WHERE id = $1 AND run_state NOT IN ('queued', 'running')""",
            rule_id,
        )
        return status.endswith(" 1")

    async def user_message_page(self, user_id: int, account_id: int | None, after_id: int, size: int) -> list[int]:
        rows = await self.db.fetch(
            """SELECT m.id FROM message m JOIN account a ON a.id = m.account_id
                WHERE a.user_id = $1 AND ($2::int IS NULL OR m.account_id = $2) AND m.id > $3
                ORDER BY m.id LIMIT $4""",
            user_id, account_id, after_id, size,
        )
        return [r["id"] for r in rows]

    async def set_rule_category(self, message_ids: Sequence[int], category: str) -> list[int]:
        rows = await self.db.fetch(
            """UPDATE message SET rule_category = $2, updated_at = now()
                WHERE id = ANY($1::bigint[]) AND rule_category IS DISTINCT FROM $2 RETURNING thread_id""",
            list(message_ids), category,
        )
        return sorted({r["thread_id"] for r in rows if r["thread_id"] is not None})
