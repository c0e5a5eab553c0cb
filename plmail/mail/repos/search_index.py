"""message_search and message_search_pending: the search vector of each message, and the messages still without
(their address terms for from:/to: wait with them).

A message's vector is written when its row is (the insert's trigger, migration 2026-12-07T13:45), or, for a page of
a first import, later: the row waits in message_search_pending until `index_pending` computes its vector.
"""

from __future__ import annotations

from plmail.db.database import Database


class SearchIndexRepository:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def index_pending(self, limit: int, account_id: int | None = None) -> int:
        """Compute the vectors of up to `limit` waiting messages (of one account, or any), newest first (the mail a
        person searches for first); returns how many. Rows another worker holds are skipped, so workers share."""
        return int(await self.db.fetchval(
            """WITH taken AS (
                   DELETE FROM message_search_pending WHERE message_id IN (
                       SELECT p.message_id FROM message_search_pending p
                        WHERE $2::int IS NULL OR EXISTS (
                              SELECT 1 FROM message m WHERE m.id = p.message_id AND m.account_id = $2)
                        ORDER BY p.message_id DESC LIMIT $1
                          FOR UPDATE SKIP LOCKED)
                   RETURNING message_id),
               vectors AS (
                   INSERT INTO message_search (message_id, search_vector)
                   SELECT m.id, plmail_search_vector(m.subject, m.from_name, m.from_address, m.body_text)
                     FROM taken JOIN message m ON m.id = taken.message_id
                   ON CONFLICT (message_id) DO NOTHING),
               -- The from:/to:/cc:/bcc: words, left out of the insert with the vector (migration 13:55); a row
               -- whose addresses changed meanwhile has them already, from the update's trigger.
               terms AS (
                   INSERT INTO message_address_term (message_id, user_id, field, term, arrived_at)
                   SELECT m.id, a.user_id, x.field, x.term, coalesce(m.received_at, m.sent_at, m.created_at)
                     FROM taken JOIN message m ON m.id = taken.message_id JOIN account a ON a.id = m.account_id,
                          plmail_message_address_terms(m.from_name, m.from_address, m.to_addresses,
                                                       m.cc_addresses, m.bcc_addresses) x
                    WHERE NOT EXISTS (SELECT 1 FROM message_address_term t WHERE t.message_id = m.id))
               SELECT count(*) FROM taken""",
            limit, account_id,
        ))

    async def waiting_for(self, user_id: int) -> bool:
        """Whether any of the user's messages still waits for its vector (a search may miss it)."""
        return bool(await self.db.fetchval(
            """SELECT EXISTS (SELECT 1 FROM message_search_pending p JOIN message m ON m.id = p.message_id
                                JOIN account a ON a.id = m.account_id WHERE a.user_id = $1)""", user_id))
