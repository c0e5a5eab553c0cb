"""Push subscriptions (RFC 8620 §7.2): where the server POSTs a StateChange, encrypted for the device (RFC 8291).

A subscription belongs to a user and to the app password that created it (the credentials a phone signs in
with): revoking that password or disabling the user removes the subscription in the same statement, by the
triggers below, so whichever path revokes or disables (the web page, the command line, an administrator) stops
the pushes without knowing about them. `pushed_states` holds the states last sent, so any process's dispatcher
can tell what moved since and one push carries the latest states; `next_push_at` spaces pushes (at most one a
second) and holds back after a push service asked to (429, 5xx).
"""

from plmail.db.raw_migrations import sql_migration

ID = "2026-12-06T18:00:00:000000"
VERSION = "1.38.0"
DESCRIPTION = "JMAP push subscriptions (Web Push), removed with their app password or user"

FORWARDS_SQL = r"""
CREATE TABLE IF NOT EXISTS push_subscription (
    id bigserial PRIMARY KEY,
    user_id integer NOT NULL REFERENCES app_user (id) ON DELETE CASCADE,
    app_password_id bigint REFERENCES app_password (id) ON DELETE CASCADE,
    device_client_id text NOT NULL,
    url text NOT NULL,
    p256dh text NOT NULL,
    auth text NOT NULL,
    types text[],
    expires_at timestamptz NOT NULL,
    verification_code text NOT NULL,
    verified boolean NOT NULL DEFAULT false,
    verification_sent_at timestamptz,
    pushed_states jsonb NOT NULL DEFAULT '{}'::jsonb,
    next_push_at timestamptz NOT NULL DEFAULT now(),
    failures integer NOT NULL DEFAULT 0,
    last_pushed_at timestamptz,
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS push_subscription_user ON push_subscription (user_id);
CREATE INDEX IF NOT EXISTS push_subscription_password ON push_subscription (app_password_id);

CREATE OR REPLACE FUNCTION plmail_push_password_revoked() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM push_subscription WHERE app_password_id = NEW.id;
    RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION plmail_push_user_disabled() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM push_subscription WHERE user_id = NEW.id;
    RETURN NULL;
END $$;

DROP TRIGGER IF EXISTS push_subscription_password_revoked ON app_password;
CREATE TRIGGER push_subscription_password_revoked
    AFTER UPDATE OF revoked_at ON app_password
    FOR EACH ROW WHEN (NEW.revoked_at IS NOT NULL AND OLD.revoked_at IS NULL)
    EXECUTE FUNCTION plmail_push_password_revoked();

DROP TRIGGER IF EXISTS push_subscription_user_disabled ON app_user;
CREATE TRIGGER push_subscription_user_disabled
    AFTER UPDATE OF disabled_at ON app_user
    FOR EACH ROW WHEN (NEW.disabled_at IS NOT NULL AND OLD.disabled_at IS NULL)
    EXECUTE FUNCTION plmail_push_user_disabled();
"""

BACKWARDS_SQL = r"""
DROP TRIGGER IF EXISTS push_subscription_user_disabled ON app_user;
DROP TRIGGER IF EXISTS push_subscription_password_revoked ON app_password;
DROP FUNCTION IF EXISTS plmail_push_user_disabled();
DROP FUNCTION IF EXISTS plmail_push_password_revoked();
DROP TABLE IF EXISTS push_subscription;
"""

forwards = sql_migration(ID, DESCRIPTION, FORWARDS_SQL, BACKWARDS_SQL)
