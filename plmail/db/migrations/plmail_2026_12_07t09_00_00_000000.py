"""Web Push to the browser (issue 33): a browser's push subscription, what each user wants notified, and the
actions already applied.

A browser subscription belongs to the web session that turned notifications on: signing out of that browser (or
the session's expiry) deletes the session row and, by the foreign key, the subscription. It carries the id of the
newest message it was told about, so any process's dispatcher announces each new message once.
`notification_preference` is the user's choice of what notifies and what a notification shows. `applied_action`
keeps the idempotency key of every action a notification or an offline queue sent, so a replay is applied once.
"""

from plmail.db.raw_migrations import sql_migration

ID = "2026-12-07T09:00:00:000000"
VERSION = "1.39.0"
DESCRIPTION = "Browser push subscriptions, notification preferences and applied actions"

FORWARDS_SQL = r"""
ALTER TABLE push_subscription
    ADD COLUMN IF NOT EXISTS web_session_id bigint REFERENCES web_session (id) ON DELETE CASCADE,
    ADD COLUMN IF NOT EXISTS notified_message_id bigint;
CREATE INDEX IF NOT EXISTS push_subscription_web_session ON push_subscription (web_session_id);
CREATE UNIQUE INDEX IF NOT EXISTS push_subscription_browser_endpoint
    ON push_subscription (user_id, url) WHERE web_session_id IS NOT NULL;

CREATE TABLE IF NOT EXISTS notification_preference (
    user_id integer PRIMARY KEY REFERENCES app_user (id) ON DELETE CASCADE,
    every_message boolean NOT NULL DEFAULT false,
    show_content boolean NOT NULL DEFAULT true
);

CREATE TABLE IF NOT EXISTS applied_action (
    user_id integer NOT NULL REFERENCES app_user (id) ON DELETE CASCADE,
    idempotency_key text NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (user_id, idempotency_key)
);
CREATE INDEX IF NOT EXISTS applied_action_applied_at ON applied_action (applied_at);
"""

BACKWARDS_SQL = r"""
DROP TABLE IF EXISTS applied_action;
DROP TABLE IF EXISTS notification_preference;
DELETE FROM push_subscription WHERE web_session_id IS NOT NULL;
DROP INDEX IF EXISTS push_subscription_browser_endpoint;
DROP INDEX IF EXISTS push_subscription_web_session;
ALTER TABLE push_subscription DROP COLUMN IF EXISTS notified_message_id, DROP COLUMN IF EXISTS web_session_id;
"""

forwards = sql_migration(ID, DESCRIPTION, FORWARDS_SQL, BACKWARDS_SQL)
