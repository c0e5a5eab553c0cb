"""Event proposal constraints Piccolo cannot declare: the unique (message, start) guard and a fixed-width hash.

Raw DDL lives in its own migration after the table's auto migration, because a migration runs its raw
steps before its ``add_table`` steps. The unique index is what holds when a backfill and live mail
propose from the same message at once; the message leads because every read asks "what does this
message propose?". No index by user or by start: nothing reads this table that way.
"""

from plmail.db.raw_migrations import sql_migration

ID = "2026-11-29T23:00:10:000000"
VERSION = "1.38.0"
DESCRIPTION = "event proposal indexes and constraints"

FORWARDS_SQL = r"""
CREATE UNIQUE INDEX uniq_event_proposal_message_starts_at ON event_proposal (message_id, starts_at);
ALTER TABLE event_proposal ALTER COLUMN dedup_key_hash TYPE char(64),
    ADD CONSTRAINT event_proposal_hash_check CHECK (dedup_key_hash ~ '^[0-9a-f]{64}$'),
    ADD CONSTRAINT event_proposal_span_check CHECK (ends_at > starts_at),
    ADD CONSTRAINT event_proposal_confidence_check CHECK (confidence BETWEEN 0 AND 100);
"""

BACKWARDS_SQL = r"""
ALTER TABLE event_proposal DROP CONSTRAINT IF EXISTS event_proposal_confidence_check;
ALTER TABLE event_proposal DROP CONSTRAINT IF EXISTS event_proposal_span_check;
ALTER TABLE event_proposal DROP CONSTRAINT IF EXISTS event_proposal_hash_check;
ALTER TABLE event_proposal ALTER COLUMN dedup_key_hash TYPE varchar(64);
DROP INDEX IF EXISTS uniq_event_proposal_message_starts_at;
"""

forwards = sql_migration(ID, DESCRIPTION, FORWARDS_SQL, BACKWARDS_SQL)
