"""The calendar change log's triggers and the indexes of the calendar's new tables.

Triggers rather than writes in the services: an event also disappears with its calendar or its owner
(cascades), and JMAP's /changes and a feed's ETag must see that too. A row is written only while its
owner exists, so deleting a user does not try to log the cascade it causes. Every statement may run twice.
"""

from plmail.db.raw_migrations import sql_migration

ID = "2026-12-01T19:18:00:000000"
VERSION = "1.38.0"
DESCRIPTION = "calendar change log triggers, subscription and change indexes"

FORWARDS_SQL = r"""
CREATE UNIQUE INDEX IF NOT EXISTS uniq_calendar_subscription_selector ON calendar_subscription (selector);
CREATE INDEX IF NOT EXISTS idx_calendar_change_user ON calendar_change (user_id, sequence);
CREATE INDEX IF NOT EXISTS idx_calendar_change_calendar ON calendar_change (calendar_id, sequence);

CREATE OR REPLACE FUNCTION plmail_log_calendar_change(owner integer, calendar integer, kind text, entity bigint, change text)
RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM app_user WHERE id = owner) THEN
        INSERT INTO calendar_change (user_id, calendar_id, object_type, entity_id, change_type, created_at)
        VALUES (owner, calendar, kind, entity, change, clock_timestamp());
    END IF;
END $$;

CREATE OR REPLACE FUNCTION plmail_calendar_event_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        PERFORM plmail_log_calendar_change(OLD.user_id, OLD.calendar_id, 'CalendarEvent', OLD.id, 'destroyed');
        RETURN OLD;
    END IF;
    IF TG_OP = 'UPDATE' AND NEW.calendar_id IS DISTINCT FROM OLD.calendar_id THEN
        PERFORM plmail_log_calendar_change(OLD.user_id, OLD.calendar_id, 'CalendarEvent', OLD.id, 'updated');
    END IF;
    PERFORM plmail_log_calendar_change(NEW.user_id, NEW.calendar_id, 'CalendarEvent', NEW.id,
                                       CASE WHEN TG_OP = 'INSERT' THEN 'created' ELSE 'updated' END);
    RETURN NEW;
END $$;

CREATE OR REPLACE FUNCTION plmail_calendar_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        PERFORM plmail_log_calendar_change(OLD.user_id, OLD.id, 'Calendar', OLD.id, 'destroyed');
        RETURN OLD;
    END IF;
    PERFORM plmail_log_calendar_change(NEW.user_id, NEW.id, 'Calendar', NEW.id,
                                       CASE WHEN TG_OP = 'INSERT' THEN 'created' ELSE 'updated' END);
    RETURN NEW;
END $$;

CREATE OR REPLACE TRIGGER calendar_event_changed AFTER INSERT OR UPDATE OR DELETE ON calendar_event
    FOR EACH ROW EXECUTE FUNCTION plmail_calendar_event_changed();
CREATE OR REPLACE TRIGGER calendar_changed AFTER INSERT OR UPDATE OR DELETE ON calendar
    FOR EACH ROW EXECUTE FUNCTION plmail_calendar_changed();
"""

BACKWARDS_SQL = r"""
DROP TRIGGER IF EXISTS calendar_changed ON calendar;
DROP TRIGGER IF EXISTS calendar_event_changed ON calendar_event;
DROP FUNCTION IF EXISTS plmail_calendar_changed();
DROP FUNCTION IF EXISTS plmail_calendar_event_changed();
DROP FUNCTION IF EXISTS plmail_log_calendar_change(integer, integer, text, bigint, text);
DROP INDEX IF EXISTS idx_calendar_change_calendar;
DROP INDEX IF EXISTS idx_calendar_change_user;
DROP INDEX IF EXISTS uniq_calendar_subscription_selector;
"""

forwards = sql_migration(ID, DESCRIPTION, FORWARDS_SQL, BACKWARDS_SQL)
