"""Conversations: the batch lookups the threader plans from, and applying its plan.

Thread counters, subject, category and labels are recomputed from the messages instead of being
incremented, so no path (merge, move, rule, retry) can leave a thread disagreeing with its mail.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from plmail.db.database import Database
from plmail.domain.threads import REPLY_PREFIX_PATTERN, StoredThread, ThreadLookups


@dataclass(frozen=True, slots=True)
class NewThread:
    id: int
    provider_key: str | None
    method: str


@dataclass(frozen=True, slots=True)
class DeletedMessage:
    """A message a provider deleted, as it was: its thread and labels say what else changed."""
    id: int
    thread_id: int | None
    labels: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class CategoryMove:
    """A thread's tab before and after (see `thread_tab`)."""
    thread_id: int
    account_id: int
    old: str | None
    new: str | None




def thread_tab(alias: str) -> str:
    """The tab a thread shows in: the user's "file into category" instruction outranks every category of
    plmail's own and of the provider's. None means in no tab."""
    return f"coalesce({alias}.user_category, {alias}.category)"


# The category and the user's category are both those of the newest message not held for the assistant,
# unless the user pinned the thread. Every sub-statement reads the threads as they were before it, so the
# survivors' new star, snooze and category come from the absorbed rows that the same statement deletes.
_ABSORB = """
WITH pairs AS (
    SELECT DISTINCT ON (a) s, a FROM unnest($1::bigint[], $2::bigint[]) AS x(s, a) ORDER BY a, s
), moved AS (
    UPDATE message m SET thread_id = p.s FROM pairs p WHERE m.thread_id = p.a RETURNING m.id
), carried AS (
    SELECT p.s,
           max(t.starred_at) AS starred_at,
           max(t.snoozed_until) AS snoozed_until,
           (array_agg(t.category ORDER BY t.id) FILTER (WHERE t.category_pinned))[1] AS pinned_category,
           (array_agg(t.user_category ORDER BY t.id) FILTER (WHERE t.category_pinned))[1] AS pinned_user_category
      FROM pairs p JOIN message_thread t ON t.id = p.a
     GROUP BY p.s
), merged AS (
    UPDATE message_thread s
       SET starred_at = greatest(s.starred_at, c.starred_at),  -- greatest() passes over NULLs
           snoozed_until = greatest(s.snoozed_until, c.snoozed_until),
           category = CASE WHEN s.category_pinned THEN s.category ELSE coalesce(c.pinned_category, s.category) END,
           user_category = CASE WHEN s.category_pinned OR c.pinned_category IS NULL THEN s.user_category
                                ELSE c.pinned_user_category END,
           category_pinned = s.category_pinned OR c.pinned_category IS NOT NULL
      FROM carried c
     WHERE s.id = c.s
), gone AS (
    DELETE FROM message_thread t USING pairs p WHERE t.id = p.a
)
SELECT id FROM moved
"""

# A message not held for the assistant (or released again) is one whose category may decide a tab.
_DECIDES = "(m.category_held_at IS NULL OR m.category_released_at IS NOT NULL)"
_NEWEST_FIRST = "coalesce(m.received_at, m.sent_at, m.created_at) DESC, m.id DESC"

# The subject comes from the side of a merge that holds the replied-to message: the oldest message of the
# thread that replies to no other message in it (its root), not simply the oldest, whose date may be a
# replier's wrong clock. A thread whose every message replies to another falls back to the oldest.
# The replies are found with one hash join of the thread's references against its Message-IDs, so a long
# thread costs its length, not its length squared as comparing each message with every other's ids did. The
# thread's messages are read once, for the root and the counts alike.
_RECOMPUTE = f"""
WITH members AS MATERIALIZED (
    SELECT m.id, m.thread_id, m.subject, m.rfc_message_id, m.in_reply_to || m.thread_references AS refs,
           m.sent_at, m.received_at, m.created_at, m.seen_at, m.has_attachments, m.starred_at, m.category,
           m.rule_category, {_DECIDES} AS decides
      FROM message m
     WHERE m.thread_id = ANY($1::bigint[])
), refs AS MATERIALIZED (
    SELECT x.id, x.thread_id, r.ref
      FROM members x CROSS JOIN LATERAL jsonb_array_elements_text(x.refs) AS r(ref)
     WHERE r.ref IS DISTINCT FROM x.rfc_message_id
), replying AS (
    SELECT DISTINCT f.id FROM refs f JOIN members p ON p.thread_id = f.thread_id AND p.rfc_message_id = f.ref
), roots AS (
    SELECT DISTINCT ON (x.thread_id) x.thread_id, x.subject
      FROM members x LEFT JOIN replying y ON y.id = x.id
     ORDER BY x.thread_id, y.id IS NOT NULL, coalesce(x.sent_at, x.received_at, x.created_at), x.id
), stats AS (
    SELECT m.thread_id,
           count(*) AS n,
           count(*) FILTER (WHERE m.seen_at IS NULL) AS unread,
           count(*) FILTER (WHERE m.has_attachments) AS attachments,
           max(m.starred_at) AS starred_at,
           max(coalesce(m.received_at, m.sent_at, m.created_at)) AS last_at,
           (array_agg(m.category ORDER BY {_NEWEST_FIRST}) FILTER (WHERE m.decides))[1] AS newest_category,
           (array_agg(m.rule_category ORDER BY {_NEWEST_FIRST}) FILTER (WHERE m.decides))[1] AS newest_rule_category
      FROM members m
     GROUP BY m.thread_id
), old AS (
    SELECT t.id, {thread_tab("t")} AS old_tab FROM message_thread t WHERE t.id = ANY($1::bigint[])
)
UPDATE message_thread t
   SET message_count = s.n,
       unread_count = s.unread,
       attachment_count = s.attachments,
       starred_at = s.starred_at,
       last_message_at = s.last_at,
       category = CASE WHEN t.category_pinned THEN t.category ELSE s.newest_category END,
       user_category = CASE WHEN t.category_pinned THEN t.user_category ELSE s.newest_rule_category END,
       subject = r.subject,
       normalized_subject = lower(btrim(regexp_replace(
           regexp_replace(coalesce(r.subject, ''), '{REPLY_PREFIX_PATTERN}', '', 'i'), '\\s+', ' ', 'g'))),
       updated_at = now()
  FROM stats s, roots r, old o
 WHERE t.id = s.thread_id AND r.thread_id = t.id AND o.id = t.id
RETURNING t.id, t.account_id, o.old_tab, {thread_tab("t")} AS tab
"""


# Resolved like the built-in category: the newest message not held wins, pinned threads keep theirs. Writes
# only the threads whose category columns change, and returns those whose tab changes, so every caller can
# announce exactly those to JMAP clients (that is how a phone learns of a re-sort).
_REFRESH_CATEGORY = f"""
WITH newest AS (
    SELECT DISTINCT ON (m.thread_id) m.thread_id, m.category, m.rule_category
      FROM message m
     WHERE m.thread_id = ANY($1::bigint[]) AND {_DECIDES}
     ORDER BY m.thread_id, {_NEWEST_FIRST}
), old AS (
    SELECT t.id, {thread_tab("t")} AS old_tab FROM message_thread t WHERE t.id = ANY($1::bigint[])
), written AS (
    UPDATE message_thread t
       SET category = n.category, user_category = n.rule_category, updated_at = now()
      FROM newest n, old o
     WHERE t.id = n.thread_id AND o.id = t.id AND NOT t.category_pinned
       AND (t.category IS DISTINCT FROM n.category OR t.user_category IS DISTINCT FROM n.rule_category)
    RETURNING t.id, t.account_id, o.old_tab, {thread_tab("t")} AS tab
)
SELECT id, account_id, old_tab, tab FROM written WHERE old_tab IS DISTINCT FROM tab
"""


class ThreadRepository:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def lookups(
        self,
        account_id: int,
        *,
        provider_keys: Sequence[str],
        referenced_ids: Sequence[str],
        own_ids: Sequence[str],
        subjects: Sequence[str],
        subjects_since: datetime | None,
    ) -> ThreadLookups:
        by_key: dict[str, int] = {}
        if provider_keys:
            for r in await self.db.fetch(
                "SELECT id, provider_thread_key FROM message_thread "
                "WHERE account_id = $1 AND provider_thread_key = ANY($2::text[])",
                account_id, list(provider_keys),
            ):
                by_key[r["provider_thread_key"]] = r["id"]
        by_message_id: dict[str, list[int]] = {}
        if referenced_ids:
            # Fenced like the lookup below: with the statistics of a near-empty table, the planner read every
            # message of the account and filtered by Message-ID, a cost that grew with each page imported.
            for r in await self.db.fetch(
                "SELECT DISTINCT rfc_message_id, thread_id FROM ("
                " SELECT account_id, rfc_message_id, thread_id FROM message"
                " WHERE rfc_message_id = ANY($2::text[]) OFFSET 0) AS named "
                "WHERE account_id = $1 AND thread_id IS NOT NULL",
                account_id, list(referenced_ids),
            ):
                by_message_id.setdefault(r["rfc_message_id"], []).append(r["thread_id"])
        replying_to: dict[str, list[int]] = {}
        if own_ids:
            wanted = set(own_ids)
            # jsonb ?| over the expression index: one query for the whole batch, not one scan per message. The
            # OFFSET 0 fence keeps that index in charge: during a first import the statistics lag behind the
            # table, and the planner would otherwise walk every message of the account instead.
            for r in await self.db.fetch(
                "SELECT DISTINCT thread_id, refs FROM ("
                " SELECT account_id, thread_id, (in_reply_to || thread_references) AS refs FROM message"
                " WHERE (in_reply_to || thread_references) ?| $2::text[] OFFSET 0) AS referring "
                "WHERE account_id = $1 AND thread_id IS NOT NULL",
                account_id, list(wanted),
            ):
                for ref in _json_list(r["refs"]):
                    if ref in wanted:
                        replying_to.setdefault(ref, []).append(r["thread_id"])
        by_subject: dict[str, list[int]] = {}
        subject_ids: set[int] = set()
        if subjects and subjects_since is not None:
            for r in await self.db.fetch(
                "SELECT id, normalized_subject FROM message_thread "
                "WHERE account_id = $1 AND normalized_subject = ANY($2::text[]) AND last_message_at >= $3",
                account_id, list(subjects), subjects_since,
            ):
                by_subject.setdefault(r["normalized_subject"], []).append(r["id"])
                subject_ids.add(r["id"])
        thread_ids = set(by_key.values()) | subject_ids
        thread_ids |= {t for ids in by_message_id.values() for t in ids}
        thread_ids |= {t for ids in replying_to.values() for t in ids}
        threads = await self._stored(sorted(thread_ids), with_senders=subject_ids)
        return ThreadLookups(threads, by_key, by_message_id, replying_to, by_subject)

    async def _stored(self, ids: Sequence[int], *, with_senders: set[int]) -> dict[int, StoredThread]:
        if not ids:
            return {}
        rows = await self.db.fetch(
            """SELECT t.id, t.provider_thread_key, t.message_count, t.normalized_subject, t.last_message_at,
                      CASE WHEN t.id = ANY($2::bigint[])
                           THEN (SELECT array_agg(DISTINCT m.from_address) FROM message m
                                  WHERE m.thread_id = t.id AND m.from_address IS NOT NULL)
                      END AS senders
                 FROM message_thread t WHERE t.id = ANY($1::bigint[])""",
            list(ids), sorted(with_senders),
        )
        return {
            r["id"]: StoredThread(r["id"], r["provider_thread_key"], r["message_count"], r["normalized_subject"],
                                  r["last_message_at"], frozenset(r["senders"] or ()))
            for r in rows
        }

    async def create(self, account_id: int, threads: Sequence[tuple[str | None, str]]) -> list[int]:
        """Create threads (provider key, method) in order; a key another worker created meanwhile is reused."""
        if not threads:
            return []
        ids = [r["id"] for r in await self.db.fetch(
            "SELECT nextval('message_thread_id_seq') AS id FROM generate_series(1, $1)", len(threads))]
        inserted = {r["id"] for r in await self.db.fetch(
            """INSERT INTO message_thread (id, account_id, provider_thread_key, threading_method, normalized_subject,
                                          message_count, unread_count, attachment_count, category_pinned, binned,
                                          created_at, updated_at)
               SELECT i, $1, k, m, '', 0, 0, 0, false, false, now(), now()
                 FROM unnest($2::bigint[], $3::text[], $4::text[]) AS x(i, k, m)
               ON CONFLICT (provider_thread_key, account_id) DO NOTHING
               RETURNING id""",
            account_id, ids, [t[0] for t in threads], [t[1] for t in threads],
        )}
        if len(inserted) == len(ids):
            return ids
        # Only a provider key can conflict: another worker created that conversation first, so join it.
        lost_keys = sorted({key for i, (key, _) in zip(ids, threads, strict=True) if i not in inserted and key})
        winners = {r["provider_thread_key"]: r["id"] for r in await self.db.fetch(
            "SELECT id, provider_thread_key FROM message_thread "
            "WHERE account_id = $1 AND provider_thread_key = ANY($2::text[])",
            account_id, lost_keys,
        )}
        return [i if i in inserted else winners[str(key)] for i, (key, _) in zip(ids, threads, strict=True)]

    async def delete_empty(self, thread_ids: Sequence[int]) -> set[int]:
        """Drop those of these threads no message points at any more (created for a message that turned
        out to be stored already, or emptied by deletions). Returns the dropped ids."""
        if not thread_ids:
            return set()
        rows = await self.db.fetch(
            "DELETE FROM message_thread t WHERE t.id = ANY($1::bigint[]) "
            "AND NOT EXISTS (SELECT 1 FROM message m WHERE m.thread_id = t.id) RETURNING t.id",
            list(thread_ids),
        )
        return {r["id"] for r in rows}

    async def absorb(self, merges: Sequence[tuple[int, Sequence[int]]]) -> list[int]:
        """Fold threads into survivors, all (survivor, absorbed) pairs in one statement: their messages move,
        star and snooze carry over, a pinned category wins over an unpinned one, the absorbed threads are
        deleted. Returns the ids of the messages that moved."""
        pairs = [(survivor, absorbed) for survivor, group in merges for absorbed in dict.fromkeys(group)
                 if absorbed != survivor]
        if not pairs:
            return []
        rows = await self.db.fetch(
            _ABSORB, [survivor for survivor, _ in pairs], [absorbed for _, absorbed in pairs]
        )
        return [r["id"] for r in rows]

    async def recompute(self, thread_ids: Sequence[int]) -> list[CategoryMove]:
        if not thread_ids:
            return []
        rows = await self.db.fetch(_RECOMPUTE, sorted(set(thread_ids)))
        await self.sync_labels(thread_ids)
        return [CategoryMove(r["id"], r["account_id"], r["old_tab"], r["tab"]) for r in rows]

    async def refresh_categories(self, thread_ids: Sequence[int]) -> list[CategoryMove]:
        if not thread_ids:
            return []
        rows = await self.db.fetch(_REFRESH_CATEGORY, sorted(set(thread_ids)))
        return [CategoryMove(r["id"], r["account_id"], r["old_tab"], r["tab"]) for r in rows]

    async def sync_labels(self, thread_ids: Sequence[int]) -> None:
        """A thread carries every label any of its messages carries (Gmail semantics), computed from the
        messages pointing at it now — not from a list loaded before this batch's rules ran."""
        ids = sorted(set(thread_ids))
        # The labels present are gathered once, from the threads' own messages: a per-row NOT EXISTS let the
        # planner start from every message carrying the label (Inbox: nearly all) when statistics lagged.
        await self.db.execute(
            """WITH present AS MATERIALIZED (
                   SELECT DISTINCT m.thread_id, ml.label_id FROM message m JOIN message_label ml ON ml.message_id = m.id
                    WHERE m.thread_id = ANY($1::bigint[])
               ), added AS (
                   INSERT INTO thread_label (thread_id, label_id) SELECT thread_id, label_id FROM present
                   ON CONFLICT DO NOTHING
               )
               DELETE FROM thread_label tl WHERE tl.thread_id = ANY($1::bigint[]) AND NOT EXISTS (
                   SELECT 1 FROM present p WHERE p.thread_id = tl.thread_id AND p.label_id = tl.label_id)""",
            ids,
        )

    async def provider_key(self, thread_id: int) -> str | None:
        """The provider's own id of the conversation (Gmail's threadId), when the thread has one."""
        value = await self.db.fetchval("SELECT provider_thread_key FROM message_thread WHERE id = $1", thread_id)
        return str(value) if value is not None else None

    async def owned_by_account(self, thread_id: int) -> int | None:
        value = await self.db.fetchval("SELECT account_id FROM message_thread WHERE id = $1", thread_id)
        return int(value) if value is not None else None


def _json_list(value: Any) -> list[str]:
    if isinstance(value, str):
        parsed = json.loads(value)
        return [str(v) for v in parsed] if isinstance(parsed, list) else []
    return [str(v) for v in value] if isinstance(value, list) else []
