"""Quiet hours and calendar reminders for browser notifications (issue 33).

Quiet hours: from–to in the user's time zone, across midnight when `to` is earlier than `from`; both set or
neither. JMAP StateChanges for apps are not notifications and are not held. `reminders` turns calendar reminders
on (the default); `calendar_reminder_sent` records each occurrence reminded of, so none is reminded twice.
"""

from plmail.db.raw_migrations import sql_migration

ID = "2026-12-07T09:40:00:000000"
VERSION = "1.39.0"
DESCRIPTION = "Quiet hours and calendar reminders for browser notifications"

FORWARDS_SQL = r"""
ALTER TABLE notification_preference
    ADD COLUMN IF NOT EXISTS quiet_from time,
    ADD COLUMN IF NOT EXISTS quiet_to time,
    ADD COLUMN IF NOT EXISTS reminders boolean NOT NULL DEFAULT true;
CREATE TABLE IF NOT EXISTS calendar_reminder_sent (
    event_id bigint NOT NULL REFERENCES calendar_event (id) ON DELETE CASCADE,
    starts_at timestamptz NOT NULL,
    sent_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (event_id, starts_at)
);
CREATE INDEX IF NOT EXISTS calendar_reminder_sent_starts_at ON calendar_reminder_sent (starts_at);
DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_constraint WHERE conname = 'notification_preference_quiet_hours') THEN
        ALTER TABLE notification_preference ADD CONSTRAINT notification_preference_quiet_hours
            CHECK ((quiet_from IS NULL AND quiet_to IS NULL)
                   OR (quiet_from IS NOT NULL AND quiet_to IS NOT NULL AND quiet_from <> quiet_to));
    END IF;
END
$$;
"""

BACKWARDS_SQL = r"""
DROP TABLE IF EXISTS calendar_reminder_sent;
ALTER TABLE notification_preference
    DROP COLUMN IF EXISTS reminders,
    DROP CONSTRAINT IF EXISTS notification_preference_quiet_hours,
    DROP COLUMN IF EXISTS quiet_to,
    DROP COLUMN IF EXISTS quiet_from;
"""

forwards = sql_migration(ID, DESCRIPTION, FORWARDS_SQL, BACKWARDS_SQL)
