"""Calendar constraints and indexes Piccolo cannot declare: unique, partial, expression and GiST.

Raw DDL lives in its own migration after the tables' auto migration, because a migration runs its
raw steps before its ``add_table`` steps. The unique indexes are the last line of defence the
reconciler relies on; the occurrence span index serves every calendar range query.
"""

from plmail.db.raw_migrations import sql_migration

ID = "2026-11-29T20:00:10:000000"
VERSION = "1.38.0"
DESCRIPTION = "calendar indexes and constraints"

FORWARDS_SQL = r"""
CREATE EXTENSION IF NOT EXISTS btree_gist;

-- One default calendar per user, one calendar per account.
CREATE UNIQUE INDEX uniq_calendar_default ON calendar (user_id) WHERE is_default;
CREATE UNIQUE INDEX uniq_calendar_account ON calendar (account_id) WHERE account_id IS NOT NULL;

-- Identity is the UID, unique per calendar; the (user, uid) index finds every copy a user holds.
CREATE UNIQUE INDEX uniq_calendar_event_calendar_uid ON calendar_event (calendar_id, uid);
CREATE INDEX idx_calendar_event_user_uid ON calendar_event (user_id, uid);
CREATE INDEX idx_calendar_event_calendar_starts ON calendar_event (calendar_id, starts_at);
ALTER TABLE calendar_event
    ADD CONSTRAINT calendar_event_status_check CHECK (status IN ('confirmed', 'tentative', 'cancelled')),
    ADD CONSTRAINT calendar_event_span_check CHECK (ends_at > starts_at),
    ADD CONSTRAINT calendar_event_confidence_check CHECK (confidence BETWEEN 0 AND 100);

CREATE UNIQUE INDEX uniq_calendar_event_occurrence ON calendar_event_occurrence (event_id, recurrence_id);
CREATE INDEX idx_calendar_event_occurrence_span ON calendar_event_occurrence
    USING gist (calendar_id, tstzrange(starts_at, ends_at, '[)'));
ALTER TABLE calendar_event_occurrence
    ADD CONSTRAINT calendar_event_occurrence_span_check CHECK (ends_at > starts_at);

CREATE UNIQUE INDEX uniq_event_source_link ON event_source_link (event_id, message_id, extractor);
CREATE INDEX idx_event_source_link_dedup ON event_source_link (dedup_key);
CREATE INDEX idx_event_source_link_message ON event_source_link (message_id);

-- Fixed width: the hash is all anyone needs, never the key it came from.
ALTER TABLE event_suppression ALTER COLUMN dedup_key_hash TYPE char(64),
    ADD CONSTRAINT event_suppression_hash_check CHECK (dedup_key_hash ~ '^[0-9a-f]{64}$');
CREATE UNIQUE INDEX uniq_event_suppression ON event_suppression (user_id, dedup_key_hash);
"""

BACKWARDS_SQL = r"""
DROP INDEX IF EXISTS uniq_event_suppression;
ALTER TABLE event_suppression DROP CONSTRAINT IF EXISTS event_suppression_hash_check;
ALTER TABLE event_suppression ALTER COLUMN dedup_key_hash TYPE varchar(64);
DROP INDEX IF EXISTS idx_event_source_link_message;
DROP INDEX IF EXISTS idx_event_source_link_dedup;
DROP INDEX IF EXISTS uniq_event_source_link;
ALTER TABLE calendar_event_occurrence DROP CONSTRAINT IF EXISTS calendar_event_occurrence_span_check;
DROP INDEX IF EXISTS idx_calendar_event_occurrence_span;
DROP INDEX IF EXISTS uniq_calendar_event_occurrence;
ALTER TABLE calendar_event DROP CONSTRAINT IF EXISTS calendar_event_confidence_check;
ALTER TABLE calendar_event DROP CONSTRAINT IF EXISTS calendar_event_span_check;
ALTER TABLE calendar_event DROP CONSTRAINT IF EXISTS calendar_event_status_check;
DROP INDEX IF EXISTS idx_calendar_event_calendar_starts;
DROP INDEX IF EXISTS idx_calendar_event_user_uid;
DROP INDEX IF EXISTS uniq_calendar_event_calendar_uid;
DROP INDEX IF EXISTS uniq_calendar_account;
DROP INDEX IF EXISTS uniq_calendar_default;
"""

forwards = sql_migration(ID, DESCRIPTION, FORWARDS_SQL, BACKWARDS_SQL)
