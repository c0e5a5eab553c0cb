"""A mailbox filled through SQL at any size: the shape the scale benchmarks and the plan-shape tests share.

Threads of two or three messages (2.5 on average) across several accounts of one user; 70 % in the Inbox and
the rest archived, one in ten also labelled Work, one in twenty Receipts, one in a hundred binned; a fifth of
the threads have an unread newest message; tabs spread 3:1:1:1:1 over primary, promotions, updates, social,
forums. The labels go in as ordinary statements, so the kept counts are built by their triggers.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from plmail.domain.enums import LabelRole, ProviderKind
from plmail.domain.mailstore import MailScope
from plmail.services import Services
from tests.support.repos import account_rows

WORDS = [
    "invoice", "meeting", "project", "budget", "travel", "flight", "hotel", "report", "quarterly", "review",
    "design", "contract", "offer", "schedule", "dinner", "weekend", "family", "photos", "update", "release",
    "server", "backup", "payment", "order", "delivery", "account", "security", "password", "newsletter",
    "discount", "event", "ticket", "concert", "museum", "garden", "recipe", "holiday", "insurance", "doctor",
    "appointment", "school", "homework", "football", "training", "cinema", "library",
]
PASSWORD = "benchmark password"
EMAIL = "bench@example.org"

# Thread g: account g mod 3, two or three messages (2.5 on average), newest thread first by id.
THREADS = """
INSERT INTO message_thread (id, account_id, subject, normalized_subject, last_message_at, message_count, unread_count,
                            attachment_count, category, category_pinned, threading_method, binned, created_at,
                            updated_at)
SELECT g, ($2::int[])[1 + g % cardinality($2::int[])], 'Thread ' || g, 'thread ' || g,
       now() - make_interval(secs => g * 60), 2 + g % 2, CASE WHEN g % 5 = 0 THEN 1 ELSE 0 END,
       CASE WHEN g % 9 = 0 THEN 1 ELSE 0 END,
       (ARRAY['primary','primary','primary','promotions','updates','social','forums'])[1 + g % 7],
       false, 'references', false, now(), now()
  FROM generate_series(1, $1) AS g
"""
# Message k of a thread is k * 5 minutes older than the thread's newest; senders and recipients repeat
# so from: and to: find a few percent of the mail (a domain) or a few in a thousand (a person).
MESSAGES = """
INSERT INTO message (account_id, thread_id, subject, from_address, from_name, to_addresses, cc_addresses,
                     bcc_addresses, reply_to, in_reply_to, thread_references, headers, flags, received_at, sent_at,
                     seen_at, body_text, preview, category, size, has_attachments, rfc_message_id, created_at,
                     updated_at)
SELECT t.account_id, t.id, CASE WHEN k = 0 THEN t.subject ELSE 'Re: ' || t.subject END,
       'person' || ((t.id + k) % 500) || '@example' || ((t.id + k) % 40) || '.org', 'Person ' || ((t.id + k) % 500),
       jsonb_build_array(jsonb_build_object('name', 'Team ' || (t.id % 300),
                                            'address', 'team' || (t.id % 300) || '@corp' || (t.id % 25) || '.com')),
       '[]'::jsonb, '[]'::jsonb, '[]'::jsonb, '[]'::jsonb, '[]'::jsonb, '{"Subject": "Thread"}'::jsonb, '[]'::jsonb,
       t.last_message_at - make_interval(mins => k * 5), t.last_message_at - make_interval(mins => k * 5),
       CASE WHEN t.unread_count > 0 AND k = 0 THEN NULL ELSE now() END,
       (SELECT string_agg(w, ' ') FROM (SELECT ($3::text[])[1 + ((t.id * 31 + k * 17 + i * 7) % $4)] AS w
                                          FROM generate_series(1, 60) AS i) words),
       'Preview of thread ' || t.id, t.category, 3000 + (t.id * 7 + k) % 997, t.attachment_count > 0 AND k = 0,
       'm' || t.id || '.' || k || '@bench.example', now(), now()
  FROM message_thread t, generate_series(0, t.message_count - 1) AS k
 WHERE t.id BETWEEN $1 AND $2
"""
# Labels through ordinary INSERTs: the triggers keep `binned` and the label counts, as on a real import.
LABELS = """
INSERT INTO message_label (message_id, label_id)
SELECT m.id, CASE WHEN m.thread_id % 100 = 99 THEN {trash} WHEN m.thread_id % 10 < 7 THEN {inbox} ELSE {archive} END
  FROM message m WHERE m.thread_id BETWEEN $1 AND $2;
INSERT INTO message_label (message_id, label_id)
SELECT m.id, {work} FROM message m WHERE m.thread_id BETWEEN $1 AND $2 AND m.thread_id % 10 = 3;
INSERT INTO message_label (message_id, label_id)
SELECT m.id, {receipts} FROM message m WHERE m.thread_id BETWEEN $1 AND $2 AND m.thread_id % 20 = 11;
INSERT INTO thread_label (thread_id, label_id)
SELECT DISTINCT m.thread_id, ml.label_id FROM message m JOIN message_label ml ON ml.message_id = m.id
 WHERE m.thread_id BETWEEN $1 AND $2;
"""


SECONDARY_INDEXES = """
SELECT i.indexname, i.indexdef FROM pg_indexes i
 WHERE i.schemaname = current_schema() AND i.tablename = 'message'
   AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conname = i.indexname AND c.conrelid = 'message'::regclass)
"""


@dataclass(frozen=True)
class Filled:
    user_id: int
    accounts: tuple[int, ...]
    labels: dict[str, int]  # inbox, archive, trash, work, receipts
    threads: int
    messages: int
    token: str  # an app password for JMAP


async def fill(services: Services, messages: int, accounts: int = 3, report: bool = True) -> Filled:
    """`messages` messages in messages / 2.5 threads across `accounts` accounts of one user."""
    started = time.perf_counter()
    user = await services.users.create_user(EMAIL, PASSWORD)
    account_ids = tuple([
        await account_rows(services).create(user_id=user.id, provider_kind=ProviderKind.LOCAL,
                                            name=f"Account {n + 1}", email=f"bench{n + 1}@example.org")
        for n in range(accounts)])
    roles = await services.labels.role_ids(user.id)
    labels = {"inbox": roles[LabelRole.INBOX], "archive": roles[LabelRole.ARCHIVE],
              "trash": roles[LabelRole.TRASH], "work": await services.labels.find_or_create(user.id, "Work"),
              "receipts": await services.labels.find_or_create(user.id, "Receipts")}
    threads = messages * 2 // 5
    db = services.db
    await db.execute(THREADS, threads, list(account_ids))
    await db.execute("SELECT setval('message_thread_id_seq', $1)", threads)
    step = 20_000
    # The message table's secondary indexes (the search vector's GIN, the trigrams, the btrees) are built once
    # after the mail is in, not row by row: maintaining them per row made a 1M fill take 48 minutes (issue 31).
    secondary = await db.fetch(SECONDARY_INDEXES)
    for index in secondary:
        await db.execute(f'DROP INDEX "{index["indexname"]}"')
    indexes = [index["indexdef"] for index in secondary]
    try:
        for start in range(1, threads + 1, step):
            await db.execute(MESSAGES, start, min(start + step - 1, threads), WORDS, len(WORDS))
    finally:
        async with db.connection() as conn:
            await conn.execute("SET maintenance_work_mem = '512MB'")
            for definition in indexes:
                await conn.execute(definition, timeout=24 * 3600)
            await conn.execute("RESET maintenance_work_mem")
    stored = time.perf_counter()
    label_sql = LABELS.format(**labels)
    async with db.connection() as conn:
        for start in range(1, threads + 1, step):
            async with conn.transaction():
                for statement in label_sql.strip().split(";\n"):
                    await conn.execute(statement.strip().rstrip(";"), start, min(start + step - 1, threads))
    labelled = time.perf_counter()
    for account_id in account_ids:
        await services.mailboxes.bind_labels(user.id, MailScope.single(user.id, account_id))
    async with db.connection() as conn:
        await conn.execute("VACUUM ANALYZE")
    count = int(await db.fetchval("SELECT count(*) FROM message"))
    token = (await services.app_passwords.create(user.id, "Benchmark")).token
    if report:
        print(f"filled {count:,} messages in {threads:,} threads across {accounts} accounts in "
              f"{time.perf_counter() - started:.0f} s (mail and its {len(indexes)} indexes built after it "
              f"{stored - started:.0f} s, labels with their count triggers {labelled - stored:.0f} s, "
              f"vacuum/analyze {time.perf_counter() - labelled:.0f} s)", flush=True)
    return Filled(user.id, account_ids, labels, threads, count, token)


